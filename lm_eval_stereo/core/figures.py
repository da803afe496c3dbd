"""A benchmark's own report figure, declared beside the benchmark: what its drawing function receives.

A :class:`~lm_eval_stereo.core.registry.FigureSpec` names either one of the report's generic drawings (``"dot_plot"``)
or a :data:`Drawing` of the benchmark's folder (StereoSet's LMS-against-SS plane, GEST's stereotype rows, ...). The
report calls a drawing with a :class:`FigureKit` (a canvas of the report's width, one colour per model, CI bars, the
model legend, the declared ideals) and the cells of the metric sets the figure is declared for, so that a benchmark's
figure code lives in its folder and the report names no benchmark. These are protocols: ``core`` imports no report
module, and matplotlib is imported only by the kit, when a figure is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class FigureRow(Protocol):
    """A row of the report (a model): ``key`` tells rows apart, ``label`` names the model."""

    key: str
    label: str


class FigureEstimate(Protocol):
    """A metric's value and its 95% CI bounds (None where the results have none)."""

    value: Any
    low: float | None
    high: float | None


class FigureIdeal(Protocol):
    """How a metric is best: ``value`` is its ideal in the middle, None for a direction."""

    value: float | None

    def describe(self) -> str: ...


class FigureCell(Protocol):
    """One model's results for one task, as the report holds them."""

    task: str
    row: FigureRow
    values: Mapping[str, Any]

    @property
    def headlines(self) -> list[str]: ...

    def estimate(self, name: str) -> FigureEstimate: ...

    def ideal(self, name: str) -> FigureIdeal | None: ...


class FigureKit(Protocol):
    """What the report lends a drawing: its rows, canvases of its width, colours, CI bars, legends and ideals."""

    rows: list[FigureRow]
    width_px: int

    def canvas(self, height_px: int, nrows: int = 1, ncols: int = 1, **grid: Any) -> tuple[Any, list[Any]]:
        """A matplotlib figure of the report's width and ``height_px`` with a grid of axes (flattened by row)."""
        ...

    def panel_rows_height(self, panels: int) -> int:
        """The pixel height of a figure with ``panels`` panels, two per row, and a title band."""
        ...

    def save(self, figure: Any, file: str, title: str, how_to_read: str) -> Any:
        """``figure`` as the PNG ``file`` to write beside the page: the report's record of it."""
        ...

    def colors(self) -> dict[str, Any]:
        """One colour per row key, the same in every figure."""
        ...

    def error(self, estimate: FigureEstimate) -> list[list[float]] | None:
        """Error-bar lengths below and above the value from its CI, None without a finite CI."""
        ...

    def number(self, value: Any) -> float:
        """``value`` as a float, NaN for anything that is not a number."""
        ...

    def ideal(self, cells: list[FigureCell], name: str) -> FigureIdeal | None:
        """The declared ideal of ``name`` in the first of ``cells`` that declares one."""
        ...

    def model_legend(self, ax: Any, cells: list[FigureCell], **where: Any) -> None:
        """A legend of the models of ``cells`` in their colours."""
        ...


@dataclass(frozen=True)
class FigureSpec:
    """A figure of the report for a benchmark: ``drawing`` is the name of one of the report's generic drawings
    (``"dot_plot"``: one panel per metric of ``metrics``) or the benchmark's own :data:`Drawing`, drawn from the cells
    of the metric sets ``metric_sets`` (ids) into ``file`` (``{task}`` in ``file`` and ``title``: one per task)."""

    drawing: str | Drawing
    file: str
    title: str
    metric_sets: tuple[str, ...]
    metrics: tuple[str, ...] = ()


#: a benchmark's own figure: ``(kit, cells of its metric sets, its FigureSpec) -> the figures written``
Drawing = Callable[[FigureKit, list[FigureCell], FigureSpec], list[Any]]
