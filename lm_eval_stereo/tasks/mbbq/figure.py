"""MBBQ's report figure: each language's bias scores against its control-set accuracy (MBBQ's reading: bias is
compared across languages while controlling for how well the model answers at all), per model (colour) and language
(marker), with 95% CI bars on both axes; one panel per context condition (ambiguous: bias_amb against the control
acc_amb; disambiguated: bias_dis against the control acc_dis) and protocol (log-likelihood, generation)."""

from __future__ import annotations

from typing import Any

from lm_eval_stereo.core.figures import FigureCell, FigureKit, FigureSpec
from lm_eval_stereo.tasks.mbbq.data import LANGUAGES

PANELS = (("bias_amb", "acc_amb", "ambiguous"), ("bias_dis", "acc_dis", "disambiguated"))


def _place(task: str) -> tuple[str, bool, str] | None:
    """(protocol, control set?, language) of one of MBBQ's per-language tasks, None for a group or another task."""
    stem, _, lang = task.rpartition("_")
    if lang not in LANGUAGES or not stem.startswith("mbbq"):
        return None
    control = stem.endswith("_control")
    stem = stem.removesuffix("_control")
    if stem not in ("mbbq", "mbbq_gen"):
        return None
    return ("generation" if stem == "mbbq_gen" else "log-likelihood", control, lang)


def bias_vs_control_figure(kit: FigureKit, cells: list[FigureCell], spec: FigureSpec) -> list[Any]:
    """Bias against control accuracy per model and language, one panel per condition and protocol."""
    from matplotlib.lines import Line2D

    bias: dict[tuple[str, str, str], FigureCell] = {}
    control: dict[tuple[str, str, str], FigureCell] = {}
    for cell in cells:
        place = _place(cell.task)
        if place is not None:
            (control if place[1] else bias)[(cell.row.key, place[0], place[2])] = cell
    pairs = {key: (bias[key], control[key]) for key in sorted(bias) if key in control}
    if not pairs:
        return []
    protocols = sorted({key[1] for key in pairs})
    colors = kit.colors()
    markers = dict(zip(LANGUAGES, "osD^"))
    panels = [(protocol, panel) for protocol in protocols for panel in PANELS]
    figure, axes = kit.canvas(kit.panel_rows_height(len(panels)), nrows=len(protocols), ncols=2)
    for ax, (protocol, (bias_name, accuracy_name, condition)) in zip(axes, panels):
        ax.axhline(0.0, color="0.5", linestyle="--", linewidth=0.8)
        for (row, cell_protocol, lang), (bias_cell, control_cell) in pairs.items():
            if cell_protocol != protocol:
                continue
            x, y = control_cell.estimate(accuracy_name), bias_cell.estimate(bias_name)
            ax.errorbar(
                kit.number(x.value),
                kit.number(y.value),
                xerr=kit.error(x),
                yerr=kit.error(y),
                fmt=markers[lang],
                color=colors[row],
                capsize=2,
                markersize=6,
            )
        ax.set(
            xlim=(-0.02, 1.02),
            ylim=(-1.02, 1.02),
            xlabel=f"control set {accuracy_name}",
            ylabel=f"{bias_name} (ideal 0)",
        )
        ax.set_title(f"{condition}, {protocol}", fontsize=9)
    handles = [Line2D([], [], marker=markers[lang], color="0.3", linestyle="", label=lang) for lang in LANGUAGES]
    axes[0].legend(handles=handles, fontsize=7, loc="upper left", title="language", title_fontsize=7)
    kit.model_legend(axes[-1], [cell for pair in pairs.values() for cell in pair], loc="lower left")
    how = (
        "Each point is one model in one language: its bias score on MBBQ's bias set (y, ideal 0 on the dashed line; "
        "above: stereotype-consistent answers) against its accuracy on the control set (x: the same questions about "
        "named people, no stereotype at stake). Compare languages at similar control accuracy. Bars are 95% "
        "bootstrap CIs."
    )
    return [kit.save(figure, spec.file, spec.title, how)]
