"""The one seeded percentile bootstrap of every benchmark.

:func:`bootstrap` resamples the items of a task (documents, pairs, generations: whatever the benchmark's resampling
unit is) with replacement, re-runs the benchmark's statistic on every resample and returns, per statistic, the central
95% percentile interval and the bootstrap standard error (the standard deviation of the resampled values, ddof=1).
Resamples are drawn from ``numpy.random.default_rng(seed)`` as one ``(iters, n)`` matrix of indices, so a run is
reproducible and independent of the order in which lm_eval delivered the items (callers sort items by key first).

A :class:`BlockStatistic` (a statistic of numeric columns written with numpy along the last axis) is run once per
block of resamples, on columns shaped ``(resamples, n)``, instead of once per resample: the same values, bit for bit
(each resample's row is reduced along its own contiguous axis, as its columns alone would be), at a fraction of the
Python calls.

``strata`` resamples within groups (each group with its own generator seeded with ``seed``), for statistics defined
on one group at a time, e.g. the mean score of one GEST stereotype over that stereotype's samples.

:func:`paired_bootstrap` is the same resampler for two runs on the same items (row ``i`` of both data sets is the
same item): every resample takes the same rows from both, and the interval is that of the difference
``statistic(A[rows]) - statistic(B[rows])``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_ITERS = 1000
DEFAULT_SEED = 1234
DEFAULT_LEVEL = 0.95
#: cells (resamples x rows) of one column of a :class:`BlockStatistic`'s block: 8 MB of float64 per column
BLOCK_CELLS = 1_000_000

#: a sequence of items, or equal-length numpy columns (resampled row-wise, faster for numeric statistics)
Data = Sequence[Any] | Mapping[str, np.ndarray]
Statistic = Callable[[Any], Mapping[str, float]]


@dataclass(frozen=True)
class Interval:
    """A bootstrap confidence interval and the bootstrap standard error of one statistic; ``undefined`` resamples (of
    ``resamples``) gave a non-finite value and are not part of the interval."""

    low: float
    high: float
    stderr: float
    undefined: int = 0
    resamples: int = 0


NAN_INTERVAL = Interval(float("nan"), float("nan"), float("nan"))


@dataclass(frozen=True)
class BlockStatistic:
    """A statistic of numeric columns that also takes a block of resamples at once.

    ``of_block(columns)`` gets every column shaped ``(..., n)``: ``(n,)`` for one data set, ``(k, n)`` for ``k``
    resamples. It returns ``{name: values}`` shaped ``(...)``, each resample's value computed from its own row alone and
    reduced along the last axis only, so that row ``r`` of a block gives exactly what resample ``r`` alone gives.
    Called like any statistic (one data set), it returns ``{name: float}``."""

    of_block: Callable[[Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]

    def __call__(self, columns: Mapping[str, np.ndarray]) -> dict[str, float]:
        return {name: float(value) for name, value in self.of_block(columns).items()}


def resample_indices(n: int, iters: int = DEFAULT_ITERS, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``iters`` rows of ``n`` indices drawn with replacement from a generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(iters, n))


def percentile_interval(samples: Sequence[float] | np.ndarray, level: float = DEFAULT_LEVEL) -> Interval:
    """The central ``level`` interval and standard deviation of the finite bootstrap ``samples``, with the number of
    non-finite ones (``undefined``) that the interval leaves out."""
    values = np.asarray(samples, dtype=float)
    total = int(values.size)
    values = values[np.isfinite(values)]
    undefined = total - int(values.size)
    if values.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), undefined, total)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    stderr = float(np.std(values, ddof=1)) if values.size > 1 else float("nan")
    return Interval(float(low), float(high), stderr, undefined, total)


def data_length(data: Data) -> int:
    """Number of rows: items, or the length of the (equal-length) columns."""
    if isinstance(data, Mapping):
        return len(next(iter(data.values()))) if data else 0
    return len(data)


def take_rows(data: Data, rows: np.ndarray) -> Any:
    """The given rows (with repetition) of a list of items or of every column."""
    if isinstance(data, Mapping):
        return {name: np.asarray(column)[rows] for name, column in data.items()}
    return [data[i] for i in rows]


def _resamples(n: int, strata: Sequence[Hashable] | None, iters: int, seed: int) -> np.ndarray:
    """Index matrix (iters, n): plain resampling, or resampling within each stratum (strata in sorted order)."""
    if strata is None:
        return resample_indices(n, iters, seed)
    labels = np.asarray(strata)
    blocks = []
    for label in sorted(set(labels.tolist())):
        members = np.flatnonzero(labels == label)
        blocks.append(members[resample_indices(len(members), iters, seed)])
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((iters, 0), dtype=int)


def bootstrap(
    data: Data,
    statistic: Statistic,
    *,
    strata: Sequence[Hashable] | None = None,
    iters: int = DEFAULT_ITERS,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> dict[str, Interval]:
    """Percentile-bootstrap interval and standard error of every value ``statistic(resample)`` returns.

    ``statistic`` receives data of the same kind as ``data`` (a list of items, or a dict of columns) and returns
    ``{name: value}``; non-finite resampled values are left out of the percentiles and counted
    (:attr:`Interval.undefined`). Empty data gives no intervals.
    """
    return _intervals((data,), statistic, strata, iters, seed, level)


def paired_bootstrap(
    data_a: Data,
    data_b: Data,
    statistic: Statistic,
    *,
    strata: Sequence[Hashable] | None = None,
    iters: int = DEFAULT_ITERS,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> dict[str, Interval]:
    """Percentile-bootstrap interval of ``statistic(A) - statistic(B)`` for two runs on the same items.

    Row ``i`` of ``data_a`` and ``data_b`` is the same item; each resample draws the same rows from both (within
    ``strata`` if given, exactly as :func:`bootstrap` does), so the interval reflects the pairing.
    """
    if data_length(data_a) != data_length(data_b):
        raise ValueError(f"paired data of different lengths: {data_length(data_a)} and {data_length(data_b)}")
    return _intervals((data_a, data_b), statistic, strata, iters, seed, level)


def _intervals(
    datas: tuple[Data, ...],
    statistic: Statistic,
    strata: Sequence[Hashable] | None,
    iters: int,
    seed: int,
    level: float,
) -> dict[str, Interval]:
    """Intervals of ``statistic`` of one data set, or of the difference of two, on shared resampled rows."""
    n = data_length(datas[0])
    if n == 0:
        return {}
    resamples = _resamples(n, strata, iters, seed)
    samples: dict[str, list[float]] = {}
    if isinstance(statistic, BlockStatistic) and all(isinstance(data, Mapping) for data in datas):
        step = max(1, BLOCK_CELLS // n)
        for start in range(0, len(resamples), step):
            rows = resamples[start : start + step]
            block = _differences([statistic.of_block(take_rows(data, rows)) for data in datas])
            for name, values in block.items():
                samples.setdefault(name, []).extend(np.asarray(values, dtype=float).reshape(-1).tolist())
    else:
        for rows in resamples:
            for name, value in _differences([statistic(take_rows(data, rows)) for data in datas]).items():
                samples.setdefault(name, []).append(float(value))
    return {name: percentile_interval(values, level) for name, values in samples.items()}


def _differences(values: list[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The statistic's values of one data set, or those of the first minus the second's (NaN where it has none)."""
    if len(values) == 1:
        return values[0]
    return {name: value - values[1].get(name, float("nan")) for name, value in values[0].items()}
