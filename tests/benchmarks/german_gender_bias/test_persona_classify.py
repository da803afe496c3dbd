"""Unit tests of the persona gender classifiers (lexicon, judge), the persona metrics and the persona data loaders."""

from __future__ import annotations

import pytest
from lm_eval_runner import TESTS

from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.tasks.german_gender_bias.data import read_german_csv
from lm_eval_stereo.tasks.german_gender_bias.personas import metrics as persona
from lm_eval_stereo.tasks.german_gender_bias.personas.data import load_persona, persona_docs
from lm_eval_stereo.tasks.german_gender_bias.personas.gender import (
    GenderedCorpus,
    corpus_from_rows,
    gendered_counts,
    load_corpus,
    persona_gender_lexicon,
)
from lm_eval_stereo.tasks.german_gender_bias.personas.judge import INSTRUCTION, JudgeConfig, judge_label, judge_outputs
from lm_eval_stereo.tasks.german_gender_bias.personas.task import extract_output

FIXTURES = TESTS / "fixtures" / "persona"


def test_lexicon_on_hand_written_outputs():
    assert persona_gender_lexicon("\nAnna ist Ärztin. Sie hilft gern, ihre Patienten mögen sie.\n") == "female"
    assert persona_gender_lexicon("\nMax ist Arzt. Er ist bekannt, seine Patienten mögen ihn.") == "male"
    # a tie (and no gendered word at all) is male, as in the reference
    assert persona_gender_lexicon("\nSie und er gehen.") == "male"
    assert persona_gender_lexicon("\nEin Mensch geht spazieren.") == "male"
    # \\W on both sides: a word at the very start of the text is not counted, case matters
    assert gendered_counts("Sie lacht.") == (0, 0)
    assert gendered_counts("\nSie lacht. SIE lacht. sie sie.") == (2, 0)  # adjacent: 2nd not counted


def test_lexicon_with_custom_corpus_and_real_corpus_size():
    corpus = GenderedCorpus(female=("Lea",), male=("Tom", "er"))
    assert gendered_counts(" Lea und Lea. Tom, er ", corpus) == (2, 2)
    assert persona_gender_lexicon(" Lea, Lea und Tom ", corpus) == "female"
    assert persona_gender_lexicon(" Lea Lea und Tom ", corpus) == "male"  # adjacent words: the 2nd is not matched
    real = load_corpus()
    assert (len(real.female), len(real.male)) == (126, 161)
    # names listed twice in the published corpus count twice, as in the reference's row loop
    assert real.female.count("Anna") == 2 and gendered_counts("\nAnna? Er lacht.", real) == (2, 1)
    assert {"Mutter", "sie", "Anna"} <= set(real.female) and {"Vater", "er", "Peter"} <= set(real.male)


def test_corpus_bad_gender_value_names_file_row_and_field():
    rows = read_german_csv(FIXTURES / "corpus_bad_gender.csv", ("Person", "Gender"))
    with pytest.raises(MalformedDataError) as info:
        corpus_from_rows(rows, "corpus_bad_gender.csv")
    assert (info.value.row, info.value.field) == (6, "Gender")


def test_judge_label_follows_reference_order():
    assert judge_label("W") == "female"
    assert judge_label(" M") == "male"
    assert judge_label("WM") == "female"
    assert [judge_label(x) for x in ("U", "", "w", "m")] == ["unknown"] * 4


class FakeJudge:
    """Answers W when the text mentions 'Anna', M for 'Max', else garbage; records how often it was called."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def generate_until(self, requests):
        self.calls.append(len(requests))
        answers = []
        for request in requests:
            context, gen_kwargs = request.args
            assert context.endswith(INSTRUCTION + "\nAntwort:\n") and gen_kwargs["max_gen_toks"] == 1
            answers.append("W" if "Lena" in context or "Anna" in context else "M" if "Max" in context else "??")
        return answers


def test_fake_judge_is_asked_once_and_labels_combine_with_lexicon():
    outputs = [
        "\nAnna ist Ärztin. Sie lacht.",
        "\nMax ist Arzt. Er lacht.",
        "\nDie Person. Sie lacht.",
        "\nLena? Er, er und er lachen.",
    ]
    judge = FakeJudge()
    config = JudgeConfig.from_metadata({"judge_model": "fake", "judge_chat_template": "false"})
    verdicts = judge_outputs(outputs, judge, config)
    assert judge.calls == [4]
    assert verdicts == [("female", "W"), ("male", "M"), ("unknown", "??"), ("female", "W")]
    lexicon = [persona_gender_lexicon(o) for o in outputs]
    assert lexicon == ["female", "male", "female", "male"]
    labels = [persona.combine_labels(lex, j) for lex, (j, _) in zip(lexicon, verdicts)]
    assert labels == ["female", "male", None, None]
    assert persona.combine_labels("male", None) == "male"


def test_judge_config_from_metadata():
    assert JudgeConfig.from_metadata({"pretrained": "x"}) is None
    config = JudgeConfig.from_metadata(
        {"judge_model": "hf", "judge_model_args": "pretrained=/m", "judge_gen_kwargs": "do_sample=False,max_gen_toks=2"}
    )
    assert config.gen_kwargs == {"max_gen_toks": 2, "do_sample": False, "temperature": 0.7}
    assert JudgeConfig.from_json(config.to_json()) == config and JudgeConfig.from_json("") is None


def test_output_is_text_after_last_antwort():
    assert extract_output("Anna ist nett.") == "\nAnna ist nett."
    assert extract_output("bla Antwort: Max") == " Max"


def _items(target: str, labels: list, judge: list | None = None) -> dict:
    item = {"key": f"k{len(labels)}{target}{labels}", "stereotype": target, "article": target, "labels": labels}
    item["classifier"] = "lexicon (no judge configured)" if judge is None else "lexicon+judge test"
    if judge is not None:
        item["judge"] = judge
    return item


def test_stereo_scores_by_hand():
    targets = ["female"] * 4 + ["male"] * 4
    labels = ["female", "female", "female", "male", "female", "male", None, None]
    scores = persona.stereo_scores(targets, labels)
    # classified: f→f,f,f,m ; m→f,m  => accuracy 4/6
    assert scores["stereo_accuracy"] == pytest.approx(4 / 6)
    assert scores["female_stereotype_precision"] == pytest.approx(3 / 4)
    assert scores["female_stereotype_recall"] == pytest.approx(3 / 4)
    assert scores["male_stereotype_precision"] == pytest.approx(1 / 2)
    assert scores["male_stereotype_recall"] == pytest.approx(1 / 2)
    assert scores["male_f1"] == pytest.approx(0.5)
    assert persona.stereo_scores(["female"], ["female"])["male_stereotype_precision"] == 0.0


def test_neutral_scores_and_counting_with_judge():
    items = [
        _items("female", ["female", "female", None], judge=["female", "female", "unknown"]),
        _items("male", ["female", None, "male"], judge=["female", "female", "male"]),
    ]
    result = persona.NEUTRAL_METRICS.compute(items)
    assert result["female_share"] == pytest.approx(3 / 4) and result["male_share"] == pytest.approx(1 / 4)
    assert result["grammar_agreement"] == pytest.approx(3 / 4)
    assert result["n_generations"] == 6 and result["n_classified"] == 4
    assert result["unclassified_share"] == pytest.approx(2 / 6)
    assert result["judge_undetermined_share"] == pytest.approx(1 / 6)
    assert result["disagreement_share"] == pytest.approx(1 / 6)
    assert result["female_share_ci_low"] <= result["female_share"] <= result["female_share_ci_high"]
    assert result["gender_classifier"] == "lexicon+judge test"
    none = persona.NEUTRAL_METRICS.compute([_items("male", [None])])
    assert none["female_share"] != none["female_share"] and none["unclassified_share"] == 1.0


def test_persona_loaders_read_published_files():
    stereo = load_persona("stereo")
    assert len(stereo) == 456 and stereo[0]["stereotype"] == "female" and stereo[0]["article"] == "female"
    assert sum(d["stereotype"] == "male" for d in stereo) == 228
    neutral = load_persona("neutral", "typical")
    assert [d["article"] for d in neutral] == ["female", "male"] * 3 and "typische" in neutral[0]["full_prompt"]
    gender = load_persona("gender")
    assert len(gender) == 5992 and gender[3000]["gender"] == "male" and gender[3000]["person"] == "Occupation"
    with pytest.raises(ValueError, match="wording"):
        load_persona("stereo", "neutral")


def test_bad_persona_csv_raises_clear_errors():
    rows = read_german_csv(FIXTURES / "stereo_bad_gender.csv", ("Gender", "Article", "full_prompt"))
    with pytest.raises(MalformedDataError) as info:
        persona_docs("stereo", rows, "stereo_bad_gender.csv")
    assert (info.value.row, info.value.field) == (3, "Gender") and "stereo_bad_gender.csv" in str(info.value)
    with pytest.raises(MalformedDataError, match="missing column.*Article"):
        read_german_csv(FIXTURES / "stereo_missing_article.csv", ("Gender", "Article", "full_prompt"))
