"""The seeded resampler (:mod:`lm_eval_stereo.core.bootstrap`): a :class:`BlockStatistic`, run once per block of
resamples, gives the intervals it gives run one resample at a time, bit for bit: single and paired, within strata,
over blocks that do not divide the resamples evenly, with undefined resamples counted alike."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lm_eval_stereo.core import bootstrap as resampler
from lm_eval_stereo.core.bootstrap import BlockStatistic, Interval, bootstrap, paired_bootstrap


def _mean_and_ratio(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The mean of ``x`` and the share of positive ``x`` among rows with ``flag`` (NaN on a resample without one)."""
    flagged = columns["flag"].sum(axis=-1)
    positive = np.where(columns["flag"], columns["x"] > 0, False).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"mean": columns["x"].mean(axis=-1), "ratio": positive / flagged}


BLOCK = BlockStatistic(_mean_and_ratio)


def one_at_a_time(columns: dict[str, np.ndarray]) -> dict[str, float]:
    """The same statistic as a plain function: the resampler calls it once per resample."""
    return BLOCK(columns)


def columns(seed: int, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.normal(size=n), "flag": rng.random(n) < 0.1}


def same(one: dict[str, Interval], two: dict[str, Interval]) -> bool:
    """Equal intervals, field by field (NaN where NaN)."""
    fields = ("low", "high", "stderr", "undefined", "resamples")
    return one.keys() == two.keys() and all(
        getattr(one[name], f) == getattr(two[name], f)
        or (math.isnan(getattr(one[name], f)) and math.isnan(getattr(two[name], f)))
        for name in one
        for f in fields
    )


@pytest.mark.parametrize("n", [1, 7, 30, 513])
def test_a_block_statistic_gives_the_intervals_of_one_resample_at_a_time(n, monkeypatch):
    monkeypatch.setattr(resampler, "BLOCK_CELLS", 3 * n)  # blocks of 3 resamples, the last one of 1
    data = columns(0, n)
    shapes = []

    def counted(block: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        shapes.append(block["x"].shape)
        return _mean_and_ratio(block)

    blocked = bootstrap(data, BlockStatistic(counted), iters=301, seed=5)
    assert shapes == [(3, n)] * 100 + [(1, n)]
    assert same(blocked, bootstrap(data, one_at_a_time, iters=301, seed=5))
    assert blocked["mean"].resamples == 301
    if n == 30:  # 3 flagged rows of 30: some resamples have none, and are counted, not dropped
        assert 0 < blocked["ratio"].undefined < 301


def test_paired_and_stratified_blocks_equal_one_resample_at_a_time(monkeypatch):
    monkeypatch.setattr(resampler, "BLOCK_CELLS", 1000)
    first, second = columns(1, 200), columns(2, 200)
    strata = [i % 3 for i in range(200)]
    blocked = paired_bootstrap(first, second, BLOCK, strata=strata, iters=257)
    assert same(blocked, paired_bootstrap(first, second, one_at_a_time, strata=strata, iters=257))
    assert blocked["mean"].resamples == 257 and blocked["mean"].low < blocked["mean"].high


def test_a_block_statistic_called_on_one_data_set_gives_floats():
    values = BLOCK(columns(3, 40))
    assert all(type(value) is float for value in values.values())
    assert values["mean"] == float(columns(3, 40)["x"].mean())
