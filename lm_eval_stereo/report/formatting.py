"""How numbers, estimates and metric names are written in every output of the report."""

from __future__ import annotations

import math
from typing import Any

from lm_eval_stereo.report.ideals import Ideal
from lm_eval_stereo.report.model import Estimate
from lm_eval_stereo.report.runs import is_nan, is_number


def format_value(value: Any, sign: str = "") -> str:
    """A number as the tables show it: integers as they are, floats with four decimals (three significant digits
    below 0.001 in magnitude, e.g. an S_JSD of 2.31e-05), NaN as ``nan``; ``sign="+"`` always shows the sign."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:{sign}.3g}" if 0 < abs(value) < 1e-3 else f"{value:{sign}.4f}"
    return str(value)


def format_estimate(estimate: Estimate, ideal: Ideal | None, stderr: bool = True) -> str:
    """``value ± stderr [low, high] Δ+d``: stderr (unless ``stderr`` is false) and CI where the results have them,
    Δ for a metric whose ``ideal`` is a target."""
    text = format_value(estimate.value)
    if text == "nan" and all(is_nan(bound) for bound in (estimate.low, estimate.high)):
        return text
    if stderr and estimate.stderr is not None:
        text += f" ± {format_value(estimate.stderr)}"
    if estimate.low is not None and estimate.high is not None:
        text += f" [{format_value(estimate.low)}, {format_value(estimate.high)}]"
    if ideal and is_number(estimate.value) and (distance := ideal.distance(float(estimate.value))) is not None:
        text += f" Δ{format_value(distance, '+')}"
    return text


def metric_header(name: str, ideal: Ideal | None) -> str:
    """Column title: the name with ↑/↓ where the ideal is an end of the range, ``(ideal x)`` where it is not."""
    if ideal is None:
        return name
    return f"{name} {ideal.arrow}" if ideal.arrow else f"{name} (ideal {ideal.value:g})"
