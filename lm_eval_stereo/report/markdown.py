"""The report as tables and markdown: one table per task or group, a legend, warnings and a provenance table."""

from __future__ import annotations

from dataclasses import dataclass

from lm_eval_stereo.report import capability_tables as capability
from lm_eval_stereo.report.formatting import format_estimate, format_value, metric_header
from lm_eval_stereo.report.model import COUNT_METRICS, SHARE_METRICS, Report


@dataclass(frozen=True)
class Table:
    """A task's comparison table: headers and one row of cell texts per model."""

    task: str
    headers: list[str]
    rows: list[list[str]]
    numeric: bool = True  # numbers after the first column (right-aligned)


def task_table(report: Report, task: str) -> Table:
    """One row per model: its headline metrics with CIs, then items and the bookkeeping counts."""
    cells = report.task_cells(task)
    headlines = list(dict.fromkeys(name for cell in cells for name in cell.headlines))
    counts = [name for name in (*COUNT_METRICS, *SHARE_METRICS) if any(name in cell.counts for cell in cells)]
    headers = ["model", *map(metric_header, headlines), "items", *map(metric_header, counts)]
    rows = []
    for cell in cells:
        items = cell.items
        shown_items = "" if items is None else f"{items[0]}" + (f" of {items[1]}" if items[0] < items[1] else "")
        row = [cell.row.label]
        row += [format_estimate(name, cell.estimate(name)) if name in cell.values else "" for name in headlines]
        row += [shown_items, *(format_value(cell.counts[name]) if name in cell.counts else "" for name in counts)]
        rows.append(row)
    return Table(task, headers, rows)


def task_note(report: Report, task: str) -> str:
    """What a group row means (empty for a task)."""
    members = next((cell.members for cell in report.task_cells(task) if cell.members), ())
    if not members:
        return ""
    return (
        f"Group of {', '.join(members)}: metrics are lm_eval's means over the members (no CI); "
        "items and counts are totals over the members, shares are those of the pooled items."
    )


LEGEND = (
    "Values with 95% bootstrap CI in brackets (± lm_eval's stderr where the run has one). "
    "↑/↓: higher/lower is better. Metrics whose ideal lies in the middle of their range are shown with "
    "(ideal x) and the signed distance Δ to it, never with an arrow. items: documents scored "
    '("of N" when fewer than the full set).'
)


def _markdown_table(table: Table) -> list[str]:
    escape = lambda text: text.replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(map(escape, table.headers)) + " |"]
    lines.append("|" + "|".join(["---"] + ["---:" if table.numeric else "---"] * (len(table.headers) - 1)) + "|")
    lines += ["| " + " | ".join(map(escape, row)) + " |" for row in table.rows]
    return lines


PROVENANCE_HEADERS = [
    "model",
    "task",
    "version",
    "options",
    "normalization",
    "n-shot",
    "limit",
    "items",
    "lm_eval",
    "model and arguments",
    "results file",
]


def provenance_table(report: Report) -> Table:
    """Where each number came from, per model and task: version, options, normalisation, n-shot, limit, items,
    lm_eval version, the model with its arguments and the results file."""
    rows = []
    for task in report.tasks:
        for cell in report.task_cells(task):
            run, items = cell.run, cell.items
            normalization = cell.values.get("normalization")
            rows.append(
                [
                    cell.row.label,
                    task,
                    run.version(task),
                    ", ".join(f"{key}={value}" for key, value in run.options(task).items()),
                    "" if normalization is None else str(normalization),
                    str((run.data.get("n-shot") or {}).get(task, "")),
                    run.limit or "",
                    "" if items is None else f"{items[0]} of {items[1]}",
                    str(run.data.get("lm_eval_version", "?")),
                    run.identity,
                    str(run.path),
                ]
            )
    return Table("provenance", PROVENANCE_HEADERS, rows, numeric=False)


def capability_markdown(report: Report, summary: bool) -> list[str]:
    """The summary of bias headlines next to capability metrics, or the section of lm_eval's own tasks."""
    if summary:
        table = capability.summary_table(report)
        return [] if table is None else ["", "## Bias next to capability", "", capability.SUMMARY_INTRO, "",
                                         *_markdown_table(Table("summary", *table))]  # fmt: skip
    tasks = capability.lm_eval_tasks(report)
    lines = ["", "## lm_eval's own tasks", "", capability.CAPABILITY_INTRO] if tasks else []
    for task in tasks:
        lines += ["", f"### {task}", ""]
        if note := capability.capability_note(report, task):
            lines += [note, ""]
        lines += _markdown_table(Table(task, *capability.capability_table(report, task)))
        findings = [finding for finding in report.warnings if finding.task == task]
        lines += ["", *(f"- ⚠ {f.model}: {f.kind}: {f.message}" for f in findings)] if findings else []
    return lines


def render_markdown(report: Report) -> str:
    """The comparison as markdown: legend, file warnings, one table per task with its warnings, provenance."""
    lines = [
        "# Bias report",
        "",
        f"{len(report.rows)} model(s), {len(report.tasks)} task(s) and group(s), {len(report.runs)} results file(s).",
        LEGEND,
    ]
    file_warnings = [finding for finding in report.warnings if not finding.task]
    if file_warnings:
        lines += ["", *(f"- ⚠ {finding.message}" for finding in file_warnings)]
    lines += capability_markdown(report, summary=True)
    for task in capability.bias_tasks(report):
        lines += ["", f"## {task}", ""]
        if note := task_note(report, task):
            lines += [note, ""]
        lines += _markdown_table(task_table(report, task))
        findings = [finding for finding in report.warnings if finding.task == task]
        if findings:
            lines += ["", *(f"- ⚠ {f.model}: {f.kind}: {f.message}" for f in findings)]
    lines += capability_markdown(report, summary=False)
    lines += ["", "## Provenance", "", *_markdown_table(provenance_table(report))]
    return "\n".join(lines)
