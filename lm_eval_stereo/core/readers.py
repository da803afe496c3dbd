"""Readers for upstream table files that fail with the file, row and field of the first bad value."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from lm_eval_stereo.core.errors import MalformedDataError


def require_columns(file: Path | str, columns: Iterable[str], required: Iterable[str]) -> None:
    """Raise when any of ``required`` is not among ``columns``."""
    present = set(columns)
    missing = [name for name in required if name not in present]
    if missing:
        raise MalformedDataError(
            str(file), f"missing column(s) {', '.join(missing)}; found {', '.join(sorted(present))}", field=missing[0]
        )


def require_text(file: Path | str, row_number: int, row: dict, fields: Iterable[str]) -> None:
    """Raise when a required field of a row is absent, not a string, or empty."""
    for name in fields:
        value = row.get(name)
        if not isinstance(value, str) or not value.strip():
            raise MalformedDataError(str(file), f"expected non-empty text, got {value!r}", row=row_number, field=name)


def read_csv(
    file: Path, *, required: Iterable[str] = (), delimiter: str = ",", encoding: str = "utf-8-sig"
) -> list[dict[str, str]]:
    """Rows of a CSV file as dicts. Row numbers in errors count CSV records, the header being row 1 (not physical
    lines: a quoted field may span several lines)."""
    required = list(required)
    try:
        with open(file, encoding=encoding, newline="") as handle:
            reader = csv.DictReader(handle, delimiter=delimiter)
            require_columns(file, reader.fieldnames or [], required)
            rows = []
            for record, row in enumerate(reader, start=2):
                if None in row:
                    raise MalformedDataError(
                        str(file), f"more fields than the header has ({row[None]!r} left over)", row=record
                    )
                missing = [name for name in required if row.get(name) is None]
                if missing:
                    raise MalformedDataError(str(file), "row has fewer fields than the header", record, missing[0])
                rows.append(row)
    except UnicodeDecodeError as exc:
        raise MalformedDataError(
            str(file),
            f"not valid {encoding.replace('-sig', '')} text ({exc.reason} at byte {exc.start}); save it as UTF-8",
        ) from None
    except csv.Error as exc:
        raise MalformedDataError(str(file), f"CSV syntax error: {exc}") from None
    return rows


def read_jsonl(file: Path, *, required: Iterable[str] = ()) -> list[dict]:
    """Objects of a JSON-lines file; row numbers are 1-based line numbers."""
    required = list(required)
    rows = []
    with open(file, encoding="utf-8") as handle:
        for number, line in enumerate(_utf8_lines(file, handle), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MalformedDataError(str(file), f"invalid JSON: {exc.msg}", row=number) from None
            if not isinstance(row, dict):
                raise MalformedDataError(str(file), f"expected a JSON object, got {type(row).__name__}", row=number)
            for name in required:
                if name not in row:
                    raise MalformedDataError(str(file), "field is missing", row=number, field=name)
            rows.append(row)
    return rows


def _utf8_lines(file: Path, handle: Iterable[str]) -> Iterator[str]:
    """The lines of an open UTF-8 text file; a decoding error names the file instead of ending in a raw traceback."""
    try:
        yield from handle
    except UnicodeDecodeError as exc:
        raise MalformedDataError(
            str(file), f"not valid utf-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
