"""Which benchmark and metric set computed a task's results, read from the results file, never guessed from names.

Every plugin task writes ``benchmark`` and ``metric_set`` (an id of the benchmark registry,
:mod:`lm_eval_stereo.core.registry`) into its config metadata, which lm_eval keeps under ``configs`` in the results
file. A task with a name of the user's own is therefore reported as its benchmark, with its ideals, CIs, figures and
paired tests. A group is its members' benchmark when all its leaf tasks belong to one; a group whose members belong
to several (a leaderboard group) has their metric sets and no benchmark.

Results files written before tasks recorded this go through one fallback (:func:`_from_names`): the benchmark whose
task patterns match the task's name, and its first metric set whose metrics are all in the results, whose bootstrap
metrics all carry intervals there, and which declares every metric of the results that carries one.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
from lm_eval_stereo.core import registry
from lm_eval_stereo.core.metrics import Metric, MetricSet
from lm_eval_stereo.core.registry import Benchmark
from lm_eval_stereo.report.ideals import Ideal
from lm_eval_stereo.report.runs import Run

Items = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Declaration:
    """The declarations behind one task or group of a results file: its ``benchmark`` (None for a group spanning
    several) and the ``metric_sets`` of its leaf tasks (one for a task)."""

    benchmark: Benchmark | None
    metric_sets: tuple[MetricSet, ...]
    #: the ``benchmark``s of the leaf tasks (one for a task or a one-benchmark group)
    benchmarks: tuple[Benchmark, ...]

    @property
    def metric_set(self) -> MetricSet | None:
        """The metric set of a task (None for a group whose members have several)."""
        return self.metric_sets[0] if len({m.id for m in self.metric_sets}) == 1 else None

    def metric(self, name: str) -> Metric | None:
        """The declaration of metric ``name`` (an interval bound as its metric), None when none declares it."""
        for metric_set in self.metric_sets:
            try:
                return metric_set.metric(name)
            except KeyError:
                continue
        return None

    def ideal(self, name: str) -> Ideal | None:
        """How ``name`` is best: its declared direction or ideal, else a benchmark's ``report_ideals`` reading of an
        undirected metric; None for counts and text."""
        metric = self.metric(name)
        if metric is not None and metric.direction == "ideal":
            return Ideal("target", metric.ideal)
        if metric is not None and metric.direction in ("higher", "lower"):
            return Ideal(metric.direction)
        for bench in self.benchmarks:
            for pattern, value in bench.report_ideals.items():
                if fnmatch.fnmatchcase(name, pattern):
                    return Ideal("target", value)
        return None

    def is_detail(self, name: str) -> bool:
        """Whether ``name`` is declared a view of a headline (one stereotype, one template): shown with the
        benchmark's details, not in the summary."""
        metric = self.metric(name)
        return metric is not None and metric.detail

    def is_headline(self, name: str) -> bool:
        """Whether ``name`` is declared with a direction or an ideal and is not a detail view."""
        metric = self.metric(name)
        return metric is not None and metric.direction in ("higher", "lower", "ideal") and not metric.detail


def interval_metrics(names: Collection[str]) -> set[str]:
    """The metrics among ``names`` that come with ``<m>_ci_low`` and ``<m>_ci_high``."""
    return {name for name in names if f"{name}_ci_low" in names and f"{name}_ci_high" in names}


def declaration_of(run: Run, task: str, items: Items | None = None) -> Declaration | None:
    """The declaration of ``task`` (a task or group) in ``run``; None for lm_eval's own tasks and groups."""
    members = run.members(task)
    if members:
        found = [declaration_of(run, member) for member in members]
        if not found or any(declaration is None for declaration in found):
            return None
        benchmarks = tuple(dict.fromkeys(b for declaration in found for b in declaration.benchmarks))
        metric_sets = tuple({m.id: m for declaration in found for m in declaration.metric_sets}.values())
        return Declaration(benchmarks[0] if len(benchmarks) == 1 else None, metric_sets, benchmarks)
    metadata = ((run.data.get("configs") or {}).get(task) or {}).get("metadata") or {}
    names = set(run.values(task))
    metric_set_id = metadata.get("metric_set")
    if isinstance(metric_set_id, str):
        bench = registry.benchmark_of_metric_set(metric_set_id)
        metric_set = registry.metric_set(metric_set_id, task, names, items)
        return Declaration(bench, (metric_set,), (bench,)) if bench and metric_set else None
    return _from_names(task, names, items)


def _from_names(task: str, names: set[str], items: Items | None) -> Declaration | None:
    """The fallback for results written before tasks recorded their declaration (see the module docstring); where
    no metric set fits exactly (a results file cut down by hand), the one that declares most of the results."""
    bench = registry.benchmark_by_task_name(task)
    if bench is None:
        return None
    with_ci = interval_metrics(names)
    ranked = []
    for factory in bench.metric_sets.values():
        candidate = factory(task, names, items)
        declared = {metric.name for metric in candidate.metrics if metric.ci}
        reported = set(candidate.names)
        fits = declared <= with_ci <= reported and reported <= names and bool(declared) == bool(with_ci)
        ranked.append((fits, len(reported & names), candidate))
    fits, overlap, best = max(ranked, key=lambda entry: entry[:2])
    return Declaration(bench, (best,) if fits or overlap else (), (bench,))
