"""The report's figures, drawn with matplotlib's Agg canvas as PNG images (no pyplot, no global state), which
:func:`lm_eval_stereo.report.html.write_html` writes beside the page.

matplotlib is the optional extra ``lm-eval-stereo[report]``: it is imported only when a figure is drawn, and
:func:`require_matplotlib` says which extra to install when it is missing. A figure is drawn only when its metrics
are in the results. Each benchmark declares its figures (:class:`~lm_eval_stereo.core.figures.FigureSpec`: which
drawing, from the cells of which metric sets, with which metrics): the report's generic dot plot, or a drawing of the
benchmark's own folder, which gets a :class:`Kit` (:class:`~lm_eval_stereo.core.figures.FigureKit`). Every figure has
a fixed width of :data:`WIDTH_PX` pixels and a height that depends only on its number of panels.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import benchmarks
from lm_eval_stereo.report.formatting import metric_header
from lm_eval_stereo.report.model import Cell, Estimate, Report
from lm_eval_stereo.results.ideals import Ideal
from lm_eval_stereo.results.run import ReportError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

DPI = 100
WIDTH_PX = 900
#: heights in pixels: one row of panels of a dot plot or heatmap, and the title band
PANEL_ROW_HEIGHT_PX = 280
TITLE_HEIGHT_PX = 40


@dataclass(frozen=True)
class Figure:
    """A PNG to write beside ``index.html``: file name, title, the "how to read this" line, its pixel size and its
    bytes; without a file, a figure with nothing worth drawing, ``how_to_read`` saying why."""

    file: str
    title: str
    how_to_read: str
    width: int
    height: int
    png: bytes = field(default=b"", repr=False, compare=False)


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


def _save(figure: MplFigure, file: str, title: str, how_to_read: str) -> Figure:
    """The figure as the PNG ``file`` (its bytes, written with the page)."""
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=DPI)
    width, height = (round(size * DPI) for size in figure.get_size_inches())
    return Figure(file, title, how_to_read, width, height, image.getvalue())


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


# --- dot plots -------------------------------------------------------------------------------------------------------


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
    (a ``detection_yield`` of 0: no output's gender was detected)."""
    return math.isfinite(_number(cell.values.get(metric))) and cell.counts.get("detection_yield") != 0


def not_drawn(cells: list[Cell], metrics: Iterable[str]) -> str:
    """One line naming the values left out of a figure ("" when none was)."""
    left = [f"{cell.task} {name} ({cell.row.label})" for name in metrics for cell in cells
            if name in cell.values and not drawable(cell, name)]  # fmt: skip
    return f"Not drawn, being NaN or resting on zero detected items: {', '.join(left)}." if left else ""


def dot_plot_figure(report: Report, cells: list[Cell], spec: FigureSpec) -> list[Figure]:
    """A dot plot of the declared metrics present in the cells; a panel only for a metric with a value worth drawing
    (:func:`drawable`), one line naming the values left out."""
    declared = [name for name in spec.metrics if any(name in cell.values for cell in cells)]
    metrics = [name for name in declared if any(drawable(cell, name) for cell in cells)]
    why = not_drawn(cells, declared)
    if not metrics:
        return [Figure("", spec.title, why, 0, 0)] if why else []
    figure = _dot_plot(report, cells, metrics, spec.title)
    return [_save(figure, spec.file, spec.title, " ".join(filter(None, (_how_to_read(cells, metrics), why))))]


@dataclass(frozen=True)
class Kit:
    """The report's drawing kit for a benchmark's own figure (:class:`~lm_eval_stereo.core.figures.FigureKit`): the
    report's rows, canvases of :data:`WIDTH_PX`, its colours and legends, its PNGs."""

    report: Report
    width_px: int = WIDTH_PX

    @property
    def rows(self) -> list[Any]:
        return list(self.report.rows)

    def canvas(self, height_px: int, nrows: int = 1, ncols: int = 1, **grid: Any) -> tuple[MplFigure, list[Axes]]:
        return _canvas(height_px, nrows, ncols, **grid)

    def panel_rows_height(self, panels: int) -> int:
        return dot_plot_height(panels)

    def save(self, figure: MplFigure, file: str, title: str, how_to_read: str) -> Figure:
        return _save(figure, file, title, how_to_read)

    def colors(self) -> dict[str, Any]:
        return _colors(self.report)

    def error(self, estimate: Estimate) -> list[list[float]] | None:
        return _error(estimate)

    def number(self, value: Any) -> float:
        return _number(value)

    def ideal(self, cells: list[Cell], name: str) -> Ideal | None:
        return _ideal(cells, name)

    def model_legend(self, ax: Axes, cells: list[Cell], **where: Any) -> None:
        _model_legend(ax, self.report, cells, _colors(self.report), **where)


#: the report's generic drawings, by the name a benchmark's :class:`FigureSpec` gives
DRAWINGS: dict[str, Callable[[Report, list[Cell], FigureSpec], list[Figure]]] = {"dot_plot": dot_plot_figure}


def draw_figures(report: Report) -> list[Figure]:
    """Every figure the benchmarks declare whose metrics are in the report, as PNGs."""
    require_matplotlib()
    figures: list[Figure] = []
    for bench in benchmarks():
        for spec in bench.figures:
            cells = _cells_of(report, spec)
            if not cells:
                continue
            if isinstance(spec.drawing, str):
                figures += DRAWINGS[spec.drawing](report, cells, spec)
            else:
                figures += spec.drawing(Kit(report), cells, spec)
    return figures
