"""Paired comparisons of two runs on the same items: a difference with a paired bootstrap CI and a p-value.

Two runs are paired when they scored the same items: two models on one benchmark, or one model on two translations of
the same items (parallel ids). For a metric ``M`` computed by a benchmark's :class:`~lm_eval_stereo.core.metrics.
Resampling` statistic, with rows ``A_i``, ``B_i`` of the two runs for matched item ``i`` (``i = 1..n``):

- difference ``d = M(A) - M(B)`` on the matched items, and its 95% percentile interval from the one seeded resampler
  (:func:`lm_eval_stereo.core.bootstrap.paired_bootstrap`: the same resampled items for both runs, within the
  statistic's strata where its own bootstrap has them);
- p-value, exact McNemar test where ``M`` is the mean of a 0/1 item score (up to scale: StereoSet's SS, GerBBQ+
  accuracy on single answers, S_JSD's B.S_JSD and CPS): with ``b`` items scored high in A and low in B and ``c`` the
  reverse, ``p = min(1, 2 · P(X ≤ min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)`` (McNemar 1947; Edwards' exact form);
- otherwise a paired sign-flip permutation test: under H0 (the two runs are exchangeable within each item) each
  item's two rows are swapped with probability 1/2, ``d*`` recomputed, and ``p`` is the share of permutations with
  ``|d*| ≥ |d|``, counted with Besag and Clifford's (1991) sequential rule: stop once :data:`STOP_AFTER` permutations
  reached ``|d|`` (``p = h/k`` after ``k`` permutations), else ``p = (g + 1)/(P + 1)`` after all ``P`` (seeded);
- :func:`holm` adjusts the p-values of all comparisons shown for multiple testing (Holm 1979).

"Mean of a 0/1 item score" is checked on the data, not declared: ``M`` of every single row takes at most two
values and the mean of those equals ``M`` of the whole run (for both runs). Rows are the benchmark's own resampling
rows (``Resampling.data`` of one item at a time); a statistic whose data is not one row per item is not compared.
:class:`PairedResult` and :class:`Paired` hold a report's comparisons (built by
:mod:`lm_eval_stereo.report.comparisons`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from lm_eval_stereo.core.bootstrap import (
    DEFAULT_ITERS,
    DEFAULT_SEED,
    Data,
    data_length,
    paired_bootstrap,
)
from lm_eval_stereo.core.metrics import Resampling

#: permutations of the sign-flip test at most, and the exceedances after which it stops (Besag & Clifford 1991)
PERMUTATIONS = 9999
STOP_AFTER = 20
#: significance level of the Holm-adjusted p-values marked in the report
ALPHA = 0.05
#: relative tolerance of "the mean of the single-item values equals the statistic" and of |d*| ≥ |d|
TOLERANCE = 1e-9

MCNEMAR = "exact McNemar"
SIGN_FLIP = "sign-flip permutation"


@dataclass(frozen=True)
class Comparison:
    """Run A against run B on one metric over ``n`` matched items: ``difference = A - B`` with its paired 95%
    bootstrap interval, the test's p-value and its Holm-adjusted value among the comparisons shown."""

    metric: str
    difference: float
    low: float
    high: float
    p: float
    test: str
    n: int
    permutations: int = 0
    #: McNemar: items scored high in A only, in B only
    discordant: tuple[int, int] | None = None
    #: McNemar: the items whose 0/1 score differs, as (key, value in A, value in B)
    flips: tuple[tuple[str, float, float], ...] = ()
    p_holm: float = math.nan
    #: bootstrap resamples where the difference was undefined (not finite), left out of the interval
    undefined: int = 0

    @property
    def significant(self) -> bool:
        return self.p_holm < ALPHA


@dataclass
class Aligned:
    """The rows of two runs for their matched items, row ``i`` of both the same item (key ``keys[i]``)."""

    keys: list[str]
    data_a: Data
    data_b: Data
    strata: list[Hashable] | None
    #: single-row data of each run, for the single-item values
    rows_a: list[Data] = field(repr=False)
    rows_b: list[Data] = field(repr=False)
    #: matched items left out: no row in one of the runs (e.g. unscored), or different strata
    left_out: int = 0


class NotComparable(ValueError):
    """A statistic the paired machinery cannot compare (the message says why)."""


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts: ``min(1, 2 · P(X ≤ min(b, c)))``,
    ``X ~ Binomial(b + c, 1/2)``; 1 without discordant items."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values: the ``j``-th smallest of ``m`` becomes ``max_{i ≤ j} (m - i + 1) p_(i)``,
    capped at 1. NaN p-values (nothing tested) stay NaN and do not count in ``m``."""
    order = sorted((p, index) for index, p in enumerate(pvalues) if not math.isnan(p))
    adjusted = [math.nan] * len(pvalues)
    running, m = 0.0, len(order)
    for rank, (p, index) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


def _concat(rows: Sequence[Data]) -> Data:
    """Single-row data sets as one: columns concatenated, or items listed."""
    if rows and isinstance(rows[0], Mapping):
        names = list(rows[0])
        return {name: np.concatenate([np.asarray(row[name]) for row in rows]) for name in names}
    return [item for row in rows for item in row]


def _close(x: float, y: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _single_rows(items: Sequence[dict[str, Any]], resampling: Resampling) -> list[tuple[Data, Hashable | None]]:
    """Per item its row (None when the statistic leaves it out) and stratum; refuses data that is not row-wise."""
    rows: list[tuple[Data, Hashable | None]] = []
    for item in items:
        data = resampling.data([item])
        length = data_length(data)
        if length > 1:
            raise NotComparable("its data has more than one row per item")
        stratum = None
        if length and resampling.strata is not None:
            stratum = resampling.strata([item])[0]
        rows.append((data if length else None, stratum))
    return rows


def _run_rows(items: Mapping[str, dict[str, Any]], resampling: Resampling) -> dict[str, tuple[Data | None, Any]]:
    """Per key the item's row and stratum; the statistic of the rows taken one item at a time must equal the
    benchmark's own on the whole run."""
    rows = dict(zip(items, _single_rows(list(items.values()), resampling)))
    whole = resampling.data(list(items.values()))
    if data_length(whole) == 0:
        raise NotComparable("a run has no interval for it (nothing resampled)")
    kept = [row for row, _ in rows.values() if row is not None]
    own, joined = resampling.statistic(whole), resampling.statistic(_concat(kept))
    if set(own) != set(joined) or not all(_close(float(own[name]), float(joined[name])) for name in own):
        raise NotComparable("its rows do not match the items one to one")
    return rows


def align(
    items_a: Mapping[str, dict[str, Any]], items_b: Mapping[str, dict[str, Any]], resampling: Resampling
) -> Aligned:
    """The rows of the items both runs have (by key, in key order) for ``resampling``'s statistic."""
    keys = sorted(set(items_a) & set(items_b))
    if not keys:
        raise NotComparable("no items in common")
    rows_a, rows_b = _run_rows(items_a, resampling), _run_rows(items_b, resampling)
    kept = [
        key
        for key in keys
        if rows_a[key][0] is not None and rows_b[key][0] is not None and rows_a[key][1] == rows_b[key][1]
    ]
    if not kept:
        raise NotComparable("no matched item is scored in both runs")
    a = [rows_a[key][0] for key in kept]
    b = [rows_b[key][0] for key in kept]
    strata = [rows_a[key][1] for key in kept] if resampling.strata is not None else None
    return Aligned(kept, _concat(a), _concat(b), strata, a, b, len(keys) - len(kept))


def _swapped(data_a: Data, data_b: Data, swap: np.ndarray) -> tuple[Data, Data]:
    """Both data sets with the rows of the items in ``swap`` exchanged."""
    if isinstance(data_a, Mapping):
        first, second = {}, {}
        for name, column_a in data_a.items():
            column_a, column_b = np.asarray(column_a), np.asarray(data_b[name])
            mask = swap.reshape((-1,) + (1,) * (column_a.ndim - 1))
            first[name] = np.where(mask, column_b, column_a)
            second[name] = np.where(mask, column_a, column_b)
        return first, second
    return (
        [b if s else a for a, b, s in zip(data_a, data_b, swap)],
        [a if s else b for a, b, s in zip(data_a, data_b, swap)],
    )


def sign_flip_pvalues(
    data_a: Data,
    data_b: Data,
    statistic: Any,
    observed: Mapping[str, float],
    *,
    permutations: int = PERMUTATIONS,
    stop_after: int = STOP_AFTER,
    seed: int = DEFAULT_SEED,
) -> dict[str, tuple[float, int]]:
    """``{name: (p, permutations used)}`` of the paired sign-flip test of every observed difference (see the module
    docstring); a non-finite permuted difference counts as reaching the observed one (conservative)."""
    rng = np.random.default_rng(seed)
    n = data_length(data_a)
    exceed = dict.fromkeys(observed, 0)
    result: dict[str, tuple[float, int]] = {}
    pending = [name for name, value in observed.items() if math.isfinite(value)]
    result.update({name: (math.nan, 0) for name in observed if name not in pending})
    for k in range(1, permutations + 1):
        if not pending:
            break
        swap = rng.random(n) < 0.5
        first, second = _swapped(data_a, data_b, swap)
        values_a, values_b = statistic(first), statistic(second)
        for name in list(pending):
            permuted = float(values_a.get(name, math.nan)) - float(values_b.get(name, math.nan))
            threshold = abs(observed[name]) * (1 - TOLERANCE) - TOLERANCE
            if not math.isfinite(permuted) or abs(permuted) >= threshold:
                exceed[name] += 1
            if exceed[name] >= stop_after:
                result[name] = (exceed[name] / k, k)
                pending.remove(name)
    for name in pending:
        result[name] = ((exceed[name] + 1) / (permutations + 1), permutations)
    return result


def single_values(rows: Sequence[Data], statistic: Any, name: str) -> np.ndarray:
    """The statistic's ``name`` on each single row (NaN where it gives none)."""
    return np.array([float(statistic(row).get(name, math.nan)) for row in rows])


def _is_mean(values_a: np.ndarray, values_b: np.ndarray, aligned: Aligned, statistic: Any, name: str) -> bool:
    """Whether the metric equals the mean of its single-item values on both runs and on two seeded mixtures of them
    (items' rows swapped at random, as the permutation test would)."""
    rng = np.random.default_rng(DEFAULT_SEED)
    datas = [(aligned.data_a, values_a), (aligned.data_b, values_b)]
    for _ in range(2):
        swap = rng.random(len(values_a)) < 0.5
        first, _second = _swapped(aligned.data_a, aligned.data_b, swap)
        datas.append((first, np.where(swap, values_b, values_a)))
    return all(_close(float(values.mean()), float(statistic(data).get(name, math.nan))) for data, values in datas)


def _binary(values_a: np.ndarray, values_b: np.ndarray) -> tuple[float, float] | None:
    """(low, high) when both runs' single-item values take at most these two values."""
    both = np.concatenate([values_a, values_b])
    if not np.all(np.isfinite(both)) or len(set(both.tolist())) > 2:
        return None
    distinct = sorted(set(both.tolist()))
    return distinct[0], distinct[-1]


def compare(
    aligned: Aligned,
    resampling: Resampling,
    names: Sequence[str],
    *,
    iters: int = DEFAULT_ITERS,
    seed: int = DEFAULT_SEED,
    permutations: int = PERMUTATIONS,
) -> list[Comparison]:
    """Run A against run B on the aligned items for each of ``names`` the statistic computes."""
    statistic = resampling.statistic
    whole_a, whole_b = statistic(aligned.data_a), statistic(aligned.data_b)
    names = [name for name in names if name in whole_a and name in whole_b]
    intervals = paired_bootstrap(
        aligned.data_a, aligned.data_b, statistic, strata=aligned.strata, iters=iters, seed=seed
    )
    observed = {name: float(whole_a[name]) - float(whole_b[name]) for name in names}
    comparisons: dict[str, Comparison] = {}
    permuted: list[str] = []
    n = len(aligned.keys)
    for name in names:
        interval = intervals.get(name)
        low, high = (interval.low, interval.high) if interval else (math.nan, math.nan)
        undefined = interval.undefined if interval else 0
        base = Comparison(name, observed[name], low, high, math.nan, SIGN_FLIP, n, undefined=undefined)
        values_a = single_values(aligned.rows_a, statistic, name)
        values_b = single_values(aligned.rows_b, statistic, name)
        levels = _binary(values_a, values_b)
        if levels is None or not _is_mean(values_a, values_b, aligned, statistic, name):
            comparisons[name] = base
            permuted.append(name)
            continue
        low_value, high_value = levels
        a_only = int(np.sum((values_a == high_value) & (values_b == low_value))) if low_value < high_value else 0
        b_only = int(np.sum((values_a == low_value) & (values_b == high_value))) if low_value < high_value else 0
        flips = tuple((key, float(x), float(y)) for key, x, y in zip(aligned.keys, values_a, values_b) if x != y)
        comparisons[name] = replace(
            base, p=mcnemar_exact(a_only, b_only), test=MCNEMAR, discordant=(a_only, b_only), flips=flips
        )
    if permuted:
        pvalues = sign_flip_pvalues(
            aligned.data_a,
            aligned.data_b,
            statistic,
            {name: observed[name] for name in permuted},
            permutations=permutations,
            seed=seed,
        )
        for name in permuted:
            p, used = pvalues[name]
            comparisons[name] = replace(comparisons[name], p=p, permutations=used)
    return [comparisons[name] for name in names]


def with_holm(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with their Holm-adjusted p-values (over all of them)."""
    adjusted = holm([comparison.p for comparison in comparisons])
    return [replace(comparison, p_holm=p) for comparison, p in zip(comparisons, adjusted)]


@dataclass(frozen=True)
class PairedResult:
    """Comparisons of two runs on one task (models) or of one model on two language tasks (languages): A − B."""

    task: str
    model: str
    a: str
    b: str
    comparisons: tuple[Comparison, ...]
    #: matched items left out (unscored in one of the runs)
    left_out: int = 0
    #: the languages of ``a`` and ``b`` as their tasks recorded them (a language comparison; empty for models)
    languages: tuple[str, ...] = ()


@dataclass(frozen=True)
class RankCorrelation:
    """One model's ranking in language ``a`` (task ``task_a``) against the reference language ``b``'s (``task_b``):
    Spearman's ``rho`` over ``units`` ranked units, its 95% bootstrap interval, the ``n`` matched items it rests on
    and the resamples where it was undefined."""

    benchmark: str
    model: str
    task_a: str
    task_b: str
    languages: tuple[str, str]
    rho: float
    low: float
    high: float
    units: int
    n: int
    undefined: int = 0


@dataclass
class Paired:
    """Every paired comparison of a report, the runs without per-item samples and the comparisons not made."""

    models: list[PairedResult] = field(default_factory=list)
    languages: list[PairedResult] = field(default_factory=list)
    #: each language's ranking against the reference language's, where a metric set declares one
    rankings: list[RankCorrelation] = field(default_factory=list)
    #: model label -> results files of its runs with a plugin task but without --log_samples
    without_samples_by_model: dict[str, list[str]] = field(default_factory=dict)
    #: comparisons that could not be made, and why
    notes: list[str] = field(default_factory=list)
    permutations: int = PERMUTATIONS
    iters: int = DEFAULT_ITERS
    seed: int = DEFAULT_SEED

    @property
    def without_samples(self) -> list[str]:
        """The "model (results file)" of every run without per-item samples."""
        return [f"{label} ({path})" for label, paths in self.without_samples_by_model.items() for path in paths]

    def significant(self, task: str, metric: str, model: str) -> list[tuple[str, Comparison]]:
        """The other models that ``model`` differs from on ``metric`` of ``task`` (Holm-adjusted), as (other model,
        comparison of model − other)."""
        found = []
        for result in self.models:
            if result.task != task or model not in (result.a, result.b):
                continue
            for comparison in result.comparisons:
                if comparison.metric == metric and comparison.significant:
                    other, sign = (result.b, 1.0) if result.a == model else (result.a, -1.0)
                    found.append((other, _signed(comparison, sign)))
        return found


def _signed(comparison: Comparison, sign: float) -> Comparison:
    if sign > 0:
        return comparison
    return replace(comparison, difference=-comparison.difference, low=-comparison.high, high=-comparison.low)
