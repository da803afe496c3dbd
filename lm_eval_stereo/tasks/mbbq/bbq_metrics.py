"""The declarations of the BBQ-family scores of :mod:`~lm_eval_stereo.tasks.mbbq.bbq_scores`: one direction, ideal,
range and reading per score name, shared by every BBQ-family task (MBBQ, KoBBQ), so that ``acc_amb``, ``acc_dis``,
``bias_amb`` and ``bias_dis`` (and ``acc``, both contexts pooled) read the same wherever they appear.

The accuracies are higher-is-better in [0, 1]; the bias scores have the ideal 0 in [−1, 1], positive for answers
that follow the stereotype (ambiguous contexts) or for higher accuracy where the correct answer fits it
(disambiguated contexts)."""

from __future__ import annotations

from lm_eval_stereo.core.metrics import SHARE, SIGNED_SHARE, CompanionFigure, Metric, higher, ideal

#: what a bias score above / below its ideal 0 means
_READINGS: dict[str, tuple[str, str]] = {
    "bias_amb": ("stereotype-consistent answers", "stereotype-inconsistent answers"),
    "bias_dis": ("more accurate where the answer fits the stereotype", "more accurate where the answer contradicts it"),
}


def declaration(
    score: str,
    description: str,
    *,
    name: str | None = None,
    detail: bool = False,
    label: str | None = None,
    companion_figure: CompanionFigure | None = None,
) -> Metric:
    """The metric of BBQ-family ``score`` (``acc``, ``acc_amb``, ``acc_dis``, ``bias_amb`` or ``bias_dis``), reported
    as ``name`` (default: the score's; e.g. ``bias_amb_age`` for a per-category detail). A headline (``detail``
    False) carries a bootstrap interval; ``label`` and ``companion_figure`` are how the report shows it."""
    reading: dict = {"label": label} if label else {}
    if companion_figure is not None:
        reading["companion_figure"] = companion_figure
    if score in ("acc", "acc_amb", "acc_dis"):
        return higher(name or score, description, ci=not detail, detail=detail, bounds=SHARE, **reading)
    if score not in _READINGS:
        raise ValueError(f"{score!r} is not a BBQ-family score (acc, acc_amb, acc_dis, bias_amb, bias_dis)")
    above, below = _READINGS[score]
    return ideal(
        name or score,
        0.0,
        description,
        ci=not detail,
        detail=detail,
        bounds=SIGNED_SHARE,
        above=above,
        below=below,
        **reading,
    )
