"""Read back the tables of ``lm-eval-stereo report``'s markdown: ``{section: {row label: {column: cell text}}}``."""

from __future__ import annotations

from collections.abc import Iterator


def _cells(line: str) -> list[str]:
    return [cell.strip().replace("\\|", "|") for cell in line.strip().strip("|").split(" | ")]


def _rows(markdown: str) -> Iterator[tuple[str, dict[str, str]]]:
    """Every table row in order with the ``## section`` (or ``### section``) it sits in, as ``{header: cell}``."""
    section, headers = "", []
    for line in markdown.splitlines():
        if not line.startswith("|"):
            headers = []
            if line.startswith(("## ", "### ")):
                section = line.lstrip("#").strip()
        elif not headers:
            headers = _cells(line)
        elif not line.startswith("|---"):
            yield section, dict(zip(headers, _cells(line)))


def parse_tables(markdown: str) -> dict[str, dict[str, dict[str, str]]]:
    """Every ``## section``'s (or ``### section``'s) tables as rows keyed by their first cell, each row a
    ``{header: cell}`` mapping; the consecutive tables a wide table was split into are merged by row."""
    tables: dict[str, dict[str, dict[str, str]]] = {}
    for section, row in _rows(markdown):
        tables.setdefault(section, {}).setdefault(next(iter(row.values())), {}).update(row)
    return tables


def section_rows(markdown: str, section: str) -> list[dict[str, str]]:
    """The rows of the tables of one ``## section``, in order, each a ``{header: cell}`` mapping (rows whose first
    cell repeats, e.g. one task for several models, are kept apart)."""
    return [row for found, row in _rows(markdown) if found == section]


def section_lines(markdown: str, section: str) -> list[str]:
    """The lines of one ``## section`` (up to the next ``## ``)."""
    return markdown.split(f"\n## {section}\n")[1].split("\n## ")[0].splitlines()
