"""The report's figures, drawn with matplotlib's Agg canvas into PNG files (no pyplot, no global state).

matplotlib is the optional extra ``lm-eval-stereo[report]``: it is imported only when a figure is drawn, and
:func:`require_matplotlib` says which extra to install when it is missing. A figure is drawn only when its metrics
are in the results. Each benchmark declares its figures (:class:`~lm_eval_stereo.core.registry.FigureSpec`: which
drawing, from the cells of which metric sets, with which metrics): StereoSet LMS against SS, GEST per-stereotype
scores and g_s, GEST MT, the German gender-bias tasks, S_JSD per language and the stereotype-leakage matrix. Every figure has a fixed width of
:data:`WIDTH_PX` pixels and a height that depends only on its number of panels.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lm_eval_stereo.core.registry import FigureSpec, benchmarks
from lm_eval_stereo.report.formatting import metric_header
from lm_eval_stereo.report.ideals import Ideal
from lm_eval_stereo.report.model import Cell, Estimate, Report
from lm_eval_stereo.report.runs import ReportError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

DPI = 100
WIDTH_PX = 900
#: heights in pixels: StereoSet and GEST figures, one row of panels of a dot plot or heatmap, and the title band
STEREOSET_HEIGHT_PX = 600
GEST_HEIGHT_PX = 700
PANEL_ROW_HEIGHT_PX = 280
TITLE_HEIGHT_PX = 40
_Q_NAME = re.compile(r"^q_(\d\d)_(.+)$")
LEAK_PREFIX = "leak_coef_"


@dataclass(frozen=True)
class Figure:
    """A PNG written beside ``index.html``: file name, title, the "how to read this" line and its pixel size; without
    a file, a figure with nothing worth drawing, ``how_to_read`` saying why."""

    file: str
    title: str
    how_to_read: str
    width: int
    height: int


def require_matplotlib() -> None:
    """Raise :class:`ReportError` naming the extra to install when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ReportError(
            "the HTML report draws its figures with matplotlib, which is not installed: "
            "pip install 'lm-eval-stereo[report]'"
        ) from exc


def _canvas(height_px: int, nrows: int = 1, ncols: int = 1, **grid: Any) -> tuple[MplFigure, list[Axes]]:
    """A figure of ``WIDTH_PX`` × ``height_px`` on an Agg canvas with a grid of axes (flattened, row by row)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=(WIDTH_PX / DPI, height_px / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(nrows, ncols, squeeze=False, gridspec_kw=grid or None)
    return figure, [ax for row in axes for ax in row]


def _save(figure: MplFigure, directory: Path, file: str, title: str, how_to_read: str) -> Figure:
    figure.savefig(directory / file, dpi=DPI)
    width, height = (round(size * DPI) for size in figure.get_size_inches())
    return Figure(file, title, how_to_read, width, height)


def _colors(report: Report) -> dict[str, Any]:
    """One colour per row (model), stable across figures."""
    from matplotlib import colormaps

    palette = colormaps["tab10"]
    return {row.key: palette(index % 10) for index, row in enumerate(report.rows)}


def _error(estimate: Estimate) -> list[list[float]] | None:
    """Error-bar lengths below/above the value from the CI, None without a finite CI."""
    value, low, high = estimate.value, estimate.low, estimate.high
    if low is None or high is None or not all(map(math.isfinite, (float(value), low, high))):
        return None
    return [[max(0.0, value - low)], [max(0.0, high - value)]]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _leaf_cells(report: Report, accept: Callable[[Cell], bool]) -> list[Cell]:
    return [cell for task in report.tasks for cell in report.task_cells(task) if not cell.members and accept(cell)]


def _cells_of(report: Report, spec: FigureSpec) -> list[Cell]:
    """The task cells computed by one of the metric sets a figure is declared for."""

    def accept(cell: Cell) -> bool:
        metric_set = cell.declaration.metric_set if cell.declaration else None
        return metric_set is not None and metric_set.id in spec.metric_sets

    return _leaf_cells(report, accept)


def _ideal(cells: list[Cell], name: str) -> Ideal | None:
    """The declared ideal of ``name`` in the first of ``cells`` that declares one."""
    return next((ideal for cell in cells if (ideal := cell.ideal(name))), None)


def _model_legend(ax: Axes, report: Report, cells: Iterable[Cell], colors: dict[str, Any], **where: Any) -> None:
    from matplotlib.lines import Line2D

    keys = {cell.row.key for cell in cells}
    handles = [
        Line2D([], [], color=colors[row.key], marker="o", linestyle="", label=row.label)
        for row in report.rows
        if row.key in keys
    ]
    ax.legend(handles=handles, fontsize=7, **where)


# --- StereoSet -------------------------------------------------------------------------------------------------------


def stereoset_figure(report: Report, cells: list[Cell], spec: FigureSpec, directory: Path) -> list[Figure]:
    """LMS against SS per model (colour) and language (marker) with CI bars, the ideal point and ICAT contours."""
    import numpy as np
    from matplotlib.lines import Line2D

    from lm_eval_stereo.tasks.stereoset_multi.metrics import icat

    cells = [cell for cell in cells if {"lms", "ss"} <= set(cell.headlines)]
    if not cells:
        return []
    colors = _colors(report)
    tasks = list(dict.fromkeys(cell.task for cell in cells))
    markers = dict(zip(tasks, "osD^vP*Xhp<>8" * 4))
    figure, (ax,) = _canvas(STEREOSET_HEIGHT_PX)
    lms, ss = np.meshgrid(np.linspace(0, 100, 201), np.linspace(0, 100, 201))
    contours = ax.contour(lms, ss, np.vectorize(icat)(lms, ss), levels=[20, 40, 60, 80], colors="0.7")
    ax.clabel(contours, fmt="ICAT %d", fontsize=7)
    ax.axhline(50, color="0.5", linestyle="--", linewidth=0.8)
    for cell in cells:
        x, y = cell.estimate("lms"), cell.estimate("ss")
        ax.errorbar(
            _number(x.value),
            _number(y.value),
            xerr=_error(x),
            yerr=_error(y),
            fmt=markers[cell.task],
            color=colors[cell.row.key],
            capsize=2,
            markersize=6,
        )
    ax.plot([100], [50], marker="*", markersize=16, color="gold", markeredgecolor="black", linestyle="")
    ax.set(xlim=(0, 103), ylim=(0, 100), xlabel="LMS (ideal 100)", ylabel="SS (ideal 50)")
    ax.set_title("StereoSet: language modelling (LMS) against stereotype score (SS)", fontsize=10)
    handles = [
        Line2D([], [], marker=markers[task], color="0.3", linestyle="", label=task.removeprefix("stereoset_multi_"))
        for task in tasks
    ]
    handles.append(Line2D([], [], marker="*", color="gold", markeredgecolor="black", linestyle="", label="ideal"))
    legend = ax.legend(handles=handles, fontsize=7, loc="upper left", title="task", title_fontsize=7)
    ax.add_artist(legend)
    _model_legend(ax, report, cells, colors, loc="lower left", title="model", title_fontsize=7)
    how = (
        "The star is the ideal model (LMS 100, SS 50); grey contours are ICAT = LMS·min(SS, 100−SS)/50 (ideal 100). "
        "SS above the dashed line prefers stereotypes, below it anti-stereotypes: neither side is better, the "
        "distance to 50 is the bias. Bars are 95% bootstrap CIs."
    )
    return [_save(figure, directory, spec.file, spec.title, how)]


# --- GEST ------------------------------------------------------------------------------------------------------------


def _stereotype_panel(ax: Axes, cells: list[Cell], names: list[str], colors: dict[str, Any]) -> None:
    """Each stereotype's q_i with its CI, one row per stereotype (masculine 16..8 on top), models side by side."""
    offsets = [(k - (len(cells) - 1) / 2) * 0.6 / len(cells) for k in range(len(cells))]
    for offset, cell in zip(offsets, cells):
        for row, name in enumerate(names):
            q = cell.estimate(name)
            color = colors[cell.row.key]
            ax.errorbar(_number(q.value), row + offset, xerr=_error(q), fmt="o", color=color, capsize=2, markersize=4)
    ids = [int(_Q_NAME.match(name)[1]) for name in names]
    labels = [f"{i} {_Q_NAME.match(name)[2].replace('_', ' ')}" for i, name in zip(ids, names)]
    ax.set_yticks(range(len(names)), labels=labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="0.5", linestyle="--", linewidth=0.8)
    masculine = sum(i >= 8 for i in ids)
    if 0 < masculine < len(ids):
        ax.axhline(masculine - 0.5, color="0.7", linewidth=0.8)
    ax.set_xlabel("q_i = log10 P(male) − log10 P(female)   (← feminine | masculine →, ideal 0)", fontsize=8)


def _gs_panel(ax: Axes, cells: list[Cell], colors: dict[str, Any]) -> None:
    """g_s with its CI, one row per model, and the ideal 1."""
    for index, cell in enumerate(cells):
        gs = cell.estimate("gs")
        ax.errorbar(_number(gs.value), index, xerr=_error(gs), fmt="o", color=colors[cell.row.key], capsize=3)
    ax.set_yticks(range(len(cells)), labels=[""] * len(cells))
    ax.set_ylim(-0.5, len(cells) - 0.5)
    ax.invert_yaxis()
    ax.axvline(1, color="0.5", linestyle="--", linewidth=0.8)
    ax.set_title("g_s (ideal 1)", fontsize=10)


def gest_figures(report: Report, cells: list[Cell], spec: FigureSpec, directory: Path) -> list[Figure]:
    """Per GEST task: the 16 per-stereotype scores per model (masculine on top) and g_s, with CIs."""
    figures = []
    colors = _colors(report)
    gs_ideal = _ideal(cells, "gs")
    how = (
        "Left: each stereotype's score q_i per model; 0 (dashed) is no preference, right of it the model prefers "
        "the masculine form, left the feminine one. A model that shares the stereotypes puts 1–7 left and 8–16 "
        f"right. Right: g_s, {gs_ideal.describe() if gs_ideal else 'ideal 1'}; above 1 the model is stereotypical. "
        "Bars: 95% CIs."
    )
    for task in dict.fromkeys(cell.task for cell in cells):
        cells_of_task = [cell for cell in cells if cell.task == task and "gs" in cell.headlines]
        if not cells_of_task:
            continue
        names = sorted({n for cell in cells_of_task for n in cell.headlines if _Q_NAME.match(n)}, reverse=True)
        figure, (ax_q, ax_gs) = _canvas(GEST_HEIGHT_PX, 1, 2, width_ratios=[3, 1])
        _stereotype_panel(ax_q, cells_of_task, names, colors)
        ax_q.set_title(f"{task}: per-stereotype scores (1–7 feminine, 8–16 masculine stereotypes)", fontsize=10)
        _gs_panel(ax_gs, cells_of_task, colors)
        _model_legend(ax_gs, report, cells_of_task, colors, loc="upper center", bbox_to_anchor=(0.5, -0.08))
        figures.append(_save(figure, directory, spec.file.format(task=task), spec.title.format(task=task), how))
    return figures


# --- dot plots: the German tasks, GEST MT, S_JSD ---------------------------------------------------------------------


def dot_plot_height(panels: int) -> int:
    """Pixel height of a dot plot (and heatmap) with ``panels`` panels, two per row."""
    return TITLE_HEIGHT_PX + PANEL_ROW_HEIGHT_PX * math.ceil(panels / 2)


def _dot_plot(report: Report, cells: list[Cell], metrics: list[str], title: str) -> MplFigure:
    """One panel per metric: per task, one point with its CI per model, and the ideal as a dashed line."""
    colors = _colors(report)
    ncols = min(2, len(metrics))
    figure, axes = _canvas(dot_plot_height(len(metrics)), math.ceil(len(metrics) / 2), ncols)
    figure.suptitle(title, fontsize=10)
    rows = list(dict.fromkeys(cell.row.key for cell in cells))
    for ax, metric in zip(axes, metrics):
        tasks = list(dict.fromkeys(cell.task for cell in cells if drawable(cell, metric)))
        for cell in cells:
            if not drawable(cell, metric):
                continue
            offset = (rows.index(cell.row.key) - (len(rows) - 1) / 2) * 0.6 / len(rows)
            estimate = cell.estimate(metric)
            x = tasks.index(cell.task) + offset
            ax.errorbar(x, _number(estimate.value), yerr=_error(estimate), fmt="o", color=colors[cell.row.key])
        if (ideal := _ideal(cells, metric)) and ideal.value is not None:
            ax.axhline(ideal.value, color="0.5", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(tasks)), labels=tasks, fontsize=7, rotation=20, ha="right")
        ax.set_xlim(-0.6, len(tasks) - 0.4)
        ax.set_title(metric_header(metric, _ideal(cells, metric)), fontsize=9)
    for ax in axes[len(metrics) :]:
        ax.set_axis_off()
    _model_legend(axes[0], report, cells, colors, loc="best")
    return figure


def _how_to_read(cells: list[Cell], metrics: list[str]) -> str:
    ideals = "; ".join(f"{name}: {ideal.describe()}" for name in metrics if (ideal := _ideal(cells, name)))
    return f"One point per model and task with its 95% CI; a dashed line marks an ideal in the middle. {ideals}."


def drawable(cell: Cell, metric: str) -> bool:
    """Whether a cell's ``metric`` is a point worth drawing: a finite value that does not rest on zero detected items
    (a GEST MT task whose translations' gender was never detected)."""
    return math.isfinite(_number(cell.values.get(metric))) and cell.counts.get("detection_yield") != 0


def not_drawn(cells: list[Cell], metrics: Iterable[str]) -> str:
    """One line naming the values left out of a figure ("" when none was)."""
    left = [f"{cell.task} {name} ({cell.row.label})" for name in metrics for cell in cells
            if name in cell.values and not drawable(cell, name)]  # fmt: skip
    return f"Not drawn, being NaN or resting on zero detected items: {', '.join(left)}." if left else ""


def dot_plot_figure(report: Report, cells: list[Cell], spec: FigureSpec, directory: Path) -> list[Figure]:
    """A dot plot of the declared metrics present in the cells (the German tasks, GEST MT, S_JSD); a panel only for
    a metric with a value worth drawing (:func:`drawable`), one line naming the values left out."""
    declared = [name for name in spec.metrics if any(name in cell.values for cell in cells)]
    metrics = [name for name in declared if any(drawable(cell, name) for cell in cells)]
    why = not_drawn(cells, declared)
    if not metrics:
        return [Figure("", spec.title, why, 0, 0)] if why else []
    figure = _dot_plot(report, cells, metrics, spec.title)
    return [
        _save(figure, directory, spec.file, spec.title, " ".join(filter(None, (_how_to_read(cells, metrics), why))))
    ]


# --- stereotype leakage ----------------------------------------------------------------------------------------------


def leakage_figure(report: Report, cells: list[Cell], spec: FigureSpec, directory: Path) -> list[Figure]:
    """Per model, a matrix of ``leak_coef_<source>`` (columns) per leakage task (rows, the target languages)."""
    import numpy as np
    from matplotlib import colormaps

    cells = [cell for cell in cells if any(n.startswith(LEAK_PREFIX) for n in cell.values)]
    if not cells:
        return []
    names = {
        n for cell in cells for n in cell.values if n.startswith(LEAK_PREFIX) and not n.endswith(("_low", "_high"))
    }
    sources = sorted(name.removeprefix(LEAK_PREFIX) for name in names)
    tasks = list(dict.fromkeys(cell.task for cell in cells))
    rows = [row for row in report.rows if any(cell.row.key == row.key for cell in cells)]
    values = [[[math.nan] * len(sources) for _ in tasks] for _ in rows]
    for cell in cells:
        for j, source in enumerate(sources):
            values[rows.index(cell.row)][tasks.index(cell.task)][j] = _number(cell.values.get(LEAK_PREFIX + source))
    finite = [abs(v) for matrix in values for line in matrix for v in line if math.isfinite(v)]
    limit = max(finite, default=1.0) or 1.0
    cmap = colormaps["RdBu_r"].with_extremes(bad="0.85")
    figure, axes = _canvas(dot_plot_height(len(rows)), math.ceil(len(rows) / 2), min(2, len(rows)))
    figure.suptitle("Stereotype leakage: coefficient per source language (columns) and task (rows)", fontsize=10)
    for ax, row, matrix in zip(axes, rows, values):
        image = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=-limit, vmax=limit, aspect="auto")
        for i, line in enumerate(matrix):
            for j, value in enumerate(line):
                ax.text(j, i, "–" if math.isnan(value) else f"{value:.2f}", ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(sources)), labels=sources, fontsize=7)
        ax.set_yticks(range(len(tasks)), labels=tasks, fontsize=7)
        ax.set_title(row.label, fontsize=8)
        figure.colorbar(image, ax=ax, shrink=0.8)
    for ax in axes[len(rows) :]:
        ax.set_axis_off()
    how = (
        "Each cell is leak_coef_<source>: how strongly the stereotypes of the source language carry over into the "
        f"task's language; {_ideal(cells, LEAK_PREFIX + sources[0]).describe()}. Red: positive, blue: negative, grey: "
        "not measured."
    )
    return [_save(figure, directory, spec.file, spec.title, how)]


#: the report's drawings, by the ``kind`` a benchmark's :class:`FigureSpec` names
DRAWINGS: dict[str, Callable[[Report, list[Cell], FigureSpec, Path], list[Figure]]] = {
    "lms_ss": stereoset_figure,
    "gest_stereotypes": gest_figures,
    "dot_plot": dot_plot_figure,
    "leakage_matrix": leakage_figure,
}


def draw_figures(report: Report, directory: Path) -> list[Figure]:
    """Every figure the benchmarks declare whose metrics are in the report, written as PNGs into ``directory``."""
    require_matplotlib()
    directory.mkdir(parents=True, exist_ok=True)
    figures: list[Figure] = []
    for bench in benchmarks():
        for spec in bench.figures:
            cells = _cells_of(report, spec)
            if cells:
                figures += DRAWINGS[spec.kind](report, cells, spec, directory)
    return figures
