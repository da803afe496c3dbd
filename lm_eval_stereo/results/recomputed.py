"""What the logged samples add to the numbers of lm_eval's own tasks that a benchmark declares
(:class:`~lm_eval_stereo.core.registry.LmEvalTasks`): their figures recomputed from the per-document values lm_eval
logged (``--log_samples``) with the declared metric set, whose statistics call lm_eval's own aggregation functions, and
the seeded bootstrap intervals of the one resampler (:mod:`lm_eval_stereo.core.bootstrap`; resamples on which a
figure is undefined are counted).

lm_eval's numbers stay as lm_eval wrote them. A recomputed figure must equal lm_eval's (within
:data:`SAME_TOLERANCE`): where it does not (another lm_eval, a samples file that is not the run's), that figure gets
no interval, and :attr:`Recomputed.note` says why. Without the samples file the note says that the interval needs
``--log_samples``. A group (lm_eval's mean of its members' figures weighted by their documents) is resampled within
its members, each member's figure recomputed on its own resample and weighted as lm_eval weights it.

A task whose logged items mark near ties (:mod:`lm_eval_stereo.tasks.lm_eval_bias.logged`) also gains ``near_ties`` and
each headline's range over them (:func:`lm_eval_stereo.core.near_ties.fields`), as the plugin's tasks record them;
a group does not (its members are not shown).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.core.bootstrap import DEFAULT_SEED, bootstrap
from lm_eval_stereo.core.metrics import UNDEFINED_SUFFIX, MetricSet
from lm_eval_stereo.results.samples import NO_SAMPLES, Logged, Recomputed

if TYPE_CHECKING:
    from lm_eval_stereo.core.registry import LmEvalTasks
    from lm_eval_stereo.results.declarations import Declaration


class Run(Protocol):
    """What the recomputation reads of a run (:class:`lm_eval_stereo.results.run.Run`, which imports this module)."""

    def declaration(self, task: str) -> Declaration | None: ...

    def document_counts(self, task: str) -> tuple[int, int] | None: ...

    def lm_eval_declared(self, task: str) -> LmEvalTasks | None: ...

    def logged(self, task: str) -> Logged: ...

    def members(self, task: str) -> tuple[str, ...]: ...

    def raw_metrics(self, task: str) -> tuple[dict[str, Any], dict[str, Any]]: ...


#: how far a recomputed figure may be from lm_eval's (floating-point noise of a different summation order only)
SAME_TOLERANCE = 1e-9


def _same(a: Any, b: Any) -> bool:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=SAME_TOLERANCE, abs_tol=SAME_TOLERANCE)


def _logged_items(run: Run, task: str) -> tuple[list[dict[str, Any]] | None, str]:
    """The sorted items of a task, or None and why there are none to use."""
    logged: Logged = run.logged(task)
    if not logged.exists:
        return None, NO_SAMPLES
    if logged.error is not None or logged.items is None:
        return None, f"{logged.path.name} is unreadable ({logged.error}): no 95% CI"
    documents = run.document_counts(task)
    if documents is not None and len(logged.items) != documents[0]:
        return None, (
            f"{logged.path.name} holds {len(logged.items)} documents, the results {documents[0]} (truncated, or not "
            "this run's?): no 95% CI"
        )
    return logged.sorted_items(), ""


def _interval_names(name: str) -> tuple[str, ...]:
    return (f"{name}_ci_low", f"{name}_ci_high", f"{name}_{UNDEFINED_SUFFIX}", f"{name}_stderr_boot")


def _checked(run: Run, task: str, computed: dict[str, Any], metric_set: MetricSet, note: str) -> Recomputed:
    """The recomputed values of ``task`` less the intervals of figures that differ from lm_eval's, and the note."""
    reported = run.raw_metrics(task)[0]
    declared = [m.name for m in metric_set.metrics]
    differing = [name for name in declared if name in reported and not _same(reported[name], computed.get(name))]
    values = {name: value for name, value in computed.items() if name not in reported}
    for name in differing:
        for bound in _interval_names(name):
            values.pop(bound, None)
    if differing:
        found = ", ".join(f"{name} {computed.get(name)!r} (lm_eval: {reported[name]!r})" for name in differing)
        note = "; ".join(filter(None, (note, f"recomputed from the logged samples, {found} differ: no 95% CI")))
    figures = {name: computed[name] for name in declared if name in reported and name in computed}
    return Recomputed(values, figures, note)


def _group(run: Run, task: str, members: tuple[str, ...]) -> Recomputed:
    """A group of lm_eval's: its members' figures weighted by their documents, resampled within each member."""
    sets: list[MetricSet] = []
    data: list[tuple[int, dict[str, Any]]] = []
    for index, member in enumerate(members):
        declaration = run.declaration(member)
        items, why = _logged_items(run, member)
        if declaration is None or declaration.metric_set is None or items is None:
            return Recomputed(note=why or f"{member} is not declared: no 95% CI")
        sets.append(declaration.metric_set)
        data += [(index, item) for item in items]
    sizes = [sum(1 for index, _ in data if index == i) for i in range(len(members))]
    names = [m.name for m in sets[0].metrics if m.ci]

    def statistic(rows: list[tuple[int, dict[str, Any]]]) -> dict[str, float]:
        by_member: list[list[dict[str, Any]]] = [[] for _ in members]
        for index, item in rows:
            by_member[index].append(item)
        figures = [metric_set.summarize(items) for metric_set, items in zip(sets, by_member)]
        return {name: sum(f[name] * n for f, n in zip(figures, sizes)) / sum(sizes) for name in names}

    computed: dict[str, Any] = dict(statistic(data))
    intervals = bootstrap(data, statistic, strata=[index for index, _ in data], seed=DEFAULT_SEED)
    for name in names:
        interval = intervals[name]
        low, high, undefined, stderr = _interval_names(name)
        computed.update(
            {low: interval.low, high: interval.high, undefined: interval.undefined, stderr: interval.stderr}
        )
    return _checked(run, task, computed, sets[0], "")


def recompute(run: Run, task: str) -> Recomputed:
    """What the logged samples add to lm_eval's results of ``task`` (see the module docstring)."""
    declaration = run.declaration(task)
    members = run.members(task)
    try:
        if members:
            return _group(run, task, members)
        if declaration is None or declaration.metric_set is None:
            return Recomputed(note="no declaration: no 95% CI")
        items, why = _logged_items(run, task)
        if items is None:
            return Recomputed(note=why)
        metric_set = declaration.metric_set
        computed = metric_set.compute(items)
        if any(near_ties.NEAR_TIE in item for item in items):  # a task that judges by comparing log-likelihoods
            computed.update(near_ties.fields(metric_set.summarize, items, metric_set.headlines, computed))
        return _checked(run, task, computed, metric_set, "")
    except Exception as exc:  # noqa: BLE001 - lm_eval's numbers are shown whatever the recomputation meets
        native = run.lm_eval_declared(task)
        known = f" (declared for lm_eval {native.version})" if native is not None else ""
        return Recomputed(note=f"not recomputed{known}: {type(exc).__name__}: {exc}; lm_eval's numbers, no 95% CI")
