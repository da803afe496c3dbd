"""The report as one HTML page (``index.html``) with its PNG figures beside it, leading with the answer.

The page opens with the results (per model one row per task: its primary headline, 95% CI and verdict, significant
paired differences and caveats marked) and the warnings grouped by kind (one line each naming the tasks it concerns,
the warnings themselves collapsed under it); every other headline, with the reading (a sentence per model and
benchmark), behind a toggle; then the paired comparisons (collapsed), the figures, per task its tables and warnings
(collapsed), and the provenance of every number. No table is wider than
:data:`~lm_eval_stereo.report.tables.MAX_COLUMNS` columns and long cells wrap, so the page fits a laptop screen.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

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
    parts = ["<h2>Results</h2>"]
    if table := results_table(report):
        models = f" {escape(models_line(report))}" if len(report.rows) > 1 else ""
        parts += [f"<p>{escape(RESULTS_LEGEND)}{models}</p>", _table(table, "results")]
    parts += _grouped_warnings(report)
    return parts + [f"<p>{escape(line)}</p>" for line in paired_status(report)]


def _every_headline(report: Report) -> list[str]:
    """Every other headline, with the reading, behind a toggle."""
    reading = reading_lines(report)
    parts = [
        "<h2>Every headline</h2>",
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
    parts = ["<h2>lm_eval's own tasks</h2>", f"<p>{escape(capability.CAPABILITY_INTRO)}</p>"] if tasks else []
    for task in tasks:
        parts.append(f"<h3>{escape(task)}</h3>")
        if note := capability.capability_note(report, task):
            parts.append(f"<p>{escape(note)}</p>")
        parts += [*map(_table, split(Table(task, *capability.capability_table(report, task)))), _warnings(report, task)]
    return parts


def render_html(report: Report, figures: list[Figure]) -> str:
    """The whole page."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Bias report</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>Bias report</h1>",
        f"<p>{len(report.rows)} model(s), {len(report.tasks)} task(s) and group(s), "
        f"{len(report.runs)} results file(s).</p>",
    ]
    parts += [*_results(report), *_every_headline(report)]
    if summary := capability.summary_table(report):
        parts += ["<h2>Bias next to capability</h2>", f"<p>{escape(capability.SUMMARY_INTRO)}</p>"]
        parts += map(_table, split(Table("summary", *summary)))
    paired = report.paired
    parts += _paired(
        "Model vs model (paired)", PAIRED_LEGEND, model_comparison_tables(report), paired.models if paired else []
    )
    parts += _paired(
        "Language vs language (paired)",
        LANGUAGE_LEGEND,
        language_comparison_tables(report),
        paired.languages if paired else [],
    )
    if rankings := rank_agreement_tables(report):
        parts += ["<h2>Rankings against the reference language</h2>", f"<p>{escape(RANK_LEGEND)}</p>"]
        parts += map(_table, rankings)
    if figures:
        parts += ["<h2>Figures</h2>", *map(_figure, figures)]
    parts += ["<h2>Details</h2>", f"<p>{escape(LEGEND)}</p>"]
    for task in capability.bias_tasks(report):
        parts.append(f"<h3>{escape(task)}</h3>")
        if note := task_note(report, task):
            parts.append(f"<p>{escape(note)}</p>")
        tables = "".join(map(_table, task_tables(report, task)))
        parts += [f"<details><summary>{escape(task)}: every metric and count</summary>{tables}</details>"]
        parts.append(_warnings(report, task))
    parts += _capability_section(report)
    note = precision_line(report)
    parts += ["<h2>Provenance</h2>", f"<p>{escape(note)}</p>" if note else ""]
    parts += [*map(_table, provenance_tables(report)), "</body></html>"]
    return "\n".join(part for part in parts if part)


def write_html(report: Report, directory: str | Path) -> Path:
    """Write ``index.html`` and its figures into ``directory``; returns the page's path. The page is written to
    ``.index.html.part`` and renamed, so a run killed while writing leaves the previous page whole."""
    directory = Path(directory)
    figures = draw_figures(report, directory) + capability.capability_figures(report, directory)
    page, part = directory / "index.html", directory / ".index.html.part"
    part.write_text(render_html(report, figures), encoding="utf-8")
    part.replace(page)
    return page
