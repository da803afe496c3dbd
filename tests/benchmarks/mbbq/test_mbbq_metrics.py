"""MBBQ's resampled scores take a block of resamples at once: the intervals of one resample at a time, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_stereo.core.bootstrap import BlockStatistic, bootstrap
from lm_eval_stereo.tasks import bbq_family
from lm_eval_stereo.tasks.mbbq import metrics


@pytest.mark.parametrize("kind", ["bias", "control"])
@pytest.mark.parametrize("n", [1, 12, 400])
def test_scores_of_a_block_of_resamples_are_those_of_one_at_a_time(kind, n):
    rng = np.random.default_rng(n)
    columns = {name: rng.integers(0, 3, n) for name in bbq_family.COUNT_FIELDS}
    columns |= {"ambiguous": rng.integers(0, 2, n), "category": rng.integers(0, 5, n)}
    (resampling,) = metrics.metric_set(kind).resampling
    assert isinstance(resampling.statistic, BlockStatistic)
    blocked = bootstrap(columns, resampling.statistic, iters=250)
    one_at_a_time = bootstrap(columns, lambda resample: resampling.statistic(resample), iters=250)
    scores = (*metrics.ACCURACIES, *(metrics.BIASES if kind == "bias" else ()), metrics.OVERALL)
    assert set(blocked) == set(scores) and blocked["acc"].resamples == 250
    assert repr(blocked) == repr(one_at_a_time)
