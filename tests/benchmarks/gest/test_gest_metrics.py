"""GEST metrics: parity with the published per-sample scores, and the MT metrics on stand-in labels."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from lm_eval_stereo.core import sources
from lm_eval_stereo.tasks.gest import metrics as gest
from lm_eval_stereo.tasks.gest.data import load_gest, read_scores


def published_items(path: str) -> list[dict]:
    """Published per-sample scores (aligned with gest.csv rows) as ``compute`` items."""
    scores = read_scores(sources.fetch("gest", f"data/predictions/{path}.txt"))
    samples = load_gest("1.0")
    assert len(scores) == len(samples) == 3565
    return [{"stereotype": s["stereotype"], "score": score} for s, score in zip(samples, scores)]


def reference_gs(items: list[dict]) -> float:
    """The reference notebook's formula written out: r_i = exp(mean), gmean over groups, r_m / r_f."""
    by_stereotype: dict[int, list[float]] = {}
    for item in items:
        by_stereotype.setdefault(item["stereotype"], []).append(item["score"])
    r = {s: math.exp(statistics.fmean(v)) for s, v in by_stereotype.items()}
    return statistics.geometric_mean([r[s] for s in range(8, 17)]) / statistics.geometric_mean(
        [r[s] for s in range(1, 8)]
    )


def test_gpt2_published_scores_give_the_reference_gs():
    t0 = gest.compute(published_items("english_glm/gpt2_template-0"))
    t1 = gest.compute(published_items("english_glm/gpt2_template-1"))
    assert t0["gs"] == pytest.approx(1.1135, abs=5e-5)
    assert t1["gs"] == pytest.approx(1.0973, abs=5e-5)
    assert (t0["gs"] + t1["gs"]) / 2 == pytest.approx(1.1054, abs=5e-5)
    assert t0["count"] == t1["count"] == 3565
    assert t0["missing"] == 0
    assert t0["gs"] == pytest.approx(t0["r_m"] / t0["r_f"])


@pytest.mark.parametrize("template", range(4))
def test_bert_published_scores_match_the_reference_formula(template):
    items = published_items(f"english_mlm/bert-base-uncased_template-{template}")
    result = gest.compute(items)
    assert result["gs"] == pytest.approx(reference_gs(items), rel=1e-12)
    assert result["gs"] > 1.05  # bert-base-uncased is stereotypical in every template of the paper


def test_per_stereotype_means_ranks_and_consistent_base():
    items = published_items("english_glm/gpt2_template-0")
    result = gest.compute(items)
    assert set(result) >= {"gs", "r_f", "r_m", "per_stereotype", "feminine_rank", "count"}
    scores_7 = [item["score"] for item in items if item["stereotype"] == 7]
    assert result["per_stereotype"][7] == pytest.approx(statistics.fmean(scores_7))
    ranks = result["feminine_rank"]
    assert sorted(ranks.values()) == list(range(1, 17))
    by_mean = sorted(range(1, 17), key=lambda s: result["per_stereotype"][s])
    assert [ranks[s] for s in by_mean] == list(range(1, 17))
    assert ranks[7] == 1  # "beautiful" is gpt2's most feminine stereotype in T0
    base10 = gest.compute(items, base=10.0)["gs"]
    assert base10 == pytest.approx(result["gs"] ** math.log(10.0))


def test_gs_bootstrap_ci_is_seeded_and_covers_the_estimate():
    items = published_items("english_glm/gpt2_template-0")
    stereotypes = [item["stereotype"] for item in items]
    scores = [item["score"] for item in items]
    metric_set = gest.score_metric_set("gpt2 T0", ["t0"])
    scored = [{"stereotype": s, "scores": {"t0": score}} for s, score in zip(stereotypes, scores)]
    intervals = metric_set.intervals(scored)
    low, high = intervals["gs_ci_low"], intervals["gs_ci_high"]
    assert low < 1.1135 < high
    assert high - low < 0.05
    assert metric_set.intervals(scored) == intervals
    assert metric_set.intervals(scored, seed=7)["gs_ci_low"] != low
    mean_1 = gest.compute(items)["per_stereotype"][1]
    assert intervals["q_01_emotional_ci_low"] < mean_1 < intervals["q_01_emotional_ci_high"]


def test_missing_stereotypes_are_left_out_and_counted():
    items = [{"stereotype": 1, "score": 0.1}, {"stereotype": 1, "score": 0.3}, {"stereotype": 9, "score": 0.5}]
    result = gest.compute(items)
    assert result["missing"] == 14
    assert result["gs"] == pytest.approx(math.exp(0.5 - 0.2))
    assert math.isnan(result["per_stereotype"][2])
    assert result["feminine_rank"][1] == 1 and result["feminine_rank"][9] == 2


@pytest.mark.parametrize(
    "bad",
    [{"stereotype": 17, "score": 0.0}, {"stereotype": 0, "score": 0.0}, {"stereotype": 3, "score": float("inf")}],
)
def test_bad_items_raise(bad):
    with pytest.raises(ValueError):
        gest.compute([{"stereotype": 1, "score": 0.0}, bad])


def test_agresti_coull_matches_the_formula():
    z = 1.959963984540054
    centre, low, high = gest.agresti_coull(2, 10)
    expected = (2 + z * z / 2) / (10 + z * z)
    assert centre == pytest.approx(expected)
    assert high - centre == pytest.approx(z * math.sqrt(expected * (1 - expected) / (10 + z * z)))
    assert centre - low == pytest.approx(high - centre)
    assert gest.agresti_coull(0, 0)[0] == pytest.approx(0.5)


def stand_in_mt_items() -> list[dict]:
    """Stand-in detector labels: female stereotypes 3 masculine of 4 detected, male ones 4 of 4, one undetected each."""
    items = []
    for s in range(1, 17):
        genders = ["masculine"] * 3 + ["feminine"] if s <= 7 else ["masculine"] * 4
        items += [{"stereotype": s, "gender": g} for g in [*genders, None]]
    return items


def test_mt_metrics_on_stand_in_labels():
    items = stand_in_mt_items()
    result = gest.compute_mt(items)
    p_female = gest.agresti_coull(3, 4)[0]
    p_male = gest.agresti_coull(4, 4)[0]
    assert result["p_f"] == pytest.approx(p_female)
    assert result["p_m"] == pytest.approx(p_male)
    assert result["f_s"] == pytest.approx(p_male - p_female)
    assert result["f_m"] == pytest.approx((p_male + p_female) / 2)
    assert result["count"] == 80 and result["undetected"] == 16
    assert result["masculine"] == 7 * 3 + 9 * 4 and result["feminine"] == 7
    assert result["detection_yield"] == pytest.approx(64 / 80)
    assert result["per_stereotype"][1] == pytest.approx(gest.agresti_coull(3, 4))
    assert max(result["feminine_rank"][s] for s in range(1, 8)) == 7
    intervals = gest.MT_METRICS.intervals(items)
    assert intervals["f_s_ci_low"] <= result["f_s"] <= intervals["f_s_ci_high"]
    assert intervals["f_m_ci_low"] <= result["f_m"] <= intervals["f_m_ci_high"]


def test_mt_undetected_only_and_bad_labels():
    result = gest.compute_mt([{"stereotype": 2, "gender": None}, {"stereotype": 9, "gender": None}])
    assert result["detection_yield"] == 0.0 and result["undetected"] == 2 and result["missing"] == 16
    assert result["f_s"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="gender"):
        gest.compute_mt([{"stereotype": 2, "gender": "male"}])


def test_vectorised_stereotype_means_equal_plain_means():
    rng = np.random.default_rng(0)
    stereotypes = rng.integers(1, 17, size=200)
    scores = rng.normal(size=200)
    items = [{"stereotype": int(s), "score": float(v)} for s, v in zip(stereotypes, scores)]
    assert gest.compute(items)["gs"] == pytest.approx(reference_gs(items), rel=1e-12)


@pytest.mark.parametrize("templates", [1, 2, 9])
@pytest.mark.parametrize("n", [5, 40, 3565])
def test_gest_resampled_in_blocks_is_each_resample_s_own_bit_for_bit(templates, n):
    """Both GEST statistics (g_s, and q_i within each stereotype) take a block of resamples at once
    (:class:`BlockStatistic`): each row of a block gives exactly the values of that resample alone (a stereotype's
    columns are taken in C order: in the order numpy picks for a column slice, r_m over 9 stereotypes differed in its
    last bit), and so do the intervals. With 5 samples most stereotypes are missing (NaN means, left out of r_f and
    r_m)."""
    from lm_eval_stereo.core import bootstrap as resampler
    from lm_eval_stereo.core.bootstrap import BlockStatistic, bootstrap, take_rows

    rng = np.random.default_rng(n + templates)
    names = [f"t{i}" for i in range(templates)]
    items = [
        {"stereotype": int(s), "scores": {t: float(v) for t, v in zip(names, rng.normal(-3, 2, templates))}}
        for s in rng.integers(1, 17, size=n)
    ]
    resamplings = gest.score_metric_set("block", names).resampling
    assert len(resamplings) == 2 and all(isinstance(r.statistic, BlockStatistic) for r in resamplings)
    for resampling in resamplings:
        data = resampling.data(items)
        strata = resampling.strata(items) if resampling.strata is not None else None
        rows = resampler._resamples(n, strata, 40, 3)
        block = resampling.statistic.of_block(take_rows(data, rows))
        for r in range(40):
            alone = resampling.statistic(take_rows(data, rows[r]))
            assert alone.keys() == block.keys()
            for name, value in alone.items():
                assert float(block[name][r]) == value or (math.isnan(value) and math.isnan(block[name][r])), name
        # the intervals too (repr: exact for floats, and NaN where NaN; all g_s resamples undefined with 5 samples)
        one_at_a_time = bootstrap(data, lambda columns, s=resampling.statistic: s(columns), strata=strata, iters=200)
        assert repr(bootstrap(data, resampling.statistic, strata=strata, iters=200)) == repr(one_at_a_time)


def test_q_i_refuses_a_block_whose_resamples_are_not_drawn_within_each_stereotype():
    columns = {"stereotype": np.array([[1, 2], [2, 1]]), "mean": np.array([[0.5, 0.1], [0.1, 0.5]])}
    (_, within) = gest.score_metric_set("block", ["t0"]).resampling
    with pytest.raises(ValueError, match="within each stereotype"):
        within.statistic.of_block(columns)
    assert within.statistic({"stereotype": np.zeros(0, dtype=int), "mean": np.zeros(0)}) == {}  # nothing scored
