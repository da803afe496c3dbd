"""The paper's Eq. 1 fitted on the association tables of whole runs, with the monolingual model as covariate.

Per table (= one task: model family and target language)::

    M_tgt(g, t) = sum_L alpha_L H_L(g, t) [+ beta M_mono,tgt(g, t)] + u_t + eps        (mixedlm, groups=trait, REML)

with the monolingual model's table of the same target language as the covariate when there is one; significant edges
are source -> target with alpha > 0, p < 0.05, source != target. The tables come from the runs' logged samples
(:mod:`lm_eval_stereo.tasks.stereotype_leakage.run_tables`); ``lm-eval-stereo leakage``
(:mod:`lm_eval_stereo.tasks.stereotype_leakage.command`) prints and draws the fits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from lm_eval_stereo.tasks.stereotype_leakage import metrics
from lm_eval_stereo.tasks.stereotype_leakage.data import LANGUAGES
from lm_eval_stereo.tasks.stereotype_leakage.human import human_associations


@dataclass(frozen=True)
class RunTable:
    """One task's association table: its name, family (task name without the language), target and score kind."""

    task: str
    family: str
    target: str
    score: str
    table: pd.DataFrame


def fit_runs(
    tables: Sequence[RunTable], mono: Sequence[RunTable] = (), *, unrated: str = "zero", scale: str = "reference"
) -> dict[str, Any]:
    """JSON-ready fits of every table (with the mono table of its target as covariate when there is one)."""
    humans = {lang: human_associations(lang) for lang in LANGUAGES}
    mono_by_target = {m.target: m for m in mono}
    fits: dict[str, Any] = {}
    edges = []
    for run in tables:
        factor = metrics.REFERENCE_SCALE.get(run.score, 1.0) if scale == "reference" else 1.0
        covariate = mono_by_target.get(run.target)
        mono_table = None
        if covariate is not None:
            mono_factor = metrics.REFERENCE_SCALE.get(covariate.score, 1.0) if scale == "reference" else 1.0
            mono_table = covariate.table * mono_factor
        frame = metrics.leakage_frame(run.table, humans, scale=factor, unrated=unrated, mono=mono_table)
        fit = metrics.fit_leakage(frame, run.target)
        fits[run.task] = {
            "family": run.family,
            "target": run.target,
            "score": run.score,
            "mono_task": covariate.task if covariate is not None else None,
            "coef": fit.coef,
            "p": fit.p,
            "mono_coef": _number(fit.mono_coef),
            "mono_p": _number(fit.mono_p),
            "own_coef": _number(fit.own_coef),
            "n_leaks": fit.n_leaks,
            "leaks": fit.leaks(),
            "cells": fit.cells,
            "converged": fit.converged,
            "notes": fit.notes,
        }
        edges += [
            {"family": run.family, "source": src, "target": run.target, "coef": fit.coef[src], "p": fit.p[src]}
            for src in fit.leaks()
        ]
    return {"unrated": unrated, "scale": scale, "fits": fits, "edges": edges}


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value
