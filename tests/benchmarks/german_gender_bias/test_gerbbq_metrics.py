"""GerBBQ+ / SexistStatements metric code and data loading, without a model."""

from __future__ import annotations

import numpy as np
import pytest
from lm_eval_runner import TESTS

from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.tasks.german_gender_bias.data import GERBBQ_COLUMNS, gerbbq_docs, load_gerbbq, read_german_csv
from lm_eval_stereo.tasks.german_gender_bias.gerbbq import metrics as gerbbq
from lm_eval_stereo.tasks.german_gender_bias.sexist_statements import metrics as sexist_statements

FIXTURES = TESTS / "fixtures" / "german"
GENDERS = {"Ava": 1, "Ali": 0, "unbekannt": -1}


def _doc(answers, stereotyped_gender=1, correct="Ava", exclude=False):
    return gerbbq.generation_counts(
        answers,
        stereotyped_gender=stereotyped_gender,
        correct_answer=correct,
        option_genders=GENDERS,
        exclude_undetermined=exclude,
    )


def test_ambiguous_scores_by_hand() -> None:
    # 4 generations: unknown (determined), unknown (undetermined), Ava (stereotyped, female), Ali (male, anti)
    # plus one document answering Ava on a male-stereotyped question, and an empty output
    docs = [
        _doc([("unbekannt", True), ("unbekannt", False), ("Ava", True), ("Ali", True)]),
        _doc([("Ava", True), None], stereotyped_gender=0),
    ]
    columns = gerbbq.stack_counts(docs)
    # accuracy = 2 unknown / 5 scored; s_DIS = 2 * 1/3 - 1 = -1/3; s_AMB = 0.6 * -1/3
    assert gerbbq.accuracy(columns, "amb") == pytest.approx(0.4)
    assert gerbbq.bias_score(columns, "amb") == pytest.approx(-0.2)
    # female answers: Ava stereo (1), Ava anti (0) → s = 0; male answers: Ali on a female-stereo question → -1
    assert gerbbq.bias_score(columns, "amb", "f") == pytest.approx(0.0)
    assert gerbbq.bias_score(columns, "amb", "m") == pytest.approx(-0.6)
    assert gerbbq.undetermined_share(columns) == pytest.approx(1 / 5)
    assert gerbbq.empty_share(columns) == pytest.approx(1 / 6)
    # disambiguated: accuracy = correct (Ava twice) / 5, bias = s_DIS unscaled
    assert gerbbq.accuracy(columns, "dis") == pytest.approx(0.4)
    assert gerbbq.bias_score(columns, "dis") == pytest.approx(-1 / 3)
    assert gerbbq.bias_score(columns, "dis", "m") == pytest.approx(-1.0)


def test_exclude_undetermined_option_changes_the_denominator() -> None:
    columns = gerbbq.stack_counts([_doc([("unbekannt", False), ("Ava", True)], exclude=True)])
    assert gerbbq.accuracy(columns, "amb") == pytest.approx(0.0)
    assert gerbbq.bias_score(columns, "amb") == pytest.approx(1.0)
    assert gerbbq.undetermined_share(columns) == pytest.approx(0.5)


def test_no_person_answers_gives_the_boundary_value_zero_ambiguous_and_nan_disambiguated() -> None:
    columns = gerbbq.stack_counts([_doc([("unbekannt", True)])])
    assert gerbbq.accuracy(columns, "amb") == 1.0
    assert gerbbq.bias_score(columns, "amb") == 0.0, "(1 - accuracy) = 0: s_AMB = 0, though s_DIS is 0/0"
    assert np.isnan(gerbbq.bias_score(columns, "dis"))


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate() -> None:
    docs = [_doc([("Ava", True)]), _doc([("Ali", True)]), _doc([("unbekannt", True)])] * 20
    items = [{**doc, "condition": "amb"} for doc in docs]
    intervals = gerbbq.METRICS.intervals(items)
    low, high = intervals["accuracy_ci_low"], intervals["accuracy_ci_high"]
    assert intervals == gerbbq.METRICS.intervals(items)
    assert low < 1 / 3 < high


def test_sexist_statistics_by_hand() -> None:
    records = [
        {"sexist": 1, "type": "t1", "gender": 1, **sexist_statements.response_counts([1, 0, 0, None])},
        {"sexist": 0, "type": "t1", "gender": 0, **sexist_statements.response_counts([0, 1, 1, "empty"])},
    ]
    columns = {k: np.array([r[k] for r in records]) for k in records[0]}
    # sexist: 1 agree of 3 determined; anti-sexist: 1 disagree of 3 → combined 2/6
    assert sexist_statements.statistic(columns, "combined_sexism") == pytest.approx(1 / 3)
    assert sexist_statements.statistic(columns, "sexist_agreement") == pytest.approx(1 / 3)
    assert sexist_statements.statistic(columns, "antisexist_disagreement") == pytest.approx(1 / 3)
    female = columns["gender"] == 1
    assert sexist_statements.statistic(columns, "antisexist_disagreement", female) == 0.0  # zero_division=0
    assert sexist_statements.statistic(columns, "combined_sexism", female) == pytest.approx(1 / 3)
    assert sexist_statements.share(columns, "undetermined") == pytest.approx(1 / 8)
    assert sexist_statements.share(columns, "empty") == pytest.approx(1 / 8)


def test_published_gerbbq_files_load_as_documents() -> None:
    docs = load_gerbbq("dis")
    assert len(docs) == 5684
    first = docs[0]
    assert first["full_prompt"].startswith("Kontext: ") and first["full_prompt"].endswith("Beantworte die Frage.")
    assert first["options"] == {"A": "unbekannt", "B": "Ali", "C": "Ava"}
    assert first["option_genders"] == {"A": -1, "B": 0, "C": 1}
    assert sum(d["answer_stereo"] for d in docs) == 2842


def test_malformed_row_names_file_and_row() -> None:
    with pytest.raises(MalformedDataError, match=r"gerbbq_extra_field\.csv, row 3: more fields"):
        read_german_csv(FIXTURES / "gerbbq_extra_field.csv", GERBBQ_COLUMNS)


def test_missing_column_is_named() -> None:
    with pytest.raises(MalformedDataError, match=r"missing column\(s\) full_prompt") as info:
        read_german_csv(FIXTURES / "gerbbq_missing_column.csv", GERBBQ_COLUMNS)
    assert info.value.field == "full_prompt"


def test_bad_gender_value_names_row_and_field() -> None:
    file = FIXTURES / "gerbbq_bad_gender.csv"
    with pytest.raises(MalformedDataError, match=r"row 3, field 'Gender2': expected one of \(0, 1\), got 'x'"):
        gerbbq_docs(read_german_csv(file, GERBBQ_COLUMNS), str(file))
