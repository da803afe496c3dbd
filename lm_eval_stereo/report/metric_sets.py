"""Which benchmark's :class:`~lm_eval_stereo.core.metrics.MetricSet` computed a task's results.

A results file names the task and its metrics, not the class that computed them. The metric set is the first declared
one whose metrics are all in the results, whose bootstrap metrics (``ci=True``) all carry ``<m>_ci_low``/``<m>_ci_high``
there, and which declares every metric of the results that carries them (GEST MT's Agresti-Coull ``p_i`` intervals are
declared metrics of their own). GEST declares its metrics per prompt template: the templates are those of the
items (``scores``) when they are at hand, else the ``count_<template>`` metrics of the results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lm_eval_stereo.core.metrics import MetricSet


def _gest_templates(names: set[str], items: Sequence[Mapping[str, Any]] | None) -> list[str]:
    if items and isinstance(items[0].get("scores"), Mapping):
        return list(items[0]["scores"])
    return sorted(name.removeprefix("count_") for name in names if name.startswith("count_")) or ["t0"]


def _candidates(task: str, templates: list[str]) -> list[MetricSet]:
    from lm_eval_stereo.tasks.german_gender_bias.gerbbq import metrics as gerbbq_metrics
    from lm_eval_stereo.tasks.german_gender_bias.personas import metrics as persona_metrics
    from lm_eval_stereo.tasks.german_gender_bias.sexist_statements import metrics as sexist_statements_metrics
    from lm_eval_stereo.tasks.gest import metrics as gest_metrics
    from lm_eval_stereo.tasks.s_jsd import metrics as s_jsd_metrics
    from lm_eval_stereo.tasks.stereoset_multi import metrics as stereoset_metrics

    return [
        stereoset_metrics.METRICS,
        gest_metrics.score_metric_set(task, templates),
        gest_metrics.MT_METRICS,
        gerbbq_metrics.METRICS,
        sexist_statements_metrics.METRICS,
        persona_metrics.STEREO_METRICS,
        persona_metrics.NEUTRAL_METRICS,
        s_jsd_metrics.metric_set(task, causal=True),
        s_jsd_metrics.metric_set(task),
    ]


def interval_metrics(names: Iterable[str]) -> set[str]:
    """The metrics among ``names`` that come with ``<m>_ci_low`` and ``<m>_ci_high``."""
    names = set(names)
    return {name for name in names if f"{name}_ci_low" in names and f"{name}_ci_high" in names}


def metric_set_for(
    task: str, names: Iterable[str], items: Sequence[Mapping[str, Any]] | None = None
) -> MetricSet | None:
    """The declared metric set of a task with metrics ``names`` (None for a task of no plugin benchmark with
    intervals, e.g. lm_eval's own tasks or the stereotype-leakage regression)."""
    logged = set(names)
    with_ci = interval_metrics(logged)
    if not with_ci:
        return None
    templates = _gest_templates(logged, items)
    for candidate in _candidates(task, templates):
        declared = {metric.name for metric in candidate.metrics if metric.ci}
        names = set(candidate.names)
        if declared and declared <= with_ci <= names and names <= logged:
            return candidate
    return None
