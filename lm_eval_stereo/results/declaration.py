"""What computed one task or group of a results file: its benchmark and metric sets, and what they declare of each
metric (direction or ideal, interval, detail view). :mod:`lm_eval_stereo.results.declarations` finds it from what the
task recorded."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from lm_eval_stereo.core.metrics import Metric, MetricSet
from lm_eval_stereo.core.registry import Benchmark
from lm_eval_stereo.results.ideals import Ideal


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

    @property
    def primary(self) -> str | None:
        """The headline a reader is shown first (:attr:`MetricSet.primary_headline`), None for a group whose members
        have several metric sets or a set that declares nothing directed."""
        metric_set = self.metric_set
        return (metric_set.primary_headline or None) if metric_set is not None else None

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

    def has_interval(self, name: str) -> bool:
        """Whether ``name`` is a metric declared with a 95% interval (of any kind; detail views included)."""
        metric = self.metric(name)
        return metric is not None and metric.name == name and metric.has_interval

    def interval_names(self, name: str) -> tuple[str, str] | None:
        """The names of the interval bounds of metric ``name`` in the results, None where none is declared."""
        metric = self.metric(name)
        if metric is None or metric.name != name or not metric.has_interval:
            return None
        low, high = metric.interval_names()
        return low, high

    def undefined_name(self, name: str) -> str | None:
        """The name of the count of bootstrap resamples on which metric ``name`` was undefined
        (``<name>_ci_undefined``), None where the metric's interval is not the seeded bootstrap's."""
        metric = self.metric(name)
        return metric.undefined_name if metric is not None and metric.name == name else None
