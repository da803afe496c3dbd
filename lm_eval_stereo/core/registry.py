"""The registry of benchmarks: each benchmark declares itself once, and everything else reads that declaration.

A benchmark folder ``lm_eval_stereo/tasks/<benchmark>/`` exports one :class:`Benchmark` from its ``__init__.py``;
``lm_eval_stereo/tasks/__init__.py`` lists the five and :func:`register` s them, so importing any plugin task (lm_eval
imports ``lm_eval_stereo.tasks.<benchmark>.task`` through a YAML's ``class: !function``, which imports
``lm_eval_stereo.tasks`` first) fills the registry before a task is built. ``core`` imports no task module: the
option parser, the data pins of a task and the report ask the registry.

Every plugin task writes its benchmark and the id of its metric set (``<benchmark>.<kind>``,
:attr:`~lm_eval_stereo.core.metrics.MetricSet.id`) into its config metadata, which lm_eval keeps in the results
file, with what readers need besides (its language, the key field of its items, benchmark facts such as GEST's
prompt templates; :mod:`lm_eval_stereo.core.summary`); the results layer (:mod:`lm_eval_stereo.results`) finds the
declaration from there (:func:`metric_set`), whatever the task is called.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lm_eval_stereo.core.metrics import MetricSet
    from lm_eval_stereo.core.options import Option

#: ``(task, its config metadata as the task recorded it) -> MetricSet``: the metric set of a task of this kind (GEST
#: declares its metrics per prompt template and reads the templates the task recorded, ``facts.templates``)
MetricSetFactory = Callable[[str, Mapping[str, Any]], "MetricSet"]


#: the config metadata keys a task records for the readers of its results besides ``benchmark``, ``metric_set`` and
#: ``data``: ``language``, ``key_field`` (the item field keying its logged items) and ``facts`` (benchmark-specific,
#: read by its metric set's factory); :meth:`lm_eval_stereo.core.summary.SummaryTask.recorded` writes them
RECORDED = ("language", "key_field", "facts")


def fixed(metric_set: MetricSet) -> MetricSetFactory:
    """The factory of a metric set that is the same for every task of its kind."""

    def factory(task: str, metadata: Mapping[str, Any]) -> MetricSet:
        return metric_set

    return factory


@dataclass(frozen=True)
class FigureSpec:
    """A figure of the report for this benchmark: ``kind`` names the report's drawing (``lms_ss``,
    ``gest_stereotypes``, ``dot_plot``, ``leakage_matrix``), drawn from the cells of the metric sets ``metric_sets``
    (ids) with ``metrics`` (for a dot plot, one panel each)."""

    kind: str
    file: str
    title: str
    metric_sets: tuple[str, ...]
    metrics: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Benchmark:
    """One benchmark: its folder ``name``, ``title``, the fnmatch ``task_patterns`` of its task and group names, the
    ``options`` its tasks accept in ``--metadata`` (each name once), its ``metric_sets`` by id, the pinned upstream
    ``sources`` (keys of :data:`lm_eval_stereo.core.sources.SOURCES`) it reads, its report ``figures``, its
    ``languages`` (the language registry its per-language YAMLs are generated from) and ``report_ideals``: the value
    the report measures a metric declared without a direction against (fnmatch pattern -> value; e.g. a leakage
    coefficient against 0, no carry-over, where the declaration stays undirected because the target language's own
    coefficient is expected positive)."""

    name: str
    title: str
    task_patterns: tuple[str, ...]
    options: tuple[Option, ...]
    metric_sets: Mapping[str, MetricSetFactory]
    sources: tuple[str, ...]
    figures: tuple[FigureSpec, ...] = ()
    languages: tuple[str, ...] = ()
    report_ideals: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple({option.name: option for option in self.options}.values()))
        foreign = [key for key in self.metric_sets if key.partition(".")[0] != self.name]
        if foreign:
            raise ValueError(f"benchmark {self.name}: metric-set ids must start with '{self.name}.': {foreign}")

    def owns(self, task: str) -> bool:
        """Whether ``task`` (a task or group name) matches one of :attr:`task_patterns`."""
        return any(fnmatch.fnmatchcase(task, pattern) for pattern in self.task_patterns)


_REGISTRY: dict[str, Benchmark] = {}


def register(*benchmarks: Benchmark) -> None:
    """Add benchmarks to the registry (``lm_eval_stereo/tasks/__init__.py`` registers the five)."""
    for benchmark in benchmarks:
        known = _REGISTRY.get(benchmark.name)
        if known is not None and known is not benchmark:
            raise ValueError(f"benchmark {benchmark.name} is declared twice")
        _REGISTRY[benchmark.name] = benchmark


def benchmarks() -> tuple[Benchmark, ...]:
    """Every registered benchmark, in registration order."""
    return tuple(_REGISTRY.values())


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name`` (its folder name); KeyError listing the known ones."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(_REGISTRY) or "none registered (import lm_eval_stereo.tasks)"
        raise KeyError(f"unknown benchmark {name!r}; known: {known}") from None


def all_options() -> frozenset[str]:
    """The names of every option of every registered benchmark (one ``--metadata`` serves every task of a run)."""
    return frozenset(option.name for bench in _REGISTRY.values() for option in bench.options)


def benchmark_of_metric_set(metric_set_id: str) -> Benchmark | None:
    """The benchmark declaring the metric set ``metric_set_id``, None when none does."""
    bench = _REGISTRY.get(metric_set_id.partition(".")[0])
    return bench if bench is not None and metric_set_id in bench.metric_sets else None


def metric_set(metric_set_id: str, task: str, metadata: Mapping[str, Any] | None = None) -> MetricSet | None:
    """The metric set ``metric_set_id`` of ``task`` from what the task recorded in its config ``metadata`` (None when
    no registered benchmark declares that id)."""
    bench = benchmark_of_metric_set(metric_set_id)
    return bench.metric_sets[metric_set_id](task, metadata or {}) if bench is not None else None


def benchmark_by_task_name(task: str) -> Benchmark | None:
    """The benchmark whose :attr:`Benchmark.task_patterns` match ``task``: only for results files written before
    tasks recorded their benchmark (:mod:`lm_eval_stereo.results.legacy`)."""
    return next((bench for bench in _REGISTRY.values() if bench.owns(task)), None)
