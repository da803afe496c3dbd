"""GEST data layer: versions, bad input, the pairs filters, the MT output extraction."""

from __future__ import annotations

import pytest
from lm_eval_runner import TESTS

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import DataError, DataUnavailableError, MalformedDataError
from lm_eval_stereo.tasks.gest import data
from lm_eval_stereo.tasks.gest import task_mt as gest_mt
from lm_eval_stereo.tasks.gest import task_pairs as gest_pairs

FIXTURES = TESTS / "fixtures" / "gest"


def test_both_versions_load_with_the_same_labels():
    old, new = data.load_gest("1.0"), data.load_gest()
    assert len(old) == len(new) == 3565
    assert data.DEFAULT_VERSION == "1.1" and new[0]["version"] == "1.1" and old[0]["version"] == "1.0"
    assert [s["stereotype"] for s in old] == [s["stereotype"] for s in new]
    assert sum(a["sentence"] != b["sentence"] for a, b in zip(old, new)) == 244
    assert [s["id"] for s in new[:3]] == [0, 1, 2]
    with pytest.raises(ValueError, match="unknown GEST version"):
        data.load_gest("2.0")


@pytest.mark.parametrize(
    ("content", "row", "field"),
    [
        ("sentence,stereotype\nI am kind.,2\nI am tall.,seventeen\n", 3, "stereotype"),
        ("sentence,stereotype\nI am kind.,17\n", 2, "stereotype"),
        ("sentence,stereotype\n ,4\n", 2, "sentence"),
        ("text,stereotype\nI am kind.,2\n", None, "sentence"),
    ],
)
def test_malformed_gest_files_name_row_and_field(tmp_path, content, row, field):
    path = tmp_path / "gest.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(MalformedDataError) as error:
        data.load_gest("1.1", path=path)
    assert (error.value.row, error.value.field) == (row, field)
    assert str(path) in str(error.value)


def test_score_files_reject_non_numbers(tmp_path):
    path = tmp_path / "scores.txt"
    path.write_text("0.5\n-1e-3\nnan?\n", encoding="utf-8")
    with pytest.raises(MalformedDataError) as error:
        data.read_scores(path)
    assert error.value.row == 3


def test_pairs_filters():
    assert data.first_letter_check("Byłem gotowy.", "Byłam gotowa.")
    assert not data.first_letter_check("Jestem ojcem.", "Jestem matką.")
    assert not data.first_letter_check("Jestem.", "Jestem.")
    assert data.tokenization_check(["a", "b", "c"], ["a", "x", "c"])
    assert not data.tokenization_check(["a", "b", "c"], ["a", "x", "y"])
    assert not data.tokenization_check(["a", "b"], ["a", "b", "c"])
    assert not data.tokenization_check(["a", "b"], ["a", "b"])


def test_pairs_annotation_without_tokenizer():
    pairs = data.annotate_pairs(data.load_pairs(FIXTURES / "pairs.csv"), None)
    reasons = {pair["row"]: pair["excluded"] for pair in pairs}
    assert reasons == {2: "", 3: "", 4: "", 5: "", 6: "duplicate", 7: "first_letter", 8: "", 9: "", 10: "", 11: ""}


def test_pairs_annotation_with_a_tokenizer_checks_exactly_one_differing_token():
    def tokenize(text: str) -> list[str]:
        return text.split()

    pairs = data.annotate_pairs(data.load_pairs(FIXTURES / "pairs.csv"), tokenize)
    reasons = {pair["row"]: pair["excluded"] for pair in pairs}
    # whitespace tokens: "Byłem szczęśliwy." vs "Byłam szczęśliwa." differ in two tokens
    assert reasons[8] == "tokenization" and reasons[2] == "" and reasons[6] == "duplicate"


def test_pairs_file_problems(tmp_path, monkeypatch):
    # pinned (git blob id), but not in the offline mirror (the project's lacks it): the error names the file and the
    # way round it
    (tmp_path / "mirror" / "gest").mkdir(parents=True)
    monkeypatch.setenv(sources.DATA_DIR_ENV, str(tmp_path / "mirror"))
    with pytest.raises(
        DataUnavailableError, match=r"gest/data/gender_variants\.csv is missing from the offline .*pairs_file"
    ):
        data.pairs_path(None)
    with pytest.raises(DataUnavailableError, match="does not exist"):
        data.pairs_path(tmp_path / "missing.csv")
    bad = tmp_path / "pairs.csv"
    bad.write_text("language,stereotype,male\npl,1,Byłem.\n", encoding="utf-8")
    with pytest.raises(MalformedDataError, match="female"):
        data.load_pairs(bad)
    bad.write_text("language,stereotype,male,female\npl,x,Byłem.,Byłam.\n", encoding="utf-8")
    with pytest.raises(MalformedDataError) as error:
        data.load_pairs(bad)
    assert (error.value.row, error.value.field) == (2, "stereotype")


def test_pairs_dataset_errors(tiny_causal):
    with pytest.raises(DataUnavailableError, match="pairs_file"):
        gest_pairs.custom_dataset("pl", pretrained=str(tiny_causal))
    with pytest.raises(DataError, match="no pairs for language 'sk'"):
        gest_pairs.custom_dataset("sk", pairs_file=str(FIXTURES / "pairs.csv"), pretrained=str(tiny_causal))
    with pytest.raises(ValueError, match="pretrained"):
        gest_pairs.custom_dataset("pl", pairs_file=str(FIXTURES / "pairs.csv"))
    rows = gest_pairs.custom_dataset("pl", pairs_file=str(FIXTURES / "pairs.csv"), pairs_tokenizer_filter="false")
    assert len(rows["test"]) == 8


def test_unknown_language_codes_are_refused():
    with pytest.raises(ValueError, match="unknown GEST language code 'xx'"):
        data.language_name("xx")
    with pytest.raises(ValueError, match="unknown GEST language code"):
        gest_mt.custom_dataset("de")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (" Zawsze byłem typem przywódcy.", "Zawsze byłem typem przywódcy."),
        ('\n"Zawsze byłem typem przywódcy."\nEnglish: next', "Zawsze byłem typem przywódcy."),
        ("Polish: „Zawsze byłam typem przywódczyni.”", "Zawsze byłam typem przywódczyni."),
        ("   \n  ", ""),
    ],
)
def test_translation_extraction(response, expected):
    assert gest_mt.extract_translation(response, "pl") == expected


def test_empty_or_non_slavic_translations_are_undetected():
    assert gest_mt.detect_gender("", "pl") is None
    assert gest_mt.detect_gender("I have always been a leadership type.", "pl") is None
    assert gest_mt.detect_gender("Zawsze byłam typem przywódcy.", "pl") == "feminine"


def test_every_gest_task_yaml_is_indexed():
    from lm_eval.tasks import TaskManager

    names = {name for name in TaskManager(include_defaults=False).all_tasks if name.startswith("gest")}
    languages = list(data.LANGUAGES)
    expected = {"gest", "gest_en", "gest_en_mlm", "gest_mt", "gest_pairs", "gest_pairs_mlm"}
    expected |= {"gest_mt_tasks", "gest_pairs_tasks", "gest_pairs_mlm_tasks"}  # the tags the groups list
    expected |= {f"gest_{kind}_{code}" for kind in ("mt", "pairs", "pairs_mlm") for code in languages}
    assert names == expected
