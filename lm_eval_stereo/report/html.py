"""The report as one HTML page (``index.html``) with its PNG figures beside it.

The page holds the figures, each with a "how to read this" line, the warnings, the comparison tables of the
markdown report and the provenance of every number: model, results file, task version and options, normalisation,
n-shot, ``--limit``, items scored and the lm_eval version.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from lm_eval_stereo.report import capability_tables as capability
from lm_eval_stereo.report.capability_figure import capability_figures
from lm_eval_stereo.report.figures import Figure, draw_figures
from lm_eval_stereo.report.markdown import LEGEND, Table, provenance_table, task_note, task_table
from lm_eval_stereo.report.model import Report

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th:first-child, td:first-child, table.text th, table.text td { text-align: left; }
figure { margin: 1.5em 0; }
figcaption { font-size: 0.9em; max-width: 900px; }
.warn { color: #8a4b00; }
.scroll { overflow-x: auto; }
"""


def _table(table: Table) -> str:
    head = "".join(f"<th>{escape(header)}</th>" for header in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in table.rows)
    kind = "" if table.numeric else ' class="text"'
    return f'<div class="scroll"><table{kind}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _figure(figure: Figure) -> str:
    return (
        f'<figure><img src="{escape(figure.file)}" alt="{escape(figure.title)}" '
        f'width="{figure.width}" height="{figure.height}">'
        f"<figcaption><strong>{escape(figure.title)}.</strong> How to read this: {escape(figure.how_to_read)}"
        "</figcaption></figure>"
    )


def _warnings(report: Report, task: str | None = None) -> str:
    findings = [f for f in report.warnings if task is None or f.task == task]
    if not findings:
        return ""
    items = "".join(
        f"<li>{escape(' · '.join(part for part in (f.model, f.task, f.kind) if part))}: {escape(f.message)}</li>"
        for f in findings
    )
    return f'<ul class="warn">{items}</ul>'


def _capability_section(report: Report) -> list[str]:
    """The tables of lm_eval's own tasks."""
    tasks = capability.lm_eval_tasks(report)
    parts = ["<h2>lm_eval's own tasks</h2>", f"<p>{escape(capability.CAPABILITY_INTRO)}</p>"] if tasks else []
    for task in tasks:
        parts.append(f"<h3>{escape(task)}</h3>")
        if note := capability.capability_note(report, task):
            parts.append(f"<p>{escape(note)}</p>")
        parts += [_table(Table(task, *capability.capability_table(report, task))), _warnings(report, task)]
    return parts


def render_html(report: Report, figures: list[Figure]) -> str:
    """The whole page."""
    tables: list[Table] = [task_table(report, task) for task in capability.bias_tasks(report)]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Bias report</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>Bias report</h1>",
        f"<p>{len(report.rows)} model(s), {len(report.tasks)} task(s) and group(s), "
        f"{len(report.runs)} results file(s). {escape(LEGEND)}</p>",
    ]
    if report.warnings:
        parts += ["<h2>Warnings</h2>", _warnings(report)]
    if summary := capability.summary_table(report):
        parts += ["<h2>Bias next to capability</h2>", f"<p>{escape(capability.SUMMARY_INTRO)}</p>"]
        parts.append(_table(Table("summary", *summary)))
    if figures:
        parts += ["<h2>Figures</h2>", *map(_figure, figures)]
    parts.append("<h2>Tables</h2>")
    for table in tables:
        parts.append(f"<h3>{escape(table.task)}</h3>")
        if note := task_note(report, table.task):
            parts.append(f"<p>{escape(note)}</p>")
        parts += [_table(table), _warnings(report, table.task)]
    parts += _capability_section(report)
    parts += ["<h2>Provenance</h2>", _table(provenance_table(report)), "</body></html>"]
    return "\n".join(part for part in parts if part)


def write_html(report: Report, directory: str | Path) -> Path:
    """Write ``index.html`` and its figures into ``directory``; returns the page's path."""
    directory = Path(directory)
    figures = draw_figures(report, directory) + capability_figures(report, directory)
    page = directory / "index.html"
    page.write_text(render_html(report, figures), encoding="utf-8")
    return page
