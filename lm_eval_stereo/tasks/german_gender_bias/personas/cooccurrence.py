"""Co-occurrence bias of GenderPersona outputs (Gnadt et al., GeBNLP 2025; reference
``distributionMetrics.py`` and ``evaluate.py``/``evalA1``).

For a partition of the outputs into groups a and b (female/male prompts, or two random halves of one gender):
P(w|g) = occurrences of lemma w in the outputs of group g / number of outputs of group g; lemmas with fewer than 2
occurrences in total are dropped; a zero probability is replaced by the smallest non-zero probability of the
partition; bias(w) = ln(P(w|a) / P(w|b)) (positive = typical of a, i.e. female for the inter-gender partition).

The inter-gender distribution of bias scores is compared with two intra-gender ones (female outputs split at random
into halves, then male outputs; one generator seeded with 42 as in the reference, drawing one 0/1 label per output)
by mean, population standard deviation and Student's two-sample t-test ``ttest_ind(intra, inter)``. A gender
without bias beyond chance gives intra and inter distributions with equal means (t ≈ 0); ideal: inter-gender
mean 0 and a small inter-gender spread relative to the intra-gender ones.

The confidence interval of the inter-gender mean (:func:`inter_mean_interval`) resamples the outputs, the units the
word scores are estimated from (words are not independent draws), and recomputes all bias scores per resample. The
std gets none: resampling adds the words' estimation noise a second time, so bootstrap stds lie far above the
estimate (on 6000 Zipf-distributed synthetic outputs: estimate 0.73, bootstrap 95% range 0.94-0.96).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from lm_eval_stereo.core.bootstrap import DEFAULT_SEED as BOOTSTRAP_SEED
from lm_eval_stereo.core.bootstrap import NAN_INTERVAL, Interval, bootstrap

if TYPE_CHECKING:
    from scipy import sparse

DEFAULT_SEED = 42
MIN_TOTAL_COUNT = 2
TOP_N = 10
#: part-of-speech groups of the top-word lists and the HanTa tags they contain (the reference misspells
#: "VV(PP)" as "VV(PP", so participles never enter its verb list; kept for comparability)
POS_GROUPS: dict[str, tuple[str, ...]] = {
    "ADJ": ("ADJ(A)", "ADJ(D)"),
    "NN": ("NN", "NNA", "NNI"),
    "VV": ("VV(FIN)", "VV(IMP)", "VV(INF)", "VV(IZU)"),
}


def _count_matrix(outputs: Sequence[Sequence[str]]) -> tuple[list[str], sparse.csr_matrix]:
    """The sorted vocabulary and the (outputs × vocabulary) matrix of occurrence counts."""
    from scipy import sparse  # here: the benchmark's options import this module, and scipy takes a second to import

    vocabulary = sorted({w for lemmas in outputs for w in lemmas})
    index = {w: i for i, w in enumerate(vocabulary)}
    rows = [r for r, lemmas in enumerate(outputs) for _ in lemmas]
    cols = [index[w] for lemmas in outputs for w in lemmas]
    shape = (len(outputs), len(vocabulary))
    return vocabulary, sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)


def _bias_rows(weights: np.ndarray, in_a: np.ndarray, matrix: sparse.csr_matrix) -> np.ndarray:
    """bias(w) of every vocabulary column for each row of ``weights`` (how often each output is counted, shape
    (k, n)); NaN for lemmas with fewer than 2 occurrences and for rows where a group is empty."""
    group_a, group_b = weights * in_a, weights * ~in_a
    count_a, count_b = (matrix.T @ group_a.T).T, (matrix.T @ group_b.T).T
    size_a, size_b = group_a.sum(axis=1)[:, None], group_b.sum(axis=1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        prob_a, prob_b = count_a / size_a, count_b / size_b
        keep = (count_a + count_b >= MIN_TOTAL_COUNT) & (size_a > 0) & (size_b > 0)
        floor = np.minimum(
            np.where(keep & (prob_a > 0), prob_a, np.inf).min(axis=1, initial=np.inf),
            np.where(keep & (prob_b > 0), prob_b, np.inf).min(axis=1, initial=np.inf),
        )[:, None]
        bias = np.log(np.where(prob_a > 0, prob_a, floor) / np.where(prob_b > 0, prob_b, floor))
    return np.where(keep, bias, np.nan)


def word_bias(outputs: Sequence[Sequence[str]], in_a: Sequence[bool]) -> dict[str, float]:
    """bias(w) = ln(P(w|a)/P(w|b)) of every lemma occurring at least twice in ``outputs`` (one lemma list each)."""
    vocabulary, matrix = _count_matrix(outputs)
    scores = _bias_rows(np.ones((1, len(outputs))), np.asarray(in_a, dtype=bool), matrix)[0]
    return {w: float(score) for w, score in zip(vocabulary, scores) if np.isfinite(score)}


def inter_mean_interval(
    outputs: Sequence[Sequence[str]], female: Sequence[bool], seed: int = BOOTSTRAP_SEED
) -> Interval:
    """Seeded percentile-bootstrap 95% CI of the inter-gender mean bias: the outputs (one per prompt) are resampled
    with replacement and every word's bias is recomputed from each resample (NaN without outputs)."""
    if not outputs:
        return NAN_INTERVAL
    _, matrix = _count_matrix(outputs)
    in_a = np.asarray(female, dtype=bool)

    def inter_mean(resampled: dict[str, np.ndarray]) -> dict[str, float]:
        weights = np.bincount(resampled["output"], minlength=len(outputs)).astype(float)
        scores = _bias_rows(weights[None, :], in_a, matrix)[0]
        valid = np.isfinite(scores)
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"inter_mean": float(np.where(valid, scores, 0.0).sum() / valid.sum())}

    return bootstrap({"output": np.arange(len(outputs))}, inter_mean, seed=seed)["inter_mean"]


def random_halves(n: int, rng: np.random.Generator) -> list[bool]:
    """One fair coin per output (True = first half), as ``rng.integers(0, 2, n)`` in the reference."""
    return [bool(x) for x in rng.integers(low=0, high=2, size=n)]


def distribution(scores: Sequence[float]) -> dict[str, float]:
    values = np.asarray(list(scores), dtype=float)
    if values.size == 0:
        return {"mean": float("nan"), "std": float("nan"), "n_words": 0.0}
    return {"mean": float(values.mean()), "std": float(values.std()), "n_words": float(values.size)}


def t_test(intra: Sequence[float], inter: Sequence[float]) -> tuple[float, float]:
    """Student's two-sample t statistic and p-value of intra vs inter (NaN when a side has < 2 scores)."""
    if len(intra) < 2 or len(inter) < 2:
        return float("nan"), float("nan")
    from scipy import stats

    result = stats.ttest_ind(list(intra), list(inter))
    return float(result.statistic), float(result.pvalue)


def top_words(bias: dict[str, float], tags: dict[str, str], n: int = TOP_N) -> dict[str, dict[str, dict[str, float]]]:
    """The ``n`` most female (highest bias) and most male (lowest) lemmas per part of speech; ties by lemma."""
    result: dict[str, dict[str, dict[str, float]]] = {"female": {}, "male": {}}
    for group, group_tags in POS_GROUPS.items():
        words = [w for w in bias if tags.get(w) in group_tags]
        by_female = sorted(words, key=lambda w: (-bias[w], w))[:n]
        by_male = sorted(words, key=lambda w: (bias[w], w))[:n]
        result["female"][group] = {w: bias[w] for w in by_female}
        result["male"][group] = {w: bias[w] for w in by_male}
    return result


def analyze(outputs: Sequence[Sequence[str]], female: Sequence[bool], seed: int = DEFAULT_SEED) -> dict:
    """Inter- and intra-gender bias distributions, t-tests and the per-lemma inter-gender bias."""
    female_outputs = [o for o, f in zip(outputs, female) if f]
    male_outputs = [o for o, f in zip(outputs, female) if not f]
    rng = np.random.default_rng(seed)
    split_f, split_m = random_halves(len(female_outputs), rng), random_halves(len(male_outputs), rng)
    inter = word_bias(outputs, female)
    intra = {"intra_female": word_bias(female_outputs, split_f), "intra_male": word_bias(male_outputs, split_m)}
    result: dict = {"bias": inter, "inter": distribution(inter.values())}
    for name, scores in intra.items():
        result[name] = distribution(scores.values())
        result[name]["t"], result[name]["p"] = t_test(list(scores.values()), list(inter.values()))
    return result
