"""How the benchmarks summarise repeated timings: median, min and max, and their table cell."""

from __future__ import annotations

import statistics


def spread(values: list[float]) -> dict[str, float]:
    """Median, min and max of repeated measurements."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def cell(s: dict[str, float], digits: int = 2) -> str:
    """``median (min–max)``."""
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"
