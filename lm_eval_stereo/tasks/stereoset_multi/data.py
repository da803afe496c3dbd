"""Multilingual StereoSet (Öztürk et al. 2023) from the upstream pandas pickles or the mirror's JSONL copies.

One row per StereoSet item, intrasentence and intersentence rows interleaved (so that ``--limit`` samples both),
with the fields
``lang, test, id, target, term, bias_type, context, c{1,2,3}_{id,gold_label,sentence,word}``. ``term`` is the English
target term (``target_original`` for translations), by which the term-level metrics group items.
"""

from __future__ import annotations

from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.core.readers import read_jsonl, require_text
from lm_eval_stereo.tasks.stereoset_multi.jsonl import pickle_rows
from lm_eval_stereo.tasks.stereoset_multi.metrics import BIAS_TYPES, CANDIDATES, LABELS, TESTS
from lm_eval_stereo.tasks.stereoset_multi.sources import STEREOSET_MULTI

SOURCE = STEREOSET_MULTI.name
LANGUAGES = ("en", "de", "fr", "es", "tr")


def upstream_path(test: str, lang: str, suffix: str = ".pkl") -> str:
    return f"create_dataset/data/{test}/df_{test}_{lang}{suffix}"


def _raw_rows(test: str, lang: str) -> tuple[list[dict[str, Any]], str]:
    """Rows of one upstream table: the mirror's JSONL when present, else the checksum-verified pickle."""
    jsonl = upstream_path(test, lang, ".jsonl")
    if sources.in_mirror(SOURCE, jsonl):
        path = sources.fetch(SOURCE, jsonl)
        return read_jsonl(path), str(path)
    path = sources.fetch(SOURCE, upstream_path(test, lang))
    return pickle_rows(path), str(path)


def _convert_row(raw: dict[str, Any], *, test: str, lang: str, origin: str, row_number: int) -> dict[str, Any]:
    text_fields = ["id", "target", "bias_type", "context"]
    for c in CANDIDATES:
        text_fields += [f"c{c}_id", f"c{c}_gold_label", f"c{c}_sentence"] + ([f"c{c}_word"] if test == TESTS[0] else [])
    if lang != "en":
        text_fields.append("target_original")
    require_text(origin, row_number, raw, text_fields)
    if raw["bias_type"] not in BIAS_TYPES:
        raise MalformedDataError(origin, f"unknown bias type {raw['bias_type']!r}", row_number, "bias_type")
    labels = sorted(raw[f"c{c}_gold_label"] for c in CANDIDATES)
    if labels != sorted(LABELS):
        raise MalformedDataError(
            origin, f"gold labels must be one each of {', '.join(LABELS)}, got {labels}", row_number, "c1_gold_label"
        )
    if test == TESTS[0] and "BLANK" not in raw["context"]:
        raise MalformedDataError(origin, "intrasentence context has no BLANK", row_number, "context")
    row = {
        "lang": lang,
        "test": test,
        "id": raw["id"],
        "target": raw["target"],
        "term": raw["target_original"] if lang != "en" else raw["target"],
        "bias_type": raw["bias_type"],
        "context": raw["context"],
    }
    for c in CANDIDATES:
        for name in ("id", "gold_label", "sentence"):
            row[f"c{c}_{name}"] = raw[f"c{c}_{name}"]
        row[f"c{c}_word"] = raw.get(f"c{c}_word", "") if test == TESTS[0] else ""
    return row


def _require_unique_ids(rows: list[dict[str, Any]], origin: str) -> None:
    """Item ids key the per-document results: a repeated id would silently merge two items."""
    first: dict[str, int] = {}
    for number, row in enumerate(rows, start=1):
        if row["id"] in first:
            raise MalformedDataError(
                origin, f"duplicate id {row['id']!r} (first in row {first[row['id']]})", number, "id"
            )
        first[row["id"]] = number


def load_rows(lang: str) -> list[dict[str, Any]]:
    """All intrasentence and intersentence rows of ``lang`` (en, de, fr, es, tr), validated."""
    if lang not in LANGUAGES:
        raise ValueError(f"StereoSet language must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    per_test = []
    for test in TESTS:
        raw_rows, origin = _raw_rows(test, lang)
        rows = [
            _convert_row(raw, test=test, lang=lang, origin=origin, row_number=number)
            for number, raw in enumerate(raw_rows, start=1)
        ]
        _require_unique_ids(rows, origin)
        per_test.append(rows)
    rows = [row for pair in zip(*per_test) for row in pair]
    shortest = min(len(part) for part in per_test)
    return rows + [row for part in per_test for row in part[shortest:]]
