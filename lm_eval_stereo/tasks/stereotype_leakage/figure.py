"""Stereotype leakage's report figure: per model, a matrix of the leakage coefficients ``leak_coef_<source>``
(Cao, Sotnikova et al. 2025, Eq. 1; columns) per leakage task (rows: the target languages)."""

from __future__ import annotations

import math
from typing import Any

from lm_eval_stereo.core.figures import FigureCell, FigureKit, FigureSpec

LEAK_PREFIX = "leak_coef_"


def leakage_figure(kit: FigureKit, cells: list[FigureCell], spec: FigureSpec) -> list[Any]:
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
    rows = [row for row in kit.rows if any(cell.row.key == row.key for cell in cells)]
    keys = [row.key for row in rows]
    values = [[[math.nan] * len(sources) for _ in tasks] for _ in rows]
    for cell in cells:
        for j, source in enumerate(sources):
            value = kit.number(cell.values.get(LEAK_PREFIX + source))
            values[keys.index(cell.row.key)][tasks.index(cell.task)][j] = value
    finite = [abs(v) for matrix in values for line in matrix for v in line if math.isfinite(v)]
    limit = max(finite, default=1.0) or 1.0
    cmap = colormaps["RdBu_r"].with_extremes(bad="0.85")
    figure, axes = kit.canvas(kit.panel_rows_height(len(rows)), math.ceil(len(rows) / 2), min(2, len(rows)))
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
        f"task's language; {kit.ideal(cells, LEAK_PREFIX + sources[0]).describe()}. Red: positive, blue: negative, "
        "grey: not measured."
    )
    return [kit.save(figure, spec.file, spec.title, how)]
