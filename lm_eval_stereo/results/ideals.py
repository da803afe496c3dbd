"""How the report reads a metric's ideal: an end of its range, or a value inside it.

Each benchmark declares its metrics once, in Python (:mod:`lm_eval_stereo.core.metrics`): "higher"/"lower" is better
where the ideal is an end of the range (LMS, accuracy, undetermined share), "ideal" with a value where it lies inside
the range (SS 50, bias scores 0 on [-1, 1], g_s 1, female share 0.5). The report never gives the latter an arrow: it
shows the signed distance to the ideal, since a value on either side of it is a bias. Counts and text metrics have
no direction. :mod:`lm_eval_stereo.results.declarations` finds a task's declarations in its results file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower", "target"]


@dataclass(frozen=True)
class Ideal:
    """How a metric is best: ``higher``/``lower``, or ``target`` with the ideal ``value`` inside its range."""

    direction: Direction
    value: float | None = None

    @property
    def arrow(self) -> str:
        """``↑`` / ``↓`` for metrics best at an end of their range; nothing for target metrics."""
        return {"higher": "↑", "lower": "↓"}.get(self.direction, "")

    def distance(self, value: float) -> float | None:
        """Signed distance ``value - ideal`` of a target metric (None for the others and non-finite values)."""
        if self.direction != "target" or self.value is None or not math.isfinite(value):
            return None
        return value - self.value

    def describe(self) -> str:
        """One phrase for captions: the ideal and how to read the distance to it."""
        if self.direction == "target":
            return f"ideal {self.value:g}, in the middle of the range: either side is a bias (distance Δ shown)"
        return f"{self.direction} is better"
