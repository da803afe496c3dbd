"""Results written before tasks recorded what their readers need: the one place that guesses.

A plugin task now records in its config metadata its ``benchmark``, ``metric_set``, ``key_field``, ``language`` and
benchmark ``facts`` (:meth:`lm_eval_stereo.core.summary.SummaryTask.recorded`). A task whose metadata lacks
``metric_set`` or ``key_field`` was written before (the committed results behind docs/REAL_MODELS.md record not even ``metric_set``);
for those files only:

- the benchmark is the one whose task patterns match the task's name, unless the task recorded its ``metric_set``;
- the metric set is the first of that benchmark's whose metrics are all in the results, whose interval metrics all
  carry ``<m>_ci_low``/``<m>_ci_high`` there, and which declares every metric of the results that carries one (where
  none fits exactly, a results file cut down by hand, the one that declares most of the results);
- the prompt templates a metric set is built from (GEST's ``facts.templates``) are the ``<t>`` of the results'
  ``count_<t>`` metrics (one template, ``t0``, when it reports none);
- an item's key is its ``key`` field, else its ``id``;
- a task's language is the two-letter code its name ends in (``stereoset_multi_de``: ``de``), and the tasks of one
  metric set whose names differ only in that code are translations of each other.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from lm_eval_stereo.core import registry
from lm_eval_stereo.core.metrics import UNDEFINED_SUFFIX

if TYPE_CHECKING:
    from lm_eval_stereo.core.metrics import MetricSet
    from lm_eval_stereo.core.registry import Benchmark

#: ``<family>_<xx>``: a task named after its language
_LANGUAGE_TASK = re.compile(r"^(?P<family>.+)_(?P<lang>[a-z]{2})$")
#: how errors name the key of a legacy item
ITEM_KEY_NAME = "'key' or 'id'"


def written_before(metadata: Mapping[str, Any]) -> bool:
    """Whether a task's config ``metadata`` was written before tasks recorded what their readers need (no
    ``metric_set`` or no ``key_field``): such a task is read through this module."""
    return not isinstance(metadata.get("metric_set"), str) or "key_field" not in metadata


def language(task: str) -> tuple[str, str] | None:
    """A legacy task's language and the family of tasks it is a translation within: the two-letter code its name ends
    in and the name without it (None for a name without one)."""
    match = _LANGUAGE_TASK.match(task)
    return (match["lang"], match["family"]) if match else None


def item_key(item: Mapping[str, Any]) -> Any:
    """A legacy item's key: its ``key``, else its ``id`` (None when it has neither)."""
    return item.get("key", item.get("id"))


def interval_metrics(names: Collection[str]) -> set[str]:
    """The metrics among ``names`` that come with ``<m>_ci_low`` and ``<m>_ci_high``."""
    return {name for name in names if f"{name}_ci_low" in names and f"{name}_ci_high" in names}


def facts(names: Collection[str]) -> dict[str, Any]:
    """The facts a metric set's factory reads, guessed from the results' metric names: the prompt templates."""
    templates = sorted(name.removeprefix("count_") for name in names if name.startswith("count_")) or ["t0"]
    return {"templates": templates}


def metadata(names: Collection[str], recorded: Mapping[str, Any]) -> dict[str, Any]:
    """What a task of today records, completed for a legacy task from its results' metric ``names``."""
    return {**recorded, "facts": {**facts(names), **(recorded.get("facts") or {})}}


def declaration(
    task: str, names: Collection[str], recorded: Mapping[str, Any]
) -> tuple[Benchmark, tuple[MetricSet, ...]] | None:
    """The benchmark and metric set (none where nothing fits) of a legacy task with the metrics ``names`` in its
    results (see the module docstring); None for lm_eval's own tasks."""
    names = set(names)
    completed = metadata(names, recorded)
    metric_set_id = recorded.get("metric_set")
    if isinstance(metric_set_id, str):
        bench = registry.benchmark_of_metric_set(metric_set_id)
        metric_set = registry.metric_set(metric_set_id, task, completed)
        return (bench, (metric_set,)) if bench and metric_set else None
    bench = registry.benchmark_by_task_name(task)
    if bench is None:
        return None
    with_ci = interval_metrics(names)
    ranked = []
    for factory in bench.metric_sets.values():
        candidate = factory(task, completed)
        declared = {metric.name for metric in candidate.metrics if metric.has_interval}
        # results written before the counts of undefined resamples were recorded lack ``<m>_ci_undefined``
        reported = {name for name in candidate.names if not name.endswith(f"_{UNDEFINED_SUFFIX}")}
        fits = declared <= with_ci <= reported and reported <= names and bool(declared) == bool(with_ci)
        ranked.append((fits, len(reported & names), candidate))
    fits, overlap, best = max(ranked, key=lambda entry: entry[:2])
    return bench, (best,) if fits or overlap else ()
