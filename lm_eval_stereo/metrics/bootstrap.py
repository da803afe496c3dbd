"""Seeded percentile-bootstrap confidence intervals shared by every benchmark."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")

DEFAULT_ITERS = 1000
DEFAULT_SEED = 1234
DEFAULT_LEVEL = 0.95


def resample_indices(n: int, iters: int = DEFAULT_ITERS, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``iters`` rows of ``n`` indices drawn with replacement from a generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(iters, n))


def percentile_interval(samples: Sequence[float] | np.ndarray, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """The central ``level`` interval of the finite bootstrap ``samples`` (NaN, NaN when none is finite)."""
    values = np.asarray(samples, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_ci(
    items: Sequence[T],
    statistic: Callable[[list[T]], float],
    *,
    iters: int = DEFAULT_ITERS,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> tuple[float, float]:
    """Percentile CI of ``statistic`` over ``items`` resampled with replacement (items are the resampling unit)."""
    if len(items) == 0:
        return float("nan"), float("nan")
    samples = [statistic([items[i] for i in row]) for row in resample_indices(len(items), iters, seed)]
    return percentile_interval(samples, level)


def bootstrap_ci_columns(
    columns: dict[str, np.ndarray],
    statistic: Callable[[dict[str, np.ndarray]], np.ndarray],
    *,
    iters: int = DEFAULT_ITERS,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> tuple[float, float]:
    """Vectorised variant: ``statistic`` maps columns of shape (iters, n) to ``iters`` values at once."""
    n = len(next(iter(columns.values())))
    if n == 0:
        return float("nan"), float("nan")
    idx = resample_indices(n, iters, seed)
    return percentile_interval(statistic({k: np.asarray(v)[idx] for k, v in columns.items()}), level)
