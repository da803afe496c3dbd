"""The report's opening **Reading**: per model, one sentence per benchmark that says where each of its headlines with
a middle ideal stands against it (:mod:`lm_eval_stereo.report.verdicts`)."""

from __future__ import annotations

from lm_eval_stereo.report.formatting import decimals, format_estimate, format_value
from lm_eval_stereo.report.model import Cell, Report, Row
from lm_eval_stereo.report.tables import summary_columns
from lm_eval_stereo.report.titles import language, metric_title
from lm_eval_stereo.report.verdicts import cell_verdict, describe, sample_size


def model_sentences(report: Report, row: Row) -> list[str]:
    """One sentence per benchmark of the model: each headline whose CI lies off the ideal in the metric's words
    ("de SS 57.3 [55.0, 59.6], prefers stereotypes, +7.3 from 50"), then the others at once with their sample sizes
    and CI half-widths. Benchmarks without a headline that has a verdict are left out."""
    found: list[tuple[Cell, str, str, str]] = []  # cell, metric, verdict, its words
    for task, name in summary_columns(report):
        cell = report.cell(task, row)
        if cell is None or name not in cell.values or cell.declaration is None or cell.declaration.benchmark is None:
            continue
        verdict, words = cell_verdict(cell, name), describe(cell, name)
        if verdict is not None and words is not None:
            found.append((cell, name, verdict, words))
    places = _places([cell for cell, *_ in found])
    off: dict[str, list[str]] = {}
    consistent: dict[str, list[tuple[str, Cell, str]]] = {}
    for cell, name, verdict, words in found:
        title = cell.declaration.benchmark.title  # type: ignore[union-attr]
        where = f"{places[cell.task]} {metric_title(cell, name)}"
        off.setdefault(title, [])
        if verdict == "consistent":
            consistent.setdefault(title, []).append((where, cell, name))
        else:
            off[title].append(
                f"{where} {format_estimate(cell.estimate(name), cell.ideal(name), stderr=False, delta=False)}, {words}"
            )
    sentences = []
    for title, parts in off.items():
        if rest := consistent.get(title):
            parts = [*parts, _consistent(rest, others=bool(parts))]
        sentences.append(f"{title}: {'; '.join(parts)}.")
    return sentences


def _places(cells: list[Cell]) -> dict[str, str]:
    """How the sentences name each task: its language, or its task id where the language alone is ambiguous (none,
    or two tasks of one benchmark in the same language: MBBQ's log-likelihood and generative tasks)."""
    keys = {cell.task: (cell.declaration.benchmark.title, language(cell)) for cell in cells}  # type: ignore[union-attr]
    named = [key for key in keys.values() if key[1]]
    return {task: key[1] if key[1] and named.count(key) == 1 else task for task, key in keys.items()}


def _consistent(found: list[tuple[str, Cell, str]], others: bool) -> str:
    """ "no detectable bias on de SS, en SS (n = 100–500, ±4.1–9.5 at 95%)"."""
    sizes = sorted({size for _, cell, _ in found if (size := sample_size(cell)) is not None})
    halves = sorted((cell.estimate(name).high - cell.estimate(name).low) / 2 for _, cell, name in found)  # type: ignore[operator]
    n = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}–{sizes[-1]}" if sizes else "?"
    places = decimals(
        *(bound for _, cell, name in found for bound in (cell.estimate(name).low, cell.estimate(name).high))
    )
    low, high = format_value(halves[0], places=places), format_value(halves[-1], places=places)
    half = low if low == high else f"{low}–{high}"
    where = ", ".join(where for where, _, _ in found)
    return f"no detectable bias {'on the others' if others and len(found) > 3 else 'on ' + where} (n = {n}, ±{half} at 95%)"


def reading_lines(report: Report) -> list[str]:
    """Per model with at least one verdict: its label and its sentences."""
    lines = []
    for row in report.rows:
        if sentences := model_sentences(report, row):
            lines.append(f"{row.label}: {' '.join(sentences)}")
    return lines
