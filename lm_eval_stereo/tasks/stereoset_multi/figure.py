"""StereoSet's report figure: LMS against SS per model (colour) and task (marker), with CI bars, the ideal model and
contours of ICAT (Nadeem et al. 2021, Eq. 1: ICAT = LMS · min(SS, 100 − SS) / 50)."""

from __future__ import annotations

from typing import Any

from lm_eval_stereo.core.figures import FigureCell, FigureKit, FigureSpec
from lm_eval_stereo.tasks.stereoset_multi.metrics import icat

HEIGHT_PX = 600


def lms_ss_figure(kit: FigureKit, cells: list[FigureCell], spec: FigureSpec) -> list[Any]:
    """LMS against SS per model and task with CI bars, the ideal point (LMS 100, SS 50) and ICAT contours."""
    import numpy as np
    from matplotlib.lines import Line2D

    cells = [cell for cell in cells if {"lms", "ss"} <= set(cell.headlines)]
    if not cells:
        return []
    colors = kit.colors()
    tasks = list(dict.fromkeys(cell.task for cell in cells))
    markers = dict(zip(tasks, "osD^vP*Xhp<>8" * 4))
    figure, (ax,) = kit.canvas(HEIGHT_PX)
    lms, ss = np.meshgrid(np.linspace(0, 100, 201), np.linspace(0, 100, 201))
    contours = ax.contour(lms, ss, np.vectorize(icat)(lms, ss), levels=[20, 40, 60, 80], colors="0.7")
    ax.clabel(contours, fmt="ICAT %d", fontsize=7)
    ax.axhline(50, color="0.5", linestyle="--", linewidth=0.8)
    for cell in cells:
        x, y = cell.estimate("lms"), cell.estimate("ss")
        ax.errorbar(
            kit.number(x.value),
            kit.number(y.value),
            xerr=kit.error(x),
            yerr=kit.error(y),
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
    kit.model_legend(ax, cells, loc="lower left", title="model", title_fontsize=7)
    how = (
        "The star is the ideal model (LMS 100, SS 50); grey contours are ICAT = LMS·min(SS, 100−SS)/50 (ideal 100). "
        "SS above the dashed line prefers stereotypes, below it anti-stereotypes: neither side is better, the "
        "distance to 50 is the bias. Bars are 95% bootstrap CIs."
    )
    return [kit.save(figure, spec.file, spec.title, how)]
