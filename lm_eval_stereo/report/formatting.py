"""How numbers, estimates and metric names are written in every output of the report.

Tables show three significant digits (``57.3 [55.0, 59.6]``, ``0.912 [0.900, 0.925]``): an estimate's value, CI,
stderr and distance share the decimals of its largest magnitude, so that they line up; the JSON keeps full precision.
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


def decimals(*values: Any) -> int | None:
    """Decimals that give the largest finite magnitude among ``values`` :data:`DIGITS` significant digits; None when
    it is below :data:`SMALL` (scientific notation), :data:`DIGITS` when every value is 0 or not finite."""
    scale = max((abs(float(v)) for v in values if is_number(v) and math.isfinite(v)), default=0.0)
    if scale == 0:
        return DIGITS
    if scale < SMALL:
        return None
    return max(0, DIGITS - 1 - math.floor(math.log10(scale)))


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


def format_estimate(estimate: Estimate, ideal: Ideal | None, stderr: bool = True) -> str:
    """``value ± stderr [low, high] Δ+d``: stderr (unless ``stderr`` is false) and CI where the results have them,
    Δ for a metric whose ``ideal`` is a target; all with the decimals of the largest magnitude among them."""
    value = estimate.value
    if is_nan(value) and all(bound is None or is_nan(bound) for bound in (estimate.low, estimate.high)):
        return "nan"
    places = decimals(value, estimate.low, estimate.high)
    text = format_value(value, places=places)
    if stderr and estimate.stderr is not None:
        text += f" ± {format_value(estimate.stderr, places=places)}"
    if estimate.low is not None and estimate.high is not None:
        text += f" [{format_value(estimate.low, places=places)}, {format_value(estimate.high, places=places)}]"
    if ideal and is_number(value) and (distance := ideal.distance(float(value))) is not None:
        text += f" Δ{format_value(distance, '+', places)}"
    return text


def metric_header(name: str, ideal: Ideal | None) -> str:
    """Column title: the name with ↑/↓ where the ideal is an end of the range, ``(ideal x)`` where it is not."""
    if ideal is None:
        return name
    return f"{name} {ideal.arrow}" if ideal.arrow else f"{name} (ideal {ideal.value:g})"
