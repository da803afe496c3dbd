"""Paired statistics of the report against plain reference implementations written here and scipy.

Fixtures with known answers: identical runs (difference 0, CI [0, 0], p = 1), a shifted run (p small), tiny samples
(n = 1, 2), a stratified statistic (GEST q_i) and a statistic whose rows are not one per item (refused).
Tolerances: bootstrap intervals and McNemar p-values must equal the references exactly (same seeded draws, exact
binomial); the Monte Carlo sign-flip p-value must lie within 4 standard errors (+1/P) of the exact enumeration.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from lm_eval_stereo.core.bootstrap import paired_bootstrap, percentile_interval
from lm_eval_stereo.core.metrics import Resampling
from lm_eval_stereo.report.paired import (
    MCNEMAR,
    SIGN_FLIP,
    NotComparable,
    align,
    compare,
    holm,
    mcnemar_exact,
    sign_flip_pvalues,
)
from lm_eval_stereo.tasks.gest import metrics as gest_metrics
from lm_eval_stereo.tasks.stereoset_multi import metrics as stereoset

STEREOSET = stereoset.METRICS.resampling[0]


def stereoset_items(pro: list[int], related: list[int] | None = None, prefix: str = "") -> dict[str, dict]:
    """StereoSet items by key whose judgements are ``pro`` (stereotype beats anti-stereotype) and, where given,
    ``related`` (how many of the two beat the unrelated candidate: 2, 1 or 0)."""
    items = {}
    for i, p in enumerate(pro):
        rel = 2 if related is None else related[i]
        stereo, anti = (2.0, 1.0) if p else (1.0, 2.0)
        unrelated = {2: 0.0, 1: 1.5, 0: 3.0}[rel]
        items[f"{prefix}{i:04d}"] = {
            "key": f"{prefix}{i:04d}",
            "test": "intrasentence",
            "target": f"t{i % 3}",
            "bias_type": "gender",
            "stereotype": stereo,
            "anti-stereotype": anti,
            "unrelated": unrelated,
        }
    return items


# --- references --------------------------------------------------------------------------------------------------


def reference_mcnemar(b: int, c: int) -> float:
    """Exact McNemar: two-sided binomial test of b successes in b + c trials with p = 1/2 (plain sums)."""
    n = b + c
    if n == 0:
        return 1.0
    pmf = [math.comb(n, k) / 2**n for k in range(n + 1)]
    observed = pmf[b]
    return min(1.0, sum(p for p in pmf if p <= observed * (1 + 1e-7)))


def reference_holm(pvalues: list[float]) -> list[float]:
    """Holm's adjusted p-values written out: the j-th smallest is the largest (m - i + 1) p_(i), i <= j, capped at 1."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    for rank, index in enumerate(order):
        candidates = [min(1.0, (m - j) * pvalues[order[j]]) for j in range(rank + 1)]
        adjusted[index] = max(candidates)
    return adjusted


def reference_paired_bootstrap(a: np.ndarray, b: np.ndarray, iters: int, seed: int) -> tuple[float, float]:
    """Percentile interval of mean(a[rows]) - mean(b[rows]) with rows drawn as the project's resampler draws them."""
    rows = np.random.default_rng(seed).integers(0, len(a), size=(iters, len(a)))
    differences = [a[r].mean() - b[r].mean() for r in rows]
    return tuple(np.percentile(differences, [2.5, 97.5]))


# --- McNemar, Holm -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (5, 5), (3, 1), (12, 2), (0, 9), (40, 61), (200, 150)])
def test_mcnemar_equals_the_reference_and_scipy(b, c):
    p = mcnemar_exact(b, c)
    assert p == pytest.approx(reference_mcnemar(b, c), rel=1e-12)
    if b + c:
        assert p == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    else:
        assert p == 1.0


def test_holm_equals_the_reference():
    pvalues = [0.01, 0.04, 0.03, 0.005, 0.5, 0.0001]
    assert holm(pvalues) == pytest.approx(reference_holm(pvalues), abs=1e-15)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.2, math.nan, 0.01]) == [0.2, pytest.approx(math.nan, nan_ok=True), 0.02]
    assert holm([]) == []


# --- paired bootstrap ------------------------------------------------------------------------------------------------


def test_paired_bootstrap_resamples_the_same_items_for_both_runs():
    rng = np.random.default_rng(0)
    a = rng.normal(size=40)
    b = a + rng.normal(scale=0.1, size=40) + 0.3
    interval = paired_bootstrap(
        {"x": a}, {"x": b}, lambda columns: {"mean": float(columns["x"].mean())}, iters=300, seed=7
    )["mean"]
    low, high = reference_paired_bootstrap(a, b, 300, 7)
    assert (interval.low, interval.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert high < 0, "b is a shifted by +0.3 with little noise: the paired interval excludes 0"
    unpaired = percentile_interval(
        [a[r].mean() - b[s].mean() for r, s in np.random.default_rng(1).integers(0, 40, size=(300, 2, 40))]
    )
    assert high - low < (unpaired.high - unpaired.low) / 3, "pairing removes the items' shared variance"


def test_paired_bootstrap_refuses_unequal_lengths():
    with pytest.raises(ValueError, match="different lengths: 3 and 2"):
        paired_bootstrap([1, 2, 3], [1, 2], lambda items: {"n": len(items)})


# --- compare: known answers ------------------------------------------------------------------------------------------


def test_identical_runs_differ_by_zero_with_p_one():
    items = stereoset_items([1, 0, 1, 1, 0, 1, 0, 0, 1, 1], [2, 0, 1, 2, 2, 0, 1, 2, 2, 0])
    aligned = align(items, dict(items), STEREOSET)
    found = {c.metric: c for c in compare(aligned, STEREOSET, ["lms", "ss", "icat"], iters=200, permutations=500)}
    assert set(found) == {"lms", "ss", "icat"}
    for comparison in found.values():
        assert (comparison.difference, comparison.low, comparison.high, comparison.p) == (0.0, 0.0, 0.0, 1.0)
        assert comparison.n == 10
    assert found["ss"].test == MCNEMAR and found["ss"].discordant == (0, 0) and found["ss"].flips == ()
    assert found["lms"].test == SIGN_FLIP, "LMS averages 0/1/2 related judgements: not a 0/1 score"
    assert found["icat"].test == SIGN_FLIP


def test_shifted_run_has_a_small_mcnemar_p_equal_to_scipy():
    pro_a = [1] * 45 + [0] * 15
    pro_b = [0] * 40 + [1] * 5 + [0] * 12 + [1] * 3
    a, b = stereoset_items(pro_a), stereoset_items(pro_b)
    (ss,) = compare(align(a, b, STEREOSET), STEREOSET, ["ss"], iters=200)
    high_a_only = sum(x == 1 and y == 0 for x, y in zip(pro_a, pro_b))
    high_b_only = sum(x == 0 and y == 1 for x, y in zip(pro_a, pro_b))
    assert ss.discordant == (high_a_only, high_b_only) == (40, 3)
    assert ss.difference == pytest.approx(100 * (sum(pro_a) - sum(pro_b)) / 60)
    assert ss.p == pytest.approx(stats.binomtest(40, 43, 0.5).pvalue, rel=1e-12) and ss.p < 1e-8
    assert ss.low > 0, "the CI of a large shift excludes 0"
    flipped = {key for key, x, y in ss.flips}
    assert flipped == {f"{i:04d}" for i in range(60) if pro_a[i] != pro_b[i]}
    assert all((x, y) in {(100.0, 0.0), (0.0, 100.0)} for _, x, y in ss.flips), "single-item SS is 0 or 100"


def _mean_resampling() -> Resampling:
    return Resampling(
        lambda columns: {"mean": float(columns["x"].mean())},
        lambda items: {"x": np.array([float(item["x"]) for item in items])},
    )


def test_sign_flip_p_matches_scipys_exact_permutation_test():
    rng = np.random.default_rng(5)
    x = rng.normal(size=10)
    y = x - 0.6 + rng.normal(scale=0.5, size=10)
    a = {str(i): {"key": str(i), "x": v} for i, v in enumerate(x)}
    b = {str(i): {"key": str(i), "x": v} for i, v in enumerate(y)}
    resampling = _mean_resampling()
    aligned = align(a, b, resampling)
    observed = {"mean": float(x.mean() - y.mean())}
    permutations = 4000
    p, used = sign_flip_pvalues(
        aligned.data_a, aligned.data_b, resampling.statistic, observed, permutations=permutations, stop_after=10**9
    )["mean"]
    exact = stats.permutation_test(
        (x, y), lambda u, v: np.mean(u) - np.mean(v), permutation_type="samples", n_resamples=np.inf
    ).pvalue
    assert used == permutations
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / permutations) + 1 / permutations
    assert 0.001 < exact < 0.2, "a fixture whose p is neither trivial nor tiny"


def test_sign_flip_stops_early_when_far_from_significant():
    a = {str(i): {"key": str(i), "x": float(i % 3)} for i in range(30)}
    b = {str(i): {"key": str(i), "x": float((i + 1) % 3)} for i in range(30)}
    resampling = _mean_resampling()
    (comparison,) = compare(align(a, b, resampling), resampling, ["mean"], iters=100, permutations=9999)
    assert comparison.test == SIGN_FLIP
    assert comparison.permutations < 200 and comparison.p == pytest.approx(20 / comparison.permutations)
    assert comparison.p > 0.1


@pytest.mark.parametrize("n", [1, 2])
def test_tiny_samples(n):
    same = stereoset_items([1] * n)
    for comparison in compare(align(same, dict(same), STEREOSET), STEREOSET, ["lms", "ss"], iters=50):
        assert (comparison.difference, comparison.p) == (0.0, 1.0)
    (ss,) = compare(align(same, stereoset_items([0] * n), STEREOSET), STEREOSET, ["ss"], iters=50)
    assert ss.discordant == (n, 0) and ss.p == pytest.approx(reference_mcnemar(n, 0)) == 2 / 2**n
    assert ss.difference == 100.0 and (ss.low, ss.high) == (100.0, 100.0)
    (lms,) = compare(align(same, stereoset_items([0] * n, [0] * n), STEREOSET), STEREOSET, ["lms"], iters=50)
    exact = 2 / 2**n  # all 2^n sign flips: only the identity and the full swap reach |d|
    assert lms.difference == 100.0 and lms.p == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 9999))


def test_items_without_a_row_in_one_run_are_left_out_and_counted():
    a = stereoset_items([1, 0, 1, 1])
    b = stereoset_items([1, 0, 1, 1])
    b["0001"]["stereotype"] = float("nan")  # unscored in B
    b["9999"] = dict(b["0000"], key="9999")  # not in A: not matched
    aligned = align(a, b, STEREOSET)
    assert aligned.keys == ["0000", "0002", "0003"] and aligned.left_out == 1


def test_stratified_statistic_resamples_within_strata():
    """GEST q_i: one stereotype's mean, resampled within stereotypes; the paired interval equals a plain stratified
    reference and the strata travel with the items."""
    templates = ["t0"]
    resampling = gest_metrics.score_metric_set("gest_en", templates).resampling[1]
    rng = np.random.default_rng(2)
    stereotypes = [1, 1, 1, 2, 2, 2, 2, 9]
    a = {f"{i}": {"id": i, "stereotype": s, "scores": {"t0": float(rng.normal())}} for i, s in enumerate(stereotypes)}
    b = {key: {**item, "scores": {"t0": item["scores"]["t0"] + 0.5}} for key, item in a.items()}
    aligned = align(a, b, resampling)
    assert aligned.strata == stereotypes
    found = {c.metric: c for c in compare(aligned, resampling, ["q_01_emotional", "q_02_gentle"], iters=300, seed=4)}
    assert found["q_01_emotional"].difference == pytest.approx(-0.5)
    assert (found["q_01_emotional"].low, found["q_01_emotional"].high) == (pytest.approx(-0.5), pytest.approx(-0.5))
    identical = compare(align(a, dict(a), resampling), resampling, ["q_02_gentle"], iters=300)
    assert (identical[0].difference, identical[0].p) == (0.0, 1.0)


def test_statistic_without_one_row_per_item_is_refused():
    doubled = Resampling(
        lambda columns: {"mean": float(columns["x"].mean())},
        lambda items: {"x": np.array([float(item["x"]) for item in items for _ in range(2)])},
    )
    items = {"a": {"key": "a", "x": 1.0}, "b": {"key": "b", "x": 2.0}}
    with pytest.raises(NotComparable, match="more than one row per item"):
        align(items, items, doubled)
    with pytest.raises(NotComparable, match="no items in common"):
        align(items, {"c": {"key": "c", "x": 1.0}}, _mean_resampling())


def test_a_paired_difference_undefined_in_some_resamples_is_counted() -> None:
    """The mean of the positive values is undefined in a resample without one: with one positive item in 8, about
    (7/8)^8 = 34% of the resamples hold none; the comparison counts them (the CI rests on the others) instead of
    dropping them without a word."""
    from lm_eval_stereo.report.paired import align, compare

    def statistic(columns):
        values = np.asarray(columns["x"], dtype=float)
        positive = values[values > 0]
        return {"positive_mean": float(positive.mean()) if positive.size else math.nan}

    resampling = Resampling(statistic, lambda items: {"x": np.array([item["x"] for item in items], dtype=float)})
    items_a = {f"k{i}": {"key": f"k{i}", "x": 1.0 if i == 0 else -1.0} for i in range(8)}
    items_b = {f"k{i}": {"key": f"k{i}", "x": 2.0 if i == 0 else -1.0} for i in range(8)}
    (comparison,) = compare(align(items_a, items_b, resampling), resampling, ["positive_mean"], iters=1000)
    rows = np.random.default_rng(1234).integers(0, 8, size=(1000, 8))
    expected = int(np.sum(~(rows == 0).any(axis=1)))  # the resamples without item k0, drawn as the resampler draws
    assert comparison.undefined == expected and 250 < expected < 450
    assert comparison.difference == -1.0 and comparison.low == comparison.high == -1.0
