"""Bias against capability: per bias benchmark, its headline (up) against each metric of lm_eval's own tasks
(across), one point per model, both with error bars; drawn only where two or more models have both numbers.

The bias headline's bars are its 95% bootstrap CI (±1.96 × lm_eval's stderr where the benchmark's value has no CI,
as a group's mean); the capability metric's bars are ±1.96 × lm_eval's stderr, the normal 95% interval of lm_eval's
own estimate. A metric without a finite value is left out of its panel (and the model out of the legend).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from lm_eval_stereo.report.capability_tables import (
    bias_headline,
    capability_header,
    capability_metrics,
    lm_eval_tasks,
    top_bias_tasks,
)
from lm_eval_stereo.report.figures import Figure, _canvas, _colors, _model_legend, _save, dot_plot_height
from lm_eval_stereo.report.formatting import metric_header
from lm_eval_stereo.report.model import Estimate, Report
from lm_eval_stereo.results.run import is_number

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


def capability_figures(report: Report, directory: Path) -> list[Figure]:
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
        figures.append(_save(figure, directory, f"capability_{bias_task}.png", title, how))
    return figures
