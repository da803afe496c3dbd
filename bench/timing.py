"""How the benchmarks time and summarise: a warm-up then repeated runs; median, min and max; their table cell."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

#: timed runs after the warm-up
REPETITIONS = 3


def timed(function: Callable[[], Any], repetitions: int = REPETITIONS) -> tuple[list[float], Any]:
    """One warm-up call, then ``repetitions`` timed calls; (seconds of each, last result)."""
    result = function()
    seconds = []
    for _ in range(repetitions):
        start = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - start)
    return seconds, result


def spread(values: list[float]) -> dict[str, float]:
    """Median, min and max of repeated measurements."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def cell(s: dict[str, float], digits: int = 2) -> str:
    """``median (min–max)``."""
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"
