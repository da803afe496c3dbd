"""The report as markdown, leading with the answer: the results (per model one row per task: its primary headline,
95% CI and verdict) and after them the warnings grouped by kind, each naming the tasks it concerns. With ``details``
(``lm-eval-stereo report --details``) the rest follows: the reading (a sentence per model and benchmark), the summary
of every headline, the paired comparisons, per task its tables and warnings, and the provenance of every number."""

from __future__ import annotations

from collections.abc import Callable

from lm_eval_stereo.report import capability
from lm_eval_stereo.report.model import Report, summary_columns
from lm_eval_stereo.report.precision import precision_line
from lm_eval_stereo.report.sections import SECTION_TITLES, SECTIONS
from lm_eval_stereo.report.tables import (
    LANGUAGE_LEGEND,
    PAIRED_LEGEND,
    RANK_LEGEND,
    Table,
    caveat_lines,
    language_comparison_tables,
    model_comparison_tables,
    model_letters,
    provenance_tables,
    rank_agreement_tables,
    results_table,
    split,
    summary_tables,
    task_note,
    task_tables,
)
from lm_eval_stereo.report.verdicts import reading_lines

LEGEND = (
    "Values with 95% bootstrap CI in brackets (± lm_eval's stderr where the run has one). "
    "↑/↓: higher/lower is better. Metrics whose ideal lies in the middle of their range are shown with "
    "(ideal x) and the signed distance Δ to it, never with an arrow. items: documents scored "
    '("of N" when fewer than the full set).'
)
RESULTS_LEGEND = (
    "Each task's primary headline (the main figure its benchmark declares): value [95% CI] and, where the ideal lies "
    "in the middle of the range, the verdict: the CI above, below or around the ideal (no detectable bias, ± the CI's "
    "half-width), else Δ to the ideal. ↑/↓: higher/lower is better; >B / <B: higher / lower than model B "
    "(Holm-adjusted paired p < 0.05); †n: a caveat, listed below the table."
)
SUMMARY_LEGEND = (
    "Each benchmark headline: value [95% CI]; where the ideal lies in the middle of the range, whether the CI lies "
    "above it, below it or around it (no detectable bias, ± the CI's half-width), else Δ to the ideal; "
    ">B / <B: higher / lower than model B with a Holm-adjusted paired p < 0.05 (see the paired comparisons); "
    "†n: a caveat, listed below the results."
)
READING_LEGEND = (
    "Per model, each headline whose ideal lies in the middle of its range against that ideal, from its 95% CI."
)


def _markdown_table(table: Table) -> list[str]:
    escape = lambda text: text.replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(map(escape, table.headers)) + " |"]
    lines.append("|" + "|".join(["---"] + ["---:" if table.numeric else "---"] * (len(table.headers) - 1)) + "|")
    lines += ["| " + " | ".join(map(escape, row)) + " |" for row in table.rows]
    return lines


def _tables(tables: list[Table]) -> list[str]:
    """Consecutive tables, a blank line between them."""
    lines: list[str] = []
    for table in tables:
        lines += [*([""] if lines else []), *_markdown_table(table)]
    return lines


def models_line(report: Report) -> str:
    """Which letter names which model."""
    return "Models: " + "; ".join(f"{letter} = {label}" for label, letter in model_letters(report).items()) + "."


#: runs without samples named one by one; above that, counted per model
LISTED_RUNS = 4


def paired_status(report: Report) -> list[str]:
    """What the paired statistics rest on: the runs without per-item samples, the comparisons not made."""
    paired = report.paired
    if paired is None:
        return ["Paired comparisons were not computed."]
    lines = []
    if len(paired.without_samples) > LISTED_RUNS:
        counts = "; ".join(f"{label}: {len(files)}" for label, files in paired.without_samples_by_model.items())
        lines.append(
            f"No paired statistics for {len(paired.without_samples)} results files without per-item samples (rerun "
            f"lm_eval with --log_samples; --json lists them): {counts}"
        )
    elif paired.without_samples:
        lines.append(
            "No paired statistics for runs without per-item samples (rerun lm_eval with --log_samples): "
            + "; ".join(paired.without_samples)
        )
    lines += [f"Not compared: {note}" for note in paired.notes]
    return lines


def capability_markdown(report: Report, summary: bool) -> list[str]:
    """The summary of bias headlines next to capability metrics, or the section of lm_eval's own tasks."""
    if summary:
        table = capability.summary_table(report)
        title = SECTION_TITLES["capability_summary"]
        return [] if table is None else ["", f"## {title}", "", capability.SUMMARY_INTRO, "",
                                         *_tables(split(Table("summary", *table)))]  # fmt: skip
    tasks = capability.lm_eval_tasks(report)
    lines = ["", f"## {SECTION_TITLES['lm_eval_tasks']}", "", capability.CAPABILITY_INTRO] if tasks else []
    for task in tasks:
        lines += ["", f"### {task}", ""]
        if note := capability.capability_note(report, task):
            lines += [note, ""]
        lines += _tables(split(Table(task, *capability.capability_table(report, task))))
        findings = [finding for finding in report.warnings if finding.task == task]
        lines += ["", *(f"- ⚠ {f.model}: {f.kind}: {f.message}" for f in findings)] if findings else []
    return lines


def other_headlines(report: Report) -> int:
    """How many headlines of the summary are no task's primary one (the first screen shows those)."""
    primary = {(cell.task, cell.primary) for task in report.tasks for cell in report.task_cells(task)}
    return len([column for column in summary_columns(report) if column not in primary])


def more_line(report: Report) -> str:
    """What ``--details`` adds, said after the first screen."""
    others, tasks = other_headlines(report), capability.lm_eval_tasks(report)
    parts = [f"{others} more headline(s) with their readings"] if others else []
    parts += ["the paired comparisons", "the per-task tables and warnings"]
    parts += [f"the tables of lm_eval's own tasks ({', '.join(tasks)})"] if tasks else []
    return f"More with --details: {', '.join(parts)} and the provenance of every number; the figures: --html DIR."


def results_markdown(report: Report) -> list[str]:
    """The first screen: the results table (per model one row per task), then the caveats grouped by kind and what
    the paired statistics rest on."""
    lines = [f"## {SECTION_TITLES['results']}", ""]
    if table := results_table(report):
        lines += [RESULTS_LEGEND, *([models_line(report)] if len(report.rows) > 1 else []), "", *_tables([table])]
    if caveats := caveat_lines(report):
        lines += ["", *(f"- ⚠ {line}" for line in caveats)]
    if status := paired_status(report):
        lines += ["", *(f"- {line}" for line in status)]
    return lines


def headlines_markdown(report: Report) -> list[str]:
    """The reading (a sentence per model and benchmark) and the summary of every headline."""
    lines = []
    if reading := reading_lines(report):
        lines += ["", "## Reading", "", READING_LEGEND, "", *(f"- {line}" for line in reading)]
    return [*lines, "", "## Summary", "", SUMMARY_LEGEND, models_line(report), "", *_tables(summary_tables(report))]


def _paired_markdown(title: str, legend: str, tables: list[Table]) -> list[str]:
    """A section of paired tables (none without any)."""
    return ["", f"## {title}", "", legend, "", *_tables(tables)] if tables else []


def details_markdown(report: Report) -> list[str]:
    """Per bias task its tables and warnings."""
    lines = ["", f"## {SECTION_TITLES['details']}", "", LEGEND]
    for task in capability.bias_tasks(report):
        lines += ["", f"## {task}", ""]
        if note := task_note(report, task):
            lines += [note, ""]
        lines += _tables(task_tables(report, task))
        findings = [finding for finding in report.warnings if finding.task == task]
        if findings:
            lines += ["", *(f"- ⚠ {f.model}: {f.kind}: {f.message}" for f in findings)]
    return lines


def provenance_markdown(report: Report) -> list[str]:
    """Who computed every number, per model and task."""
    lines = ["", f"## {SECTION_TITLES['provenance']}", ""]
    if note := precision_line(report):
        lines += [note, ""]
    return lines + _tables(provenance_tables(report))


#: each section of :data:`~lm_eval_stereo.report.sections.SECTIONS` the markdown holds, by key
MARKDOWN_SECTIONS: dict[str, Callable[[Report], list[str]]] = {
    "results": results_markdown,
    "headlines": headlines_markdown,
    "capability_summary": lambda report: capability_markdown(report, summary=True),
    "models_paired": lambda report: _paired_markdown(
        SECTION_TITLES["models_paired"], PAIRED_LEGEND, model_comparison_tables(report)
    ),
    "languages_paired": lambda report: _paired_markdown(
        SECTION_TITLES["languages_paired"], LANGUAGE_LEGEND, language_comparison_tables(report)
    ),
    "rankings": lambda report: _paired_markdown(SECTION_TITLES["rankings"], RANK_LEGEND, rank_agreement_tables(report)),
    "details": details_markdown,
    "lm_eval_tasks": lambda report: capability_markdown(report, summary=False),
    "provenance": provenance_markdown,
}


def render_markdown(report: Report, details: bool = False) -> str:
    """The comparison as markdown (see the module docstring): the first screen, with ``details`` every section in
    the order of :data:`~lm_eval_stereo.report.sections.SECTIONS`."""
    lines = [
        "# Bias report",
        "",
        f"{len(report.rows)} model(s), {len(report.tasks)} task(s) and group(s), {len(report.runs)} results file(s).",
        "",
        *results_markdown(report),
    ]
    if not details:
        return "\n".join([*lines, "", more_line(report)])
    for section in SECTIONS[1:]:
        if section.key in MARKDOWN_SECTIONS:
            lines += MARKDOWN_SECTIONS[section.key](report)
    return "\n".join(lines)
