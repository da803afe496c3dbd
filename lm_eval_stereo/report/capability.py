"""lm_eval's own tasks beside the bias benchmarks: their tables and the bias-against-capability figure.

Tables of lm_eval's own tasks next to the bias benchmarks: one per task or group of lm_eval's, and a summary with
one row per model giving each bias benchmark's headline beside each capability metric.

A bias benchmark's headline is the first of its headline metrics whose declared ideal lies in the middle of its
range (StereoSet SS, GEST g_s, a bias score, S_JSD, ...; else its first headline); the benchmarks shown are those run on their own or as the outermost of the plugin's groups in some run
(``stereoset_multi``, not its languages, when the group was run). Tables are returned as headers and rows of text.

Bias against capability: per bias benchmark, its headline (up) against each metric of lm_eval's own tasks
(across), one point per model, both with error bars; drawn only where two or more models have both numbers.

The bias headline's bars are its 95% bootstrap CI (±1.96 × lm_eval's stderr where the benchmark's value has no CI,
as a group's mean); the capability metric's bars are ±1.96 × lm_eval's stderr, the normal 95% interval of lm_eval's
own estimate. A metric without a finite value is left out of its panel (and the model out of the legend).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lm_eval_stereo.report.figures import Figure, _canvas, _colors, _model_legend, _save, dot_plot_height
from lm_eval_stereo.report.formatting import format_estimate, format_value, metric_header
from lm_eval_stereo.report.model import Cell, Estimate, Report
from lm_eval_stereo.results.ideals import Ideal
from lm_eval_stereo.results.run import is_number

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
    return [task for task in report.tasks if not report.is_undeclared_task(task)]


def lm_eval_tasks(report: Report) -> list[str]:
    """lm_eval's own tasks and groups of the report (members of its groups are not in the report)."""
    return [task for task in report.tasks if report.is_undeclared_task(task)]


def capability_header(name: str, ideal: Ideal | None) -> str:
    """Column title of a metric of lm_eval's: its name with the arrow of its direction."""
    return f"{name} {ideal.arrow}" if ideal and ideal.arrow else name


def capability_value(estimate: Estimate) -> str:
    """``value ± stderr`` (lm_eval writes no CI for its own tasks)."""
    text = format_value(estimate.value)
    return text if estimate.stderr is None else f"{text} ± {format_value(estimate.stderr)}"


def _items(cell: Cell) -> str:
    items = cell.document_counts
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
    direct = cell.run.direct_members(task)
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
            within = (cell.run.members(group) + cell.run.direct_members(group) for group in groups if group != task)
            if not any(task in members for members in within):
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


#: the normal quantile of a two-sided 95% interval, for bars from lm_eval's stderr
Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Point:
    """One model in a panel: capability ``x`` and bias ``y`` with the bounds of their bars (None: no bar)."""

    key: str
    label: str
    x: float
    x_bounds: tuple[float, float] | None
    y: float
    y_bounds: tuple[float, float] | None


def _bounds(estimate: Estimate) -> tuple[float, float] | None:
    """The 95% CI where finite, else value ± 1.96 × stderr, else None."""
    if estimate.low is not None and estimate.high is not None and math.isfinite(estimate.low + estimate.high):
        return estimate.low, estimate.high
    if estimate.stderr is not None and math.isfinite(estimate.stderr):
        value = float(estimate.value)
        return value - Z_95 * estimate.stderr, value + Z_95 * estimate.stderr
    return None


def _finite(estimate: Estimate) -> bool:
    return is_number(estimate.value) and math.isfinite(estimate.value)


def panel_points(report: Report, bias_task: str, headline: str, task: str, metric: str) -> list[Point]:
    """The models with a finite ``headline`` of ``bias_task`` and a finite ``metric`` of lm_eval's ``task``."""
    points = []
    for row in report.rows:
        bias, capability = report.cell(bias_task, row), report.cell(task, row)
        if bias is None or capability is None or headline not in bias.values or metric not in capability.values:
            continue
        y, x = bias.estimate(headline), capability.estimate(metric)
        if _finite(x) and _finite(y):
            points.append(Point(row.key, row.label, float(x.value), _bounds(x), float(y.value), _bounds(y)))
    return points


def _bar(value: float, bounds: tuple[float, float] | None) -> list[list[float]] | None:
    return None if bounds is None else [[max(0.0, value - bounds[0])], [max(0.0, bounds[1] - value)]]


def capability_figures(report: Report) -> list[Figure]:
    """One figure per bias benchmark headline with a panel per capability metric that two or more models have."""
    colors = _colors(report)
    figures = []
    for bias_task in top_bias_tasks(report):
        headline = bias_headline(report, bias_task)
        if headline is None:
            continue
        panels = [
            (task, metric, ideal, points)
            for task in lm_eval_tasks(report)
            for metric, ideal in capability_metrics(report, task)
            if len(points := panel_points(report, bias_task, headline, task, metric)) >= 2
        ]
        if not panels:
            continue
        figure, axes = _canvas(dot_plot_height(len(panels)), math.ceil(len(panels) / 2), min(2, len(panels)))
        bias_ideal = report.ideal(bias_task, headline)
        title = f"{bias_task}: {metric_header(headline, bias_ideal)} against lm_eval's own tasks"
        figure.suptitle(title, fontsize=10)
        for ax, (task, metric, ideal, points) in zip(axes, panels):
            for point in points:
                ax.errorbar(
                    point.x,
                    point.y,
                    xerr=_bar(point.x, point.x_bounds),
                    yerr=_bar(point.y, point.y_bounds),
                    fmt="o",
                    color=colors[point.key],
                    capsize=2,
                )
            if bias_ideal is not None and bias_ideal.value is not None:
                ax.axhline(bias_ideal.value, color="0.5", linestyle="--", linewidth=0.8)
            ax.set_xlabel(f"{task} {capability_header(metric, ideal)}", fontsize=8)
            ax.set_ylabel(metric_header(headline, bias_ideal), fontsize=8)
        for ax in axes[len(panels) :]:
            ax.set_axis_off()
        shown = {point.key for *_, points in panels for point in points}
        _model_legend(axes[0], report, [cell for cell in report.task_cells(bias_task) if cell.row.key in shown], colors)
        ideal_text = bias_ideal.describe() if bias_ideal else "no declared direction"
        how = (
            f"One point per model. Up: {bias_task}'s {headline} ({ideal_text}) with its 95% bootstrap CI "
            f"(±1.96 × stderr where it has none); the dashed line is its ideal. Across: a metric of lm_eval's own task "
            "(↑ further right is more capable, ↓ further left) with ±1.96 × lm_eval's stderr. Is the less biased "
            "model also the weaker one? Overlapping bars do not separate the models."
        )
        figures.append(_save(figure, f"capability_{bias_task}.png", title, how))
    return figures
