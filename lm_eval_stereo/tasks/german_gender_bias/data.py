"""Loaders for the German gender-bias CSVs of Gnadt et al. (GeBNLP 2025), source ``german-gender-bias``.

Every upstream file is ``;``-separated UTF-8 with a BOM and has quoted fields that contain newlines. The files carry
no licence, so they are only ever read through :func:`lm_eval_stereo.core.sources.fetch` (download at run time, pinned
commit and sha256; the offline mirror in tests). Benchmark-specific loaders (GerBBQ+, SexistStatements) build on
:func:`load_german_csv`; the persona tasks use it too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.core.readers import read_csv, require_text
from lm_eval_stereo.core.sources import fetch
from lm_eval_stereo.tasks.german_gender_bias.sources import GERMAN_GENDER_BIAS

SOURCE = GERMAN_GENDER_BIAS.name
DELIMITER = ";"

#: GerBBQ+ columns the tasks read (``Disambiguating_Context`` is part of every file, also the ambiguous one)
GERBBQ_COLUMNS: tuple[str, ...] = (
    "Question",
    "Answer",
    "Answer_stereo",
    "Ambiguous_Context",
    "Disambiguating_Context",
    "Gender1",
    "Gender2",
    "Name1",
    "Name2",
    "full_prompt",
    "A",
    "B",
    "C",
)
SEXIST_COLUMNS: tuple[str, ...] = ("Prompt", "Type_", "Type", "Gender", "full_prompt")

#: upstream paths of the two GerBBQ+ conditions
GERBBQ_FILES: dict[str, str] = {"amb": "data/GerBBQ_AMB.csv", "dis": "data/GerBBQ_DIS.csv"}
SEXIST_FILE = "data/SexistStatements.csv"


def read_german_csv(file: Path, required_columns: Iterable[str]) -> list[dict[str, str]]:
    """Rows of a local German-gender-bias CSV (``;``, UTF-8 with BOM); raises on a missing column or short row."""
    return read_csv(Path(file), required=list(required_columns), delimiter=DELIMITER)


def load_german_csv(upstream_path: str, required_columns: Iterable[str]) -> list[dict[str, str]]:
    """Fetch ``upstream_path`` of the source (checksum-verified) and return its rows as dicts."""
    return read_german_csv(fetch(SOURCE, upstream_path), required_columns)


def parse_flag(file: str, row_number: int, row: dict[str, str], field: str, allowed: Iterable[int]) -> int:
    """An integer-coded column such as ``Gender1`` (``"1"``) or ``Gender`` (``"1.0"``), checked against ``allowed``."""
    value = row.get(field, "")
    allowed = tuple(allowed)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if number != number or number not in allowed:
        raise MalformedDataError(file, f"expected one of {allowed}, got {value!r}", row=row_number, field=field)
    return int(number)


def _gerbbq_doc(file: str, row_number: int, row: dict[str, str]) -> dict:
    require_text(file, row_number, row, ("full_prompt", "A", "B", "C", "Answer", "Name1", "Name2"))
    genders = {
        row["Name1"]: parse_flag(file, row_number, row, "Gender1", (0, 1)),
        row["Name2"]: parse_flag(file, row_number, row, "Gender2", (0, 1)),
    }
    options = {letter: row[letter] for letter in ("A", "B", "C")}
    if sorted(options.values()) != sorted([row["Name1"], row["Name2"], "unbekannt"]):
        raise MalformedDataError(
            file, f"options {options} are not Name1, Name2 and 'unbekannt'", row=row_number, field="A"
        )
    if row["Answer"] not in genders:
        raise MalformedDataError(file, f"answer {row['Answer']!r} is neither Name1 nor Name2", row_number, "Answer")
    return {
        "id": row_number - 2,
        "full_prompt": row["full_prompt"],
        "options": options,
        "option_genders": {letter: genders.get(name, -1) for letter, name in options.items()},
        "answer": row["Answer"],
        "answer_gender": genders[row["Answer"]],
        "answer_stereo": parse_flag(file, row_number, row, "Answer_stereo", (0, 1)),
        "question": row["Question"],
    }


def gerbbq_docs(rows: list[dict[str, str]], file: str) -> list[dict]:
    """GerBBQ+ rows as task documents (row numbers in errors count the header as row 1)."""
    return [_gerbbq_doc(file, number, row) for number, row in enumerate(rows, start=2)]


def load_gerbbq(condition: str) -> list[dict]:
    """The published GerBBQ+ items of ``condition`` (``"amb"`` or ``"dis"``) as task documents."""
    path = GERBBQ_FILES[condition]
    return gerbbq_docs(load_german_csv(path, GERBBQ_COLUMNS), path)


def _sexist_doc(file: str, row_number: int, row: dict[str, str]) -> dict:
    require_text(file, row_number, row, ("full_prompt", "Type"))
    gender = row["Gender"].strip()
    return {
        "id": row_number - 2,
        "full_prompt": row["full_prompt"],
        "sexist": parse_flag(file, row_number, row, "Type_", (0, 1)),
        "type": row["Type"],
        "gender": parse_flag(file, row_number, row, "Gender", (0, 1)) if gender else -1,
    }


def sexist_docs(rows: list[dict[str, str]], file: str) -> list[dict]:
    """SexistStatements rows as task documents (``gender`` 1 female, 0 male, -1 none)."""
    return [_sexist_doc(file, number, row) for number, row in enumerate(rows, start=2)]


def load_sexist_statements() -> list[dict]:
    """The 325 published SexistStatements as task documents."""
    return sexist_docs(load_german_csv(SEXIST_FILE, SEXIST_COLUMNS), SEXIST_FILE)
