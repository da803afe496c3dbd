"""lm_eval_bias/mirror_rows.py: an EsBBQ/CaBBQ CSV row in the hub's shape (the whole files: test_lm_eval_bias)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lm_eval_stereo.core.errors import DataError
from lm_eval_stereo.tasks.lm_eval_bias.mirror_rows import hub_row

CSV = Path("data_es/Age.full.csv")


def csv_row(**changed: str) -> dict[str, str]:
    row = {
        "context": "Ayer vi a un nieto y a su abuelo.",
        "answer_info.ans0": "['nieto', 'nonOld']",
        "answer_info.ans1": "['abuelo', 'old']",
        "answer_info.ans2": "['No se puede saber', 'unknown']",
        "stereotyped_groups": "['old']",
        "source": "",
        "instance_id": "7",
        "template_id": "3",
        "label": "2",
        "proper_nouns_only": "False",
    }
    return {**row, **changed}


def test_literals_integers_and_booleans_take_the_hub_s_types_and_each_row_its_own_lists() -> None:
    first, second = hub_row(CSV, 2, csv_row()), hub_row(CSV, 3, csv_row(proper_nouns_only="True"))
    assert first["answer_info"] == {
        "ans0": ["nieto", "nonOld"],
        "ans1": ["abuelo", "old"],
        "ans2": ["No se puede saber", "unknown"],
    }
    assert (first["stereotyped_groups"], first["source"]) == (["old"], [])
    assert (first["instance_id"], first["template_id"], first["label"]) == (7, 3, 2)
    assert (first["proper_nouns_only"], second["proper_nouns_only"]) == (False, True)
    assert first["stereotyped_groups"] is not second["stereotyped_groups"]  # the same text, a list per row
    nested = hub_row(CSV, 4, csv_row(source="[['a', 'b'], 'c']"))
    assert nested["source"] == [["a", "b"], "c"]


@pytest.mark.parametrize(
    ("field", "text", "says"),
    [
        ("stereotyped_groups", "['old'", "field 'stereotyped_groups' is not a Python literal"),
        ("answer_info.ans1", "__import__('os')", "field 'answer_info.ans1' is not a Python literal"),
        ("label", "two", "field 'label' is not an integer"),
    ],
)
def test_a_bad_field_is_named_with_its_file_and_row(field: str, text: str, says: str) -> None:
    with pytest.raises(DataError, match=f"Age.full.csv: row 9: {says}"):
        hub_row(CSV, 9, csv_row(**{field: text}))
