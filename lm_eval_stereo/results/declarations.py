"""Which benchmark and metric set computed a task's results (:class:`Declaration`: what they declare of each metric,
its direction or ideal, interval and detail view), read from the results file, never guessed from names.

Every plugin task writes ``benchmark`` and ``metric_set`` (an id of the benchmark registry,
:mod:`lm_eval_stereo.core.registry`) into its config metadata, with what its metric set is built from (``facts``),
which lm_eval keeps under ``configs`` in the results file. A task with a name of the user's own is therefore reported
as its benchmark, with its ideals, CIs, figures and paired tests. A group is its members' benchmark when all its leaf
tasks belong to one; a group whose members belong to several (a leaderboard group) has their metric sets and no
benchmark. :meth:`lm_eval_stereo.results.run.Run.declaration` resolves each task once per run.

The benchmarks are the registry's (:mod:`lm_eval_stereo.core.registry`, which registers the installed ones through
their entry points at its first lookup): this module imports none of them. lm_eval's own tasks record nothing of the
plugin's; a benchmark that declares some of them (:class:`~lm_eval_stereo.core.registry.LmEvalTasks`) is found by the
task's lm_eval name.

Results files written before tasks recorded this (no ``metric_set`` or no ``key_field`` in a task's metadata) go
through :mod:`lm_eval_stereo.results.legacy`, the one module that guesses.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from lm_eval_stereo.core import registry
from lm_eval_stereo.core.metrics import Metric, MetricSet
from lm_eval_stereo.core.registry import Benchmark
from lm_eval_stereo.results import legacy
from lm_eval_stereo.results.fields import Problem
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
        """The declared metric named ``name``, None when none is (an interval bound or undefined count is no metric:
        :meth:`interval_names` and :meth:`undefined_name` name those of a metric)."""
        return next((m for metric_set in self.metric_sets for m in metric_set.metrics if m.name == name), None)

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
        return metric is not None and metric.has_interval

    def interval_names(self, name: str) -> tuple[str, str] | None:
        """The names of the interval bounds of metric ``name`` in the results, None where none is declared."""
        metric = self.metric(name)
        if metric is None or not metric.has_interval:
            return None
        low, high = metric.interval_names()
        return low, high

    def undefined_name(self, name: str) -> str | None:
        """The name of the count of bootstrap resamples on which metric ``name`` was undefined
        (``<name>_ci_undefined``), None where the metric's interval is not the seeded bootstrap's."""
        metric = self.metric(name)
        return metric.undefined_name if metric is not None else None


class RecordedRun(Protocol):
    """What the resolution reads of a run (:class:`lm_eval_stereo.results.run.Run`, which imports this module)."""

    path: Path

    def members(self, task: str) -> tuple[str, ...]: ...

    def metadata(self, task: str) -> dict[str, Any]: ...

    def malformed_record(self, task: str) -> bool: ...

    def values(self, task: str) -> dict[str, Any]: ...

    def declaration(self, task: str) -> Declaration | None: ...

    def note(self, problem: Problem) -> None: ...

    def problems(self, task: str) -> list[Problem]: ...


def resolve(run: RecordedRun, task: str) -> Declaration | None:
    """The declaration of ``task`` (a task or group) in ``run``; None for lm_eval's own tasks and groups. Use
    :meth:`Run.declaration`, which resolves each task once."""
    members = run.members(task)
    if members:
        found = [run.declaration(member) for member in members]
        if not found or any(declaration is None for declaration in found):
            return None
        benchmarks = tuple(dict.fromkeys(b for declaration in found for b in declaration.benchmarks))
        metric_sets = tuple({m.id: m for declaration in found for m in declaration.metric_sets}.values())
        return Declaration(benchmarks[0] if len(benchmarks) == 1 else None, metric_sets, benchmarks)
    if run.malformed_record(task):  # a recorded field of the wrong kind, named by Run.metadata
        return None
    metadata = run.metadata(task)
    native = registry.lm_eval_task(task) if "metric_set" not in metadata else None
    if native is not None:  # one of lm_eval's own tasks that a benchmark declares (found by its lm_eval name)
        bench, metric_set_id = native
        metric_set = registry.metric_set(metric_set_id, task, metadata)
        return Declaration(bench, (metric_set,), (bench,)) if metric_set else None
    if legacy.written_before(metadata):
        try:
            found = legacy.declaration(task, run.raw_metrics(task)[0], metadata)
        except registry.RecordedFactError as exc:
            return _malformed_fact(run, task, exc)
        return Declaration(found[0], found[1], (found[0],)) if found is not None else None
    metric_set_id = metadata["metric_set"]
    bench = registry.benchmark_of_metric_set(metric_set_id) if isinstance(metric_set_id, str) else None
    if bench is None:
        why = (
            "a metric set this lm-eval-stereo does not know: written by a newer plugin, or by a benchmark not "
            "installed here (upgrade or install it); read as one of lm_eval's own tasks, without ideals or verdicts"
        )
        run.note(Problem(task, "metric_set", metric_set_id, why))
        return None
    try:
        metric_set = registry.metric_set(metric_set_id, task, metadata)
    except registry.RecordedFactError as exc:
        return _malformed_fact(run, task, exc)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
        why = f"does not build {metric_set_id} ({type(exc).__name__}: {exc}); read as a task no benchmark declares"
        run.note(Problem(task, f"configs.{task}.metadata", metadata, why))
        return None
    return Declaration(bench, (metric_set,), (bench,)) if metric_set else None


def _malformed_fact(run: RecordedRun, task: str, error: registry.RecordedFactError) -> None:
    """A fact ``task`` recorded for its metric set's factory is of the wrong kind: a :class:`Problem` naming its field
    (``configs.<task>.metadata.facts.<name>``); the task has no declaration."""
    why = f"not {error.what}: the task's metric set cannot be built; read as a task no benchmark declares"
    run.note(Problem(task, f"configs.{task}.metadata.{error.field}", error.value, why))


def declaration_of(run: RecordedRun, task: str) -> Declaration | None:
    """The declaration of ``task`` (a task or group) in ``run`` (:meth:`Run.declaration`)."""
    return run.declaration(task)


def undeclared_held(found: Iterable[tuple[RecordedRun, str]]) -> str:
    """What results whose tasks no benchmark declares hold, for the one line that says so (report, export): "only
    lm_eval's own tasks (...)", unless some were written by a plugin benchmark and read as lm_eval's own for what
    :func:`resolve` found: a metric set this plugin does not know, or recorded metadata it cannot build from (named
    with the file and the field)."""
    found = list(found)
    unknown, malformed = {}, {}
    for run, task in found:
        for problem in run.problems(task):
            if problem.field == "metric_set":
                unknown[f"{task} ({problem.value})"] = None
            elif problem.field.startswith(f"configs.{task}.metadata"):
                malformed[problem.message(run.path)] = None
    held = []
    if unknown:
        held.append(
            "tasks whose metric sets this lm-eval-stereo does not know (written by a newer plugin, or a benchmark "
            f"not installed here): {', '.join(sorted(unknown))}; read as lm_eval's own tasks"
        )
    if malformed:
        held.append(f"tasks of a plugin benchmark whose recorded metadata is malformed: {'; '.join(malformed)}")
    if held:
        return "; ".join(held)
    tasks = sorted({task for _, task in found})
    return f"only lm_eval's own tasks ({', '.join(tasks)})" if tasks else "no task at all"
