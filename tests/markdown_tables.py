"""Read back the tables of ``lm-eval-stereo report``'s markdown: ``{section: {row label: {column: cell text}}}``."""

from __future__ import annotations


def _cells(line: str) -> list[str]:
    return [cell.strip().replace("\\|", "|") for cell in line.strip().strip("|").split(" | ")]


def parse_tables(markdown: str) -> dict[str, dict[str, dict[str, str]]]:
    """Every ``## section`` (or ``### section``) table as rows keyed by their first cell, each row a ``{header: cell}`` mapping."""
    tables: dict[str, dict[str, dict[str, str]]] = {}
    section, headers = "", []
    for line in markdown.splitlines():
        if line.startswith(("## ", "### ")):
            section, headers = line.lstrip("#").strip(), []
        elif line.startswith("|") and not headers:
            headers = _cells(line)
        elif line.startswith("|") and not line.startswith("|---"):
            cells = _cells(line)
            tables.setdefault(section, {})[cells[0]] = dict(zip(headers, cells))
    return tables
