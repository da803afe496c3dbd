"""Tables of lm_eval's own tasks next to the bias benchmarks: one per task or group of lm_eval's, and a summary with
one row per model giving each bias benchmark's headline beside each capability metric.

A bias benchmark's headline is the first of its headline metrics whose declared ideal lies in the middle of its
range (StereoSet SS, GEST g_s, a bias score, S_JSD, ...; else its first headline); the benchmarks shown are those run on their own or as the outermost of the plugin's groups in some run
(``stereoset_multi``, not its languages, when the group was run). Tables are returned as headers and rows of text.
"""

from __future__ import annotations

from lm_eval_stereo.report.formatting import format_estimate, format_value, metric_header
from lm_eval_stereo.report.model import Cell, Estimate, Report
from lm_eval_stereo.results.ideals import Ideal

CAPABILITY_INTRO = (
    "Metrics of lm_eval's own tasks found in the same results files: value ± lm_eval's stderr (lm_eval gives no "
    "bootstrap CI); ↑/↓ as the results' higher_is_better says (no arrow where it says neither); a metric of a second "
    "filter is named metric[filter]. A group is lm_eval's own aggregate over its tasks, which are not shown on their "
    "own."
)
SUMMARY_INTRO = (
    "Each bias benchmark's headline next to each capability metric of lm_eval's own tasks, one row per model: is the "
    "less biased model also the weaker one?"
)

Columns = tuple[list[str], list[list[str]]]


def bias_tasks(report: Report) -> list[str]:
    """The plugin's tasks and groups of the report."""
    return [task for task in report.tasks if not report.is_lm_eval_task(task)]


def lm_eval_tasks(report: Report) -> list[str]:
    """lm_eval's own tasks and groups of the report (members of its groups are not in the report)."""
    return [task for task in report.tasks if report.is_lm_eval_task(task)]


def capability_header(name: str, ideal: Ideal | None) -> str:
    """Column title of a metric of lm_eval's: its name with the arrow of its direction."""
    return f"{name} {ideal.arrow}" if ideal and ideal.arrow else name


def capability_value(estimate: Estimate) -> str:
    """``value ± stderr`` (lm_eval writes no CI for its own tasks)."""
    text = format_value(estimate.value)
    return text if estimate.stderr is None else f"{text} ± {format_value(estimate.stderr)}"


def _items(cell: Cell) -> str:
    items = cell.items
    return "" if items is None else f"{items[0]}" + (f" of {items[1]}" if items[0] < items[1] else "")


def capability_metrics(report: Report, task: str) -> list[tuple[str, Ideal | None]]:
    """The metrics of one of lm_eval's tasks over every model, each with its direction (from the first results
    file that gives one)."""
    metrics: dict[str, Ideal | None] = {}
    for cell in report.task_cells(task):
        for name in cell.headlines:
            metrics[name] = metrics.get(name) or cell.ideal(name)
    return list(metrics.items())


def capability_table(report: Report, task: str) -> Columns:
    """One row per model: each metric as value ± stderr, then the documents scored."""
    metrics = capability_metrics(report, task)
    headers = ["model", *(capability_header(name, ideal) for name, ideal in metrics), "items"]
    rows = [
        [cell.row.label, *(capability_value(cell.estimate(n)) if n in cell.values else "" for n, _ in metrics)]
        + [_items(cell)]
        for cell in report.task_cells(task)
    ]
    return headers, rows


def capability_note(report: Report, task: str) -> str:
    """What a group of lm_eval's holds (empty for a task)."""
    cell = next((cell for cell in report.task_cells(task) if cell.members), None)
    if cell is None:
        return ""
    direct = (cell.run.data.get("group_subtasks") or {}).get(task) or []
    return (
        f"Group of {len(cell.members)} task(s) ({', '.join(direct)}), as lm_eval aggregates them; items are totals "
        "over the tasks."
    )


def top_bias_tasks(report: Report) -> list[str]:
    """The plugin's tasks and groups that some run ran on their own or as its outermost group."""
    top = []
    for task in bias_tasks(report):
        for cell in report.task_cells(task):
            groups = cell.run.data.get("group_subtasks") or {}
            if not any(task in cell.run.members(group) or task in groups[group] for group in groups if group != task):
                top.append(task)
                break
    return top


def bias_headline(report: Report, task: str) -> str | None:
    """A bias benchmark's headline metric: the primary one its metric set declares (:attr:`MetricSet.primary_headline`:
    the bias itself, not the language modelling or accuracy beside it), else its first headline."""
    names = list(dict.fromkeys(name for cell in report.task_cells(task) for name in cell.headlines))
    declared = (cell.declaration.primary for cell in report.task_cells(task) if cell.declaration is not None)
    return next((name for name in declared if name in names), names[0] if names else None)


def summary_table(report: Report) -> Columns | None:
    """One row per model: each bias benchmark's headline, then each capability metric; None unless the report has
    both."""
    bias = [(task, name) for task in top_bias_tasks(report) if (name := bias_headline(report, task))]
    capability = [(task, metric) for task in lm_eval_tasks(report) for metric in capability_metrics(report, task)]
    if not bias or not capability:
        return None
    headers = ["model", *(f"{task} {metric_header(name, report.ideal(task, name))}" for task, name in bias)]
    headers += [f"{task} {capability_header(name, ideal)}" for task, (name, ideal) in capability]
    rows = []
    for row in report.rows:
        line = [row.label]
        for task, name in bias:
            cell = report.cell(task, row)
            line.append(format_estimate(cell.estimate(name), cell.ideal(name)) if cell and name in cell.values else "")
        for task, (name, _) in capability:
            cell = report.cell(task, row)
            line.append(capability_value(cell.estimate(name)) if cell and name in cell.values else "")
        if any(line[1:]):
            rows.append(line)
    return headers, rows
