"""Co-occurrence bias of GenderPersona outputs (Gnadt et al., GeBNLP 2025, METHODS §5; reference
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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy import stats

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


def word_bias(outputs: Sequence[Sequence[str]], in_a: Sequence[bool]) -> dict[str, float]:
    """bias(w) = ln(P(w|a)/P(w|b)) of every lemma occurring at least twice in ``outputs`` (one lemma list each)."""
    counts = {True: Counter(), False: Counter()}
    sizes = Counter(bool(flag) for flag in in_a)
    for lemmas, flag in zip(outputs, in_a):
        counts[bool(flag)].update(lemmas)
    if not sizes[True] or not sizes[False]:
        return {}
    vocabulary = [
        w for w in counts[True].keys() | counts[False].keys() if counts[True][w] + counts[False][w] >= MIN_TOTAL_COUNT
    ]
    prob = {g: {w: counts[g][w] / sizes[g] for w in vocabulary} for g in (True, False)}
    non_zero = [p for g in prob.values() for p in g.values() if p > 0]
    if not non_zero:
        return {}
    floor = min(non_zero)
    return {w: math.log((prob[True][w] or floor) / (prob[False][w] or floor)) for w in sorted(vocabulary)}


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
