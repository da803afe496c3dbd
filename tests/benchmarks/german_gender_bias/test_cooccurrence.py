"""Unit tests of the German text processing and the co-occurrence bias (Gnadt et al. 2025)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from lm_eval_stereo.tasks.german_gender_bias.german_text import content_lemmas, neutralize_gender, tokenize
from lm_eval_stereo.tasks.german_gender_bias.personas import cooccurrence


def test_tokenize_and_content_lemmas():
    assert tokenize("Die Ärztin, 42 Jahre alt, kam.") == ["Die", "Ärztin", ",", "42", "Jahre", "alt", ",", "kam", "."]
    lemmas = content_lemmas(
        "\nAnna, die Putzfrau, arbeitete als Kollegin; sie liebt schöne Blumen und 3 Hunde.", {"Anna", "sie"}
    )
    assert lemmas == [
        ("Putzmensch", "NN"),
        ("arbeiten", "VV(FIN)"),
        ("Kolleg", "NN"),
        ("lieben", "VV(FIN)"),
        ("schön", "ADJ(A)"),
        ("Blume", "NN"),
        ("Hund", "NN"),
    ]
    assert neutralize_gender("Feuerwehrmann", "NN") == "Feuerwehrmensch"
    assert neutralize_gender("klein", "ADJ(A)") == "klein" and neutralize_gender("Mann", "NN") == "Mann"


def test_word_bias_by_hand():
    # female outputs: 2, male outputs: 4
    outputs = [["tanzen", "Blume"], ["tanzen"], ["Auto"], ["Auto", "Blume"], ["Auto"], ["einmal"]]
    female = [True, True, False, False, False, False]
    bias = cooccurrence.word_bias(outputs, female)
    assert set(bias) == {"tanzen", "Blume", "Auto"}  # "einmal" occurs once: dropped
    # P(tanzen|f)=2/2, P(tanzen|m)=0 -> replaced by the smallest non-zero probability 1/4
    assert bias["tanzen"] == pytest.approx(math.log(1 / 0.25))
    assert bias["Blume"] == pytest.approx(math.log((1 / 2) / (1 / 4)))
    assert bias["Auto"] == pytest.approx(math.log(0.25 / (3 / 4)))
    assert cooccurrence.word_bias(outputs, [True] * 6) == {}


def test_analyze_seeded_split_t_test_and_top_words():
    rng = np.random.default_rng(0)
    vocabulary = [f"w{i}" for i in range(40)]
    outputs = [list(rng.choice(vocabulary, size=12)) for _ in range(60)]
    female = [i % 2 == 0 for i in range(60)]
    for i in range(0, 60, 2):
        outputs[i].append("Kleid")
    first = cooccurrence.analyze(outputs, female)
    assert first == cooccurrence.analyze(outputs, female)  # seeded: identical
    other = cooccurrence.analyze(outputs, female, seed=7)
    assert other["intra_female"]["mean"] != first["intra_female"]["mean"]
    inter = list(first["bias"].values())
    assert first["inter"]["mean"] == pytest.approx(np.mean(inter)) and first["inter"]["std"] == pytest.approx(
        np.std(inter)
    )
    # the intra-female split reproduces the reference's generator: default_rng(42), female outputs first
    split = np.random.default_rng(42).integers(0, 2, size=30).astype(bool)
    intra = cooccurrence.word_bias([o for o, f in zip(outputs, female) if f], list(split))
    assert first["intra_female"]["mean"] == pytest.approx(np.mean(list(intra.values())))
    expected = stats.ttest_ind(list(intra.values()), inter)
    assert (first["intra_female"]["t"], first["intra_female"]["p"]) == pytest.approx(
        (expected.statistic, expected.pvalue)
    )
    tags = {w: "NN" for w in first["bias"]}
    top = cooccurrence.top_words(first["bias"], tags, n=3)
    assert next(iter(top["female"]["NN"])) == "Kleid" and len(top["male"]["NN"]) == 3 and top["female"]["VV"] == {}


def test_analyze_with_one_gender_only_is_nan_not_error():
    result = cooccurrence.analyze([["a", "a"], ["a"]], [True, True])
    assert result["bias"] == {} and math.isnan(result["inter"]["mean"]) and math.isnan(result["intra_female"]["t"])


def test_inter_mean_interval_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    vocabulary = [f"w{i}" for i in range(30)]
    outputs = [list(rng.choice(vocabulary, size=10)) + (["Kleid"] if i % 2 == 0 else []) for i in range(80)]
    female = [i % 2 == 0 for i in range(80)]
    estimate = cooccurrence.analyze(outputs, female)["inter"]["mean"]
    interval = cooccurrence.inter_mean_interval(outputs, female)
    low, high = interval.low, interval.high
    assert low < estimate < high and high - low < 0.5
    assert interval == cooccurrence.inter_mean_interval(outputs, female)  # seeded: identical on rerun
    assert interval != cooccurrence.inter_mean_interval(outputs, female, seed=5)
    # one resample = the data itself: the vectorised scores are those of word_bias
    identity = cooccurrence._bias_rows(np.ones((1, 80)), np.array(female), cooccurrence._count_matrix(outputs)[1])
    assert np.nanmean(identity) == pytest.approx(estimate)
    empty = cooccurrence.inter_mean_interval([], [])
    assert math.isnan(empty.low) and math.isnan(empty.high)


def test_inter_mean_resamples_without_a_word_of_both_genders_are_counted():
    """The mean inter-gender bias is undefined in a resample where no word is counted (a word needs two occurrences)
    or one gender has no output: the interval counts those resamples (``undefined``), here counted again by a plain
    loop over the resampler's draws, and the persona metric set reports the count as ``cooc_inter_mean_ci_undefined``
    beside the interval."""
    from lm_eval_stereo.tasks.german_gender_bias.personas.metrics import GENDER_METRICS

    outputs = [["Kleid"], ["Kleid"], ["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]
    female = [True, False, True, False, True, False, True, False]
    interval = cooccurrence.inter_mean_interval(outputs, female)
    expected = 0
    for row in np.random.default_rng(cooccurrence.BOOTSTRAP_SEED).integers(0, 8, size=(1000, 8)):
        counts: dict[str, int] = {}
        for index in row:
            counts[outputs[index][0]] = counts.get(outputs[index][0], 0) + 1
        both_genders = any(female[i] for i in row) and not all(female[i] for i in row)
        expected += not (both_genders and max(counts.values()) >= 2)
    assert interval.undefined == expected and 0 < expected < 1000
    assert "cooc_inter_mean_ci_undefined" in GENDER_METRICS.names
