"""EuroGEST's report figure: per model, a stereotype × language heatmap of the masculine ratio R_i (Rowe et al. 2025,
Fig. 2), with g_s per language under it."""

from __future__ import annotations

import math
from typing import Any

from lm_eval_stereo.core.figures import FigureCell, FigureKit, FigureSpec
from lm_eval_stereo.tasks.gest.metrics import STEREOTYPES, stereotype_label

HEIGHT_PX = 720
PREFIX = "eurogest_"


def _language(task: str) -> str:
    """The column label of a task: its language code (``eurogest_de`` -> ``de``), else its name."""
    return task.removeprefix(PREFIX)


def heatmap_figures(kit: FigureKit, cells: list[FigureCell], spec: FigureSpec) -> list[Any]:
    """One heatmap per model: rows the 16 stereotypes (1-7 feminine on top), columns the languages it was run on."""
    figures = []
    how = (
        "Each cell: the mean masculine ratio R_i = p_m / (p_m + p_f) of a stereotype's sentences in one language; 0.5 "
        "(white) is no preference, red masculine, blue feminine; grey: fewer sentences than the task's minimum (NaN, "
        "as in the reference). A model that shares the stereotypes is bluer in rows 1-7 than in rows 8-16. Under each "
        "column: g_s (ideal 1) with its 95% CI."
    )
    for index, row in enumerate(kit.rows, start=1):
        mine = [cell for cell in cells if cell.row.key == row.key and "gs" in cell.headlines]
        if not mine:
            continue
        mine.sort(key=lambda cell: cell.task)
        matrix = [[kit.number(cell.values.get(f"mr_{stereotype_label(s)}")) for cell in mine] for s in STEREOTYPES]
        figure, axes = kit.canvas(HEIGHT_PX, 1, 1)
        ax = axes[0] if isinstance(axes, list) else axes
        image = ax.imshow(matrix, cmap="RdBu_r", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_facecolor("0.8")  # NaN cells are left transparent: grey
        for i, values in enumerate(matrix):
            for j, value in enumerate(values):
                if not math.isnan(value):
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=6)
        labels = []
        for cell in mine:
            gs = cell.estimate("gs")
            interval = f"\n[{gs.low:.2f}, {gs.high:.2f}]" if gs.low is not None and gs.high is not None else ""
            labels.append(f"{_language(cell.task)}\ng_s {kit.number(gs.value):.2f}{interval}")
        ax.set_xticks(range(len(mine)), labels=labels, fontsize=7)
        ax.set_yticks(range(len(STEREOTYPES)), labels=[stereotype_label(s) for s in STEREOTYPES], fontsize=7)
        ax.axhline(len(STEREOTYPES) / 2 - 1.5, color="0.3", linewidth=0.8)
        ax.set_title(f"{row.label}: masculine ratio per stereotype and language", fontsize=10)
        figure.colorbar(image, ax=ax, fraction=0.03, label="R_i (0.5: no preference)")
        file = spec.file.format(task=f"model{index}")
        figures.append(kit.save(figure, file, f"{spec.title} ({row.label})", how))
    return figures
