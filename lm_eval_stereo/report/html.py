"""The report as one HTML page (``index.html``) with its PNG figures beside it, leading with the answer.

The page opens with the results (per model one row per task: its primary headline, 95% CI and verdict, significant
paired differences and caveats marked) and the warnings grouped by kind (one line each naming the tasks it concerns,
the warnings themselves collapsed under it); every other headline, with the reading (a sentence per model and
benchmark), behind a toggle; then the paired comparisons (collapsed), the figures, per task its tables and warnings
(collapsed), and the provenance of every number. No table is wider than
:data:`~lm_eval_stereo.report.tables.MAX_COLUMNS` columns and long cells wrap, so the page fits a laptop screen.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path

from lm_eval_stereo.core.whole_files import write_files
from lm_eval_stereo.report import capability
from lm_eval_stereo.report.figures import Figure, draw_figures
from lm_eval_stereo.report.markdown import (
    LEGEND,
    READING_LEGEND,
    RESULTS_LEGEND,
    SUMMARY_LEGEND,
    models_line,
    other_headlines,
    paired_status,
)
from lm_eval_stereo.report.model import Report
from lm_eval_stereo.report.paired import PairedResult
from lm_eval_stereo.report.precision import precision_line
from lm_eval_stereo.report.sections import SECTION_TITLES, SECTIONS
from lm_eval_stereo.report.tables import (
    LANGUAGE_LEGEND,
    PAIRED_LEGEND,
    RANK_LEGEND,
    Table,
    language_comparison_tables,
    model_comparison_tables,
    provenance_tables,
    rank_agreement_tables,
    results_table,
    split,
    summary_tables,
    task_note,
    task_tables,
    warning_groups,
)
from lm_eval_stereo.report.verdicts import reading_lines
from lm_eval_stereo.results.run import Finding

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1em auto; max-width: 1200px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.85em; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; overflow-wrap: anywhere; }
th:first-child, td:first-child, table.text th, table.text td { text-align: left; }
td:first-child { overflow-wrap: break-word; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; max-width: 900px; }
details { margin: 0.5em 0; }
summary { cursor: pointer; }
.warn { color: #8a4b00; }
.scroll { overflow-x: auto; }
table.results td, table.results th { overflow-wrap: normal; }
"""


def _table(table: Table, css: str = "") -> str:
    """A table; ``css``: a class of its own (``results``: words are not broken)."""
    head = "".join(f"<th>{escape(header)}</th>" for header in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in table.rows)
    classes = " ".join(filter(None, ["" if table.numeric else "text", css]))
    kind = f' class="{classes}"' if classes else ""
    return f'<div class="scroll"><table{kind}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _figure(figure: Figure) -> str:
    if not figure.file:
        return f"<p><strong>{escape(figure.title)}:</strong> no figure. {escape(figure.how_to_read)}</p>"
    return (
        f'<figure><img src="{escape(figure.file)}" alt="{escape(figure.title)}" '
        f'width="{figure.width}" height="{figure.height}">'
        f"<figcaption><strong>{escape(figure.title)}.</strong> How to read this: {escape(figure.how_to_read)}"
        "</figcaption></figure>"
    )


def _warning_item(finding: Finding) -> str:
    where = " · ".join(part for part in (finding.model, finding.task, finding.kind) if part)
    return f"<li>{escape(where)}: {escape(finding.message)}</li>"


def _warnings(report: Report, task: str) -> str:
    """A task's warnings, collapsed under a one-line count."""
    findings = [f for f in report.warnings if f.task == task]
    if not findings:
        return ""
    items = "".join(map(_warning_item, findings))
    return f'<details class="warn"><summary>⚠ {len(findings)} warning(s)</summary><ul>{items}</ul></details>'


def _grouped_warnings(report: Report) -> list[str]:
    """One collapsed block per kind of warning: its mark, what it says of the tasks it concerns and which, the
    individual warnings inside."""
    labels = [row.label for row in report.rows]
    parts = []
    for mark, group in warning_groups(report):
        items = "".join(map(_warning_item, group.findings))
        line = " ".join(filter(None, ["⚠", mark, group.line(labels)]))
        parts.append(f'<details class="warn"><summary>{escape(line)}</summary><ul>{items}</ul></details>')
    return parts


def _results(report: Report) -> list[str]:
    """The first screen: the results table, the warnings grouped by kind, what the paired statistics rest on."""
    parts = [f"<h2>{SECTION_TITLES['results']}</h2>"]
    if table := results_table(report):
        models = f" {escape(models_line(report))}" if len(report.rows) > 1 else ""
        parts += [f"<p>{escape(RESULTS_LEGEND)}{models}</p>", _table(table, "results")]
    parts += _grouped_warnings(report)
    return parts + [f"<p>{escape(line)}</p>" for line in paired_status(report)]


def _every_headline(report: Report) -> list[str]:
    """Every other headline, with the reading, behind a toggle."""
    reading = reading_lines(report)
    parts = [
        f"<h2>{SECTION_TITLES['headlines']}</h2>",
        f'<details class="more"><summary>{other_headlines(report)} more headline(s)'
        f"{', with the reading' if reading else ''}</summary>",
    ]
    if reading:
        parts += ["<h3>Reading</h3>", f"<p>{escape(READING_LEGEND)}</p>"]
        parts += [f'<p class="reading">{escape(line)}</p>' for line in reading]
    parts += [f"<p>{escape(SUMMARY_LEGEND)} {escape(models_line(report))}</p>", *map(_table, summary_tables(report))]
    return [*parts, "</details>"]


def _paired(title: str, legend: str, tables: list[Table], results: list[PairedResult]) -> list[str]:
    """A paired section: legend, and its tables collapsed under the number of comparisons and significant ones."""
    if not tables:
        return []
    comparisons = [comparison for result in results for comparison in result.comparisons]
    rows, marked = len(comparisons), sum(comparison.significant for comparison in comparisons)
    return [
        f"<h2>{escape(title)}</h2>",
        f"<p>{escape(legend)}</p>",
        f"<details><summary>{rows} comparison(s), {marked} significant after Holm</summary>",
        *map(_table, tables),
        "</details>",
    ]


def _capability_section(report: Report) -> list[str]:
    """The tables of lm_eval's own tasks."""
    tasks = capability.lm_eval_tasks(report)
    title = SECTION_TITLES["lm_eval_tasks"]  # as written: "lm_eval's own tasks"
    parts = [f"<h2>{title}</h2>", f"<p>{escape(capability.CAPABILITY_INTRO)}</p>"] if tasks else []
    for task in tasks:
        parts.append(f"<h3>{escape(task)}</h3>")
        if note := capability.capability_note(report, task):
            parts.append(f"<p>{escape(note)}</p>")
        parts += [*map(_table, split(Table(task, *capability.capability_table(report, task)))), _warnings(report, task)]
    return parts


def _capability_summary(report: Report) -> list[str]:
    """The bias headlines next to the capability metrics."""
    summary = capability.summary_table(report)
    if not summary:
        return []
    parts = [f"<h2>{SECTION_TITLES['capability_summary']}</h2>", f"<p>{escape(capability.SUMMARY_INTRO)}</p>"]
    return parts + list(map(_table, split(Table("summary", *summary))))


def _rankings(report: Report) -> list[str]:
    """Each language's ranking against the reference language's."""
    rankings = rank_agreement_tables(report)
    if not rankings:
        return []
    return [f"<h2>{escape(SECTION_TITLES['rankings'])}</h2>", f"<p>{escape(RANK_LEGEND)}</p>", *map(_table, rankings)]


def _details(report: Report) -> list[str]:
    """Per bias task its tables (collapsed) and warnings."""
    parts = [f"<h2>{SECTION_TITLES['details']}</h2>", f"<p>{escape(LEGEND)}</p>"]
    for task in capability.bias_tasks(report):
        parts.append(f"<h3>{escape(task)}</h3>")
        if note := task_note(report, task):
            parts.append(f"<p>{escape(note)}</p>")
        tables = "".join(map(_table, task_tables(report, task)))
        parts += [f"<details><summary>{escape(task)}: every metric and count</summary>{tables}</details>"]
        parts.append(_warnings(report, task))
    return parts


def _provenance(report: Report) -> list[str]:
    """Who computed every number, per model and task."""
    note = precision_line(report)
    parts = [f"<h2>{SECTION_TITLES['provenance']}</h2>", f"<p>{escape(note)}</p>" if note else ""]
    return parts + list(map(_table, provenance_tables(report)))


#: each section of :data:`~lm_eval_stereo.report.sections.SECTIONS` by key: ``(report, figures) -> its parts``
HTML_SECTIONS: dict[str, Callable[[Report, list[Figure]], list[str]]] = {
    "results": lambda report, figures: _results(report),
    "headlines": lambda report, figures: _every_headline(report),
    "capability_summary": lambda report, figures: _capability_summary(report),
    "models_paired": lambda report, figures: _paired(
        SECTION_TITLES["models_paired"],
        PAIRED_LEGEND,
        model_comparison_tables(report),
        report.paired.models if report.paired else [],
    ),
    "languages_paired": lambda report, figures: _paired(
        SECTION_TITLES["languages_paired"],
        LANGUAGE_LEGEND,
        language_comparison_tables(report),
        report.paired.languages if report.paired else [],
    ),
    "rankings": lambda report, figures: _rankings(report),
    "figures": lambda report, figures: (
        [f"<h2>{SECTION_TITLES['figures']}</h2>", *map(_figure, figures)] if figures else []
    ),
    "details": lambda report, figures: _details(report),
    "lm_eval_tasks": lambda report, figures: _capability_section(report),
    "provenance": lambda report, figures: _provenance(report),
}


def render_html(report: Report, figures: list[Figure]) -> str:
    """The whole page: its sections in the order of :data:`~lm_eval_stereo.report.sections.SECTIONS`."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Bias report</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>Bias report</h1>",
        f"<p>{len(report.rows)} model(s), {len(report.tasks)} task(s) and group(s), "
        f"{len(report.runs)} results file(s).</p>",
    ]
    for section in SECTIONS:
        parts += HTML_SECTIONS[section.key](report, figures)
    parts.append("</body></html>")
    return "\n".join(part for part in parts if part)


def write_html(report: Report, directory: str | Path) -> Path:
    """Write ``index.html`` and its figures into ``directory``; returns the page's path. Every file is written whole
    and renamed into place once all are (:func:`~lm_eval_stereo.core.whole_files.write_files`), never through a link
    that leads outside ``directory``: a run killed while writing, or one that finds the disk full, leaves the previous
    page and figures whole; :class:`~lm_eval_stereo.core.whole_files.WriteError` names the file that could not be
    written."""
    directory = Path(directory)
    figures = draw_figures(report) + capability.capability_figures(report)
    files: dict[Path, bytes | str] = {directory / figure.file: figure.png for figure in figures if figure.file}
    page = directory / "index.html"
    files[page] = render_html(report, figures)
    write_files(files, within=directory)
    return page
