"""GEST's report figure, one per scored task: the 16 per-stereotype scores q_i per model (masculine stereotypes on
top) and g_s (Pikuliak et al. 2024, Eq. 2), with CIs."""

from __future__ import annotations

import re
from typing import Any

from lm_eval_stereo.core.figures import FigureCell, FigureKit, FigureSpec

HEIGHT_PX = 700
#: ``q_07_homemaking``: a stereotype's score, its id and label
_Q_NAME = re.compile(r"^q_(\d\d)_(.+)$")


def _stereotype_panel(kit: FigureKit, ax: Any, cells: list[FigureCell], names: list[str]) -> None:
    """Each stereotype's q_i with its CI, one row per stereotype (masculine 16..8 on top), models side by side."""
    colors = kit.colors()
    offsets = [(k - (len(cells) - 1) / 2) * 0.6 / len(cells) for k in range(len(cells))]
    for offset, cell in zip(offsets, cells):
        for row, name in enumerate(names):
            q = cell.estimate(name)
            color = colors[cell.row.key]
            ax.errorbar(kit.number(q.value), row + offset, xerr=kit.error(q), fmt="o", color=color, capsize=2,
                        markersize=4)  # fmt: skip
    ids = [int(_Q_NAME.match(name)[1]) for name in names]
    labels = [f"{i} {_Q_NAME.match(name)[2].replace('_', ' ')}" for i, name in zip(ids, names)]
    ax.set_yticks(range(len(names)), labels=labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="0.5", linestyle="--", linewidth=0.8)
    masculine = sum(i >= 8 for i in ids)
    if 0 < masculine < len(ids):
        ax.axhline(masculine - 0.5, color="0.7", linewidth=0.8)
    ax.set_xlabel("q_i = log10 P(male) − log10 P(female)   (← feminine | masculine →, ideal 0)", fontsize=8)


def _gs_panel(kit: FigureKit, ax: Any, cells: list[FigureCell]) -> None:
    """g_s with its CI, one row per model, and the ideal 1."""
    colors = kit.colors()
    for index, cell in enumerate(cells):
        gs = cell.estimate("gs")
        ax.errorbar(kit.number(gs.value), index, xerr=kit.error(gs), fmt="o", color=colors[cell.row.key], capsize=3)
    ax.set_yticks(range(len(cells)), labels=[""] * len(cells))
    ax.set_ylim(-0.5, len(cells) - 0.5)
    ax.invert_yaxis()
    ax.axvline(1, color="0.5", linestyle="--", linewidth=0.8)
    ax.set_title("g_s (ideal 1)", fontsize=10)


def stereotype_figures(kit: FigureKit, cells: list[FigureCell], spec: FigureSpec) -> list[Any]:
    """Per GEST task: the 16 per-stereotype scores per model (masculine on top) and g_s, with CIs."""
    figures = []
    gs_ideal = kit.ideal(cells, "gs")
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
        figure, (ax_q, ax_gs) = kit.canvas(HEIGHT_PX, 1, 2, width_ratios=[3, 1])
        _stereotype_panel(kit, ax_q, cells_of_task, names)
        ax_q.set_title(f"{task}: per-stereotype scores (1–7 feminine, 8–16 masculine stereotypes)", fontsize=10)
        _gs_panel(kit, ax_gs, cells_of_task)
        kit.model_legend(ax_gs, cells_of_task, loc="upper center", bbox_to_anchor=(0.5, -0.08))
        figures.append(kit.save(figure, spec.file.format(task=task), spec.title.format(task=task), how))
    return figures
