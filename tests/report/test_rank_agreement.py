"""The report's rank agreement (``report/rankings.py``): Spearman's rho of a declared ranking between a language and the
reference language, on the items both scored, with a bootstrap interval from the shared resampler."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from lm_eval_stereo.core.metrics import Resampling
from lm_eval_stereo.report.paired import align
from lm_eval_stereo.report.rankings import rank_correlation, spearman

UNITS = 6


def _columns(items):
    return {
        "unit": np.array([item["unit"] for item in items], dtype=int),
        "score": np.array([item["score"] for item in items], dtype=float),
    }


def _means(columns):
    return {
        f"m{u}": float(columns["score"][columns["unit"] == u].mean()) for u in sorted(set(columns["unit"].tolist()))
    }


RESAMPLING = Resampling(_means, _columns, lambda items: [item["unit"] for item in items])
METRICS = tuple(f"m{u}" for u in range(UNITS))


def _items(scores_by_unit, seed):
    rng = np.random.default_rng(seed)
    items = {}
    for u, centre in enumerate(scores_by_unit):
        for i in range(8):
            items[f"{u}-{i}"] = {"unit": u, "score": centre + rng.normal(0, 0.01)}
    return items


def test_spearman_equals_scipy_on_the_units_both_have():
    x = [0.1, 0.5, 0.5, math.nan, 0.9, 0.2]
    y = [0.3, 0.2, 0.6, 0.1, 0.8, math.nan]
    rho, units = spearman(x, y)
    assert units == 4 and rho == pytest.approx(spearmanr([0.1, 0.5, 0.5, 0.9], [0.3, 0.2, 0.6, 0.8])[0], abs=1e-12)
    assert math.isnan(spearman([1, 2], [2, 1])[0])  # fewer than 3 units


def test_rank_correlation_on_matched_items_with_its_interval():
    reference = _items([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], seed=1)
    same_order = _items([0.2, 0.4, 0.6, 0.8, 1.0, 1.2], seed=2)
    reversed_order = _items([0.6, 0.5, 0.4, 0.3, 0.2, 0.1], seed=3)
    rho, units, interval = rank_correlation(align(same_order, reference, RESAMPLING), RESAMPLING, METRICS, iters=200)
    assert (rho, units) == (1.0, UNITS) and interval.low == interval.high == 1.0
    rho, _, interval = rank_correlation(align(reversed_order, reference, RESAMPLING), RESAMPLING, METRICS, iters=200)
    assert rho == -1.0 and interval.high == -1.0
    noisy = _items([0.3, 0.302, 0.304, 0.306, 0.308, 0.31], seed=4)
    aligned = align(noisy, reference, RESAMPLING)
    rho, _, interval = rank_correlation(aligned, RESAMPLING, METRICS, iters=200)
    values = RESAMPLING.statistic(aligned.data_a), RESAMPLING.statistic(aligned.data_b)
    assert rho == pytest.approx(spearmanr([values[0][m] for m in METRICS], [values[1][m] for m in METRICS])[0])
    assert -1 <= interval.low <= rho <= interval.high <= 1 and interval.high - interval.low > 0.1
    # only the items both scored: drop half the reference's items, the rows are matched by key
    half = {key: item for key, item in reference.items() if key.endswith(("-0", "-1", "-2", "-3"))}
    assert len(align(noisy, half, RESAMPLING).keys) == 4 * UNITS
