"""A language's ranking against the reference language's, where a metric set declares one
(:class:`~lm_eval_stereo.core.metrics.RankAgreement`): Spearman's rank correlation with a bootstrap interval.

For one model and two languages A (any) and R (the reference), on the items both scored (matched as the paired
language comparisons match them, :func:`lm_eval_stereo.report.paired.align`), with ``x_u`` and ``y_u`` the declared
metrics of unit ``u`` computed by the benchmark's resampling statistic on A's and R's rows:

    rho = Spearman(x, y) = Pearson correlation of the ranks of x and of y (ties get their mean rank),

over the units with a finite value in both (NaN with fewer than 3). The 95% interval is the percentile interval of
``rho`` over bootstrap resamples of the matched items (the same items for both languages, within the statistic's
strata, from the one seeded resampler :func:`lm_eval_stereo.core.bootstrap.bootstrap`); resamples where it is undefined
are counted, not used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS, DEFAULT_SEED, Data, bootstrap
from lm_eval_stereo.core.metrics import Resampling
from lm_eval_stereo.report.paired import Aligned

#: fewest units with a value in both languages for a rank correlation
MIN_UNITS = 3


def spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float, int]:
    """(Spearman's rho, units used) over the pairs where both values are finite; NaN with fewer than
    :data:`MIN_UNITS` or a constant ranking."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    both = np.isfinite(x) & np.isfinite(y)
    units = int(both.sum())
    if units < MIN_UNITS:
        return math.nan, units
    from scipy.stats import rankdata  # here: scipy.stats takes a second to import, and most reports rank nothing

    rx, ry = rankdata(x[both]), rankdata(y[both])
    if np.std(rx) == 0 or np.std(ry) == 0:
        return math.nan, units
    return float(np.corrcoef(rx, ry)[0, 1]), units


def _joint(data_a: Data, data_b: Data) -> Data:
    """Both languages' rows of the matched items as one data set (row i: item i in A and in B)."""
    if isinstance(data_a, Mapping):
        return {**{("a", name): column for name, column in data_a.items()},
                **{("b", name): column for name, column in data_b.items()}}  # fmt: skip
    return list(zip(data_a, data_b))


def _split(joint: Data) -> tuple[Data, Data]:
    if isinstance(joint, Mapping):
        return tuple({name: column for (side, name), column in joint.items() if side == key} for key in "ab")
    return [a for a, _ in joint], [b for _, b in joint]


def rank_correlation(
    aligned: Aligned,
    resampling: Resampling,
    metrics: Sequence[str],
    *,
    iters: int = DEFAULT_ITERS,
    seed: int = DEFAULT_SEED,
) -> tuple[float, int, Any]:
    """(rho, units, bootstrap interval or None) of ``metrics`` between the aligned runs A and B."""

    def statistic(joint: Data) -> dict[str, float]:
        data_a, data_b = _split(joint)
        values_a, values_b = resampling.statistic(data_a), resampling.statistic(data_b)
        x = [float(values_a.get(name, math.nan)) for name in metrics]
        y = [float(values_b.get(name, math.nan)) for name in metrics]
        return {"rho": spearman(x, y)[0]}

    whole_a, whole_b = resampling.statistic(aligned.data_a), resampling.statistic(aligned.data_b)
    rho, units = spearman(
        [float(whole_a.get(name, math.nan)) for name in metrics],
        [float(whole_b.get(name, math.nan)) for name in metrics],
    )
    if math.isnan(rho):
        return rho, units, None
    joint = _joint(aligned.data_a, aligned.data_b)
    return rho, units, bootstrap(joint, statistic, strata=aligned.strata, iters=iters, seed=seed).get("rho")
