"""How numbers, estimates and metric names are written in every output of the report.

Tables show three significant digits (``57.3 [55.0, 59.6]``, ``0.912 [0.900, 0.925]``): an estimate's value, CI,
stderr and distance share the decimals of its largest magnitude, so that they line up; the JSON keeps full precision.
A CI read against a middle ideal gets as many more decimals as it takes for each bound that differs from the ideal to
be written differently from it (SS 55.0 with a lower bound of 50.01: ``55.00 [50.01, 60.00]``, not ``[50.0, 60.0]``,
which would hide on which side of 50 the CI lies).
"""

from __future__ import annotations

import math
from typing import Any

from lm_eval_stereo.report.model import Estimate
from lm_eval_stereo.results.ideals import Ideal
from lm_eval_stereo.results.run import is_nan, is_number

#: significant digits of the tables
DIGITS = 3
#: below this magnitude a number is written in scientific notation (an S_JSD of 2.31e-05)
SMALL = 1e-3
#: the most decimals a bound gets to be told apart from its ideal (beyond, it is written as the ideal)
MAX_PLACES = 12


def decimals(*values: Any) -> int | None:
    """Decimals that give the largest finite magnitude among ``values`` :data:`DIGITS` significant digits; None when
    it is below :data:`SMALL` (scientific notation), :data:`DIGITS` when every value is 0 or not finite."""
    scale = max((abs(float(v)) for v in values if is_number(v) and math.isfinite(v)), default=0.0)
    if scale == 0:
        return DIGITS
    if scale < SMALL:
        return None
    return max(0, DIGITS - 1 - math.floor(math.log10(scale)))


def places_against(places: int | None, ideal: Ideal | None, *bounds: Any) -> int | None:
    """``places``, or more, up to :data:`MAX_PLACES`: enough decimals that every finite bound that differs from a
    middle ``ideal`` is not written as the ideal (50.01 against 50 with one decimal: two). Scientific notation
    (None) and ideals that are an end of the range keep ``places``."""
    if places is None or ideal is None or ideal.direction != "target" or ideal.value is None:
        return places
    target = float(ideal.value)
    close = [float(b) for b in bounds if is_number(b) and math.isfinite(b) and float(b) != target]
    while places < MAX_PLACES and any(float(f"{b:.{places}f}") == target for b in close):
        places += 1
    return places


def format_value(value: Any, sign: str = "", places: int | None = -1) -> str:
    """A number as the tables show it: integers as they are, floats with :data:`DIGITS` significant digits (or
    ``places`` decimals; None: scientific notation), NaN as ``nan``; ``sign="+"`` always shows the sign."""
    if not isinstance(value, float):
        return str(value)
    if math.isnan(value):
        return "nan"
    if places == -1:
        places = decimals(value)
    return f"{value:{sign}.{DIGITS}g}" if places is None else f"{value:{sign}.{places}f}"


def format_estimate(estimate: Estimate, ideal: Ideal | None, stderr: bool = True, delta: bool = True) -> str:
    """``value ± stderr [low, high] Δ+d``: stderr (unless ``stderr`` is false) and CI where the results have them,
    Δ for a metric whose ``ideal`` is a target (unless ``delta`` is false); all with the decimals of the largest
    magnitude among them, or more where a bound would otherwise be written as the ideal (:func:`places_against`)."""
    value = estimate.value
    if is_nan(value) and all(bound is None or is_nan(bound) for bound in (estimate.low, estimate.high)):
        return "nan"
    places = places_against(decimals(value, estimate.low, estimate.high), ideal, estimate.low, estimate.high)
    text = format_value(value, places=places)
    if stderr and estimate.stderr is not None:
        text += f" ± {format_value(estimate.stderr, places=places)}"
    if estimate.low is not None and estimate.high is not None:
        text += f" [{format_value(estimate.low, places=places)}, {format_value(estimate.high, places=places)}]"
    if delta and ideal and is_number(value) and (distance := ideal.distance(float(value))) is not None:
        text += f" Δ{format_value(distance, '+', places)}"
    return text


def metric_header(name: str, ideal: Ideal | None) -> str:
    """Column title: the name with ↑/↓ where the ideal is an end of the range, ``(ideal x)`` where it is not."""
    if ideal is None:
        return name
    return f"{name} {ideal.arrow}" if ideal.arrow else f"{name} (ideal {ideal.value:g})"
