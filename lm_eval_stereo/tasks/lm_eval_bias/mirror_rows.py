"""The rows lm_eval's own EsBBQ, CaBBQ, BBQ and CrowS-Pairs tasks read from the hub, made from the pinned upstream
files (offline mirror, cache or download; checksum verified): for offline runs of lm_eval's unchanged task
definitions, where only the rows' origin is replaced (:mod:`.offline_tasks`).

EsBBQ/CaBBQ (``langtech-bsc/EsBBQ-CaBBQ``, one ``data_<lang>/<Category>.full.csv`` per hub config): the CSV flattens
what the hub's rows nest, so ``answer_info.ans0``..``ans2`` (each a Python list literal ``[text, group]``) become the
mapping ``answer_info``, ``stereotyped_groups`` and ``source`` become lists, and the integer columns integers
(lm_eval's ``utils.py`` compares ``label`` with the index of the chosen answer). CrowS-Pairs English
(``nyu-mll/crows-pairs``): the CSV's columns as they are, one row per pair (lm_eval reads ``sent_more``,
``sent_less`` and ``bias_type``). BBQ (``nyu-mll/BBQ``, one ``data/<Category>.jsonl`` per hub config of
``oskarvanderwal/bbq``): each line is a hub row as it is; the hub's ``All`` config (lm_eval's ``bbq``) is the
categories' rows one after the other, here those of the categories the source pins (six of eleven).
"""

from __future__ import annotations

import ast
import csv
import functools
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.arrow_rows import file_backed_dataset, rows_key
from lm_eval_stereo.core.errors import DataError
from lm_eval_stereo.core.registry import get_source
from lm_eval_stereo.core.sources import fetch
from lm_eval_stereo.tasks.lm_eval_bias.metrics import BBQ_CATEGORIES
from lm_eval_stereo.tasks.lm_eval_bias.sources import BBQ

#: integer columns of the EsBBQ/CaBBQ rows
_INTEGERS = ("instance_id", "template_id", "label")
#: columns holding a Python literal (a list, or the ``[text, group]`` of an answer)
_LITERALS = ("stereotyped_groups", "source")
_BOOLEANS = ("proper_nouns_only",)
#: the hub configs of lm_eval's EsBBQ/CaBBQ tasks (``dataset_name``), one CSV each
CATEGORIES = (
    "Age",
    "DisabilityStatus",
    "Gender",
    "LGBTQIA",
    "Nationality",
    "PhysicalAppearance",
    "RaceEthnicity",
    "Religion",
    "SES",
    "SpanishRegion",
)
#: the CrowS-Pairs file of source ``crows-pairs``
CROWS_PAIRS_FILE = "data/crows_pairs_anonymized.csv"


@functools.lru_cache(maxsize=8192)
def _strings(text: str) -> tuple[str, ...] | None:
    """The strings of ``text`` when it is a Python list of strings (1,193 distinct texts among the 273,320 literals of
    the 20 CSVs), else None."""
    value = ast.literal_eval(text)
    return tuple(value) if isinstance(value, list) and all(isinstance(item, str) for item in value) else None


def _literal(path: Path, number: int, field: str, text: str) -> Any:
    """The Python literal ``text`` (``[]`` for an empty field), a new object for every row."""
    if not text.strip():
        return []
    try:
        strings = _strings(text)
        return list(strings) if strings is not None else ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise DataError(f"{path}: row {number}: field {field!r} is not a Python literal ({text[:60]!r})") from exc


def hub_row(path: Path, number: int, row: dict[str, str]) -> dict[str, Any]:
    """One CSV row of EsBBQ/CaBBQ in the hub's shape (see the module docstring)."""
    hub: dict[str, Any] = {key: value for key, value in row.items() if not key.startswith("answer_info.")}
    hub["answer_info"] = {
        f"ans{i}": _literal(path, number, f"answer_info.ans{i}", row[f"answer_info.ans{i}"]) for i in range(3)
    }
    for field in _LITERALS:
        hub[field] = _literal(path, number, field, row[field])
    for field in _INTEGERS:
        if not row[field].strip().isdigit():
            raise DataError(f"{path}: row {number}: field {field!r} is not an integer ({row[field]!r})")
        hub[field] = int(row[field])
    for field in _BOOLEANS:
        hub[field] = row[field] == "True"
    return hub


def _esbbq_file(language: str, category: str) -> str:
    """The upstream file of EsBBQ (``es``) or CaBBQ (``ca``) rows in ``category``; DataError for any other."""
    if language not in ("es", "ca") or category not in CATEGORIES:
        raise DataError(f"no EsBBQ/CaBBQ rows for language {language!r}, category {category!r}")
    return f"data_{language}/{category}.full.csv"


def bbq_rows(language: str, category: str) -> list[dict[str, Any]]:
    """The rows of EsBBQ (``es``) or CaBBQ (``ca``) in ``category`` (a hub config name), in the CSV's order."""
    path = fetch("esbbq-cabbq", _esbbq_file(language, category))
    with open(path, encoding="utf-8", newline="") as handle:
        return [hub_row(path, number, row) for number, row in enumerate(csv.DictReader(handle), start=2)]


def crows_pairs_rows() -> list[dict[str, Any]]:
    """The 1,508 English CrowS-Pairs pairs, in the CSV's order."""
    path = fetch("crows-pairs", CROWS_PAIRS_FILE)
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def offline_bbq_categories() -> tuple[str, ...]:
    """The BBQ categories (the hub configs of oskarvanderwal/bbq) whose rows the pinned source holds, in lm_eval's
    order (:data:`.metrics.BBQ_CATEGORIES`)."""
    pinned = {Path(path).stem for path in BBQ.files}
    return tuple(category for category in BBQ_CATEGORIES if category in pinned)


def _bbq_file(category: str) -> str:
    """The upstream file of BBQ's rows in ``category`` (a hub config name); DataError for a category not pinned."""
    if category not in offline_bbq_categories():
        available = ", ".join(offline_bbq_categories())
        raise DataError(f"no offline BBQ rows for category {category!r}: the pinned source holds {available}")
    return f"data/{category}.jsonl"


def original_bbq_rows(category: str) -> list[dict[str, Any]]:
    """BBQ's rows of ``category`` (a hub config name), in the file's order; a line that is not a JSON object is
    named (file and line)."""
    path = fetch(BBQ.name, _bbq_file(category))
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}: line {number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}: line {number}: not a JSON object")
            rows.append(row)
    return rows


def _files_and_rows(kwargs: dict[str, Any]) -> tuple[list[tuple[str, str]], Callable[[], list[dict[str, Any]]]]:
    """The upstream files (source, path) the rows the override YAML names in its ``dataset_kwargs`` are made of, and
    the function that makes them."""
    mirror = kwargs.get("mirror")
    if mirror == "esbbq-cabbq":
        language, category = str(kwargs.get("language")), str(kwargs.get("category"))
        return [("esbbq-cabbq", _esbbq_file(language, category))], lambda: bbq_rows(language, category)
    if mirror == "bbq":
        categories = kwargs.get("categories")
        if not isinstance(categories, list) or not categories:
            raise DataError(f"dataset_kwargs mirror='bbq': categories must list BBQ categories, got {categories!r}")
        files = [(BBQ.name, _bbq_file(str(category))) for category in categories]
        return files, lambda: [row for category in categories for row in original_bbq_rows(str(category))]
    if mirror == "crows-pairs":
        return [("crows-pairs", CROWS_PAIRS_FILE)], crows_pairs_rows
    raise DataError(f"dataset_kwargs mirror={mirror!r}: one of 'esbbq-cabbq', 'bbq', 'crows-pairs'")


def custom_dataset(**kwargs: Any) -> dict[str, Any]:
    """lm_eval's ``custom_dataset`` hook: ``{"test": rows}`` of the mirror set the override YAML names in its
    ``dataset_kwargs`` (``mirror``: ``esbbq-cabbq`` with ``language`` and ``category``, ``bbq`` with
    ``categories``, or ``crows-pairs``), backed by an Arrow file in the ``datasets`` cache as the hub's rows are
    (:mod:`lm_eval_stereo.core.arrow_rows`: lm_eval's ``process_docs`` then maps them once, not on each call). Its
    key: the pins of the files the rows are made of and this module's code."""
    files, rows = _files_and_rows(kwargs)
    for source, path in files:
        fetch(source, path)  # verified before anything is read from the cache under its pin
    pins = [[source, path, get_source(source).pin(path).digest] for source, path in files]
    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return {"test": file_backed_dataset(rows_key({"files": pins, "code": code}), rows)}
