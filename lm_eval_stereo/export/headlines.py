"""The numbers a run publishes: every headline of its plugin tasks and groups, their distances to the ideal, and the
metrics of lm_eval's own tasks, each with its direction, range, interval and count.

A plugin task's headlines are its declared headlines (:attr:`lm_eval_stereo.core.metrics.Metric.headline`: a metric
with an interval that is not a detail view) whose interval is the seeded bootstrap's (``ci``: the records name a
percentile bootstrap and its iterations) and that have a direction or an ideal; direction, ideal, range and
description come from the declaration (:meth:`lm_eval_stereo.results.run.Run.declaration`), the value, interval and standard error from the results
file. A middle-ideal headline (SS, g_s, a bias score) also gets its distance to the ideal ``|x - ideal|``, lower is
better, whose interval :mod:`.distance` recomputes from the logged items. Anything that cannot be published (a NaN,
a missing interval, a distance without items) is an :class:`Omission` with its reason, never dropped silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS
from lm_eval_stereo.core.metrics import Metric
from lm_eval_stereo.core.registry import Benchmark
from lm_eval_stereo.export.distance import Distances, ItemsMismatch
from lm_eval_stereo.results.declarations import Declaration
from lm_eval_stereo.results.fields import Unusable
from lm_eval_stereo.results.lm_eval_tasks import capability_ideal, capability_metrics
from lm_eval_stereo.results.provenance import Provenance, provenance
from lm_eval_stereo.results.run import Run, is_number

#: how a distance to the ideal is named: ``<metric>_distance``
DISTANCE_SUFFIX = "_distance"


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class Headline:
    """One published number of one task of a run."""

    task: str
    metric: str
    value: float
    lower_is_better: bool
    #: the declared range (low, high), None where not declared (lm_eval's own tasks)
    bounds: tuple[float, float] | None
    #: the ideal of a middle-ideal metric (None for directed ones and for distances)
    ideal: float | None
    description: str
    stderr: float | None
    stderr_method: str
    interval: Interval | None
    #: items (or documents) the number and its interval come from
    n: int | None
    bootstrap_iterations: int | None
    benchmark: Benchmark | None
    #: for a distance to the ideal: the metric it measures and that metric's ideal
    distance_of: str | None = None
    distance_ideal: float | None = None
    #: bootstrap resamples on which the metric was undefined, left out of its interval (``<m>_ci_undefined``; None
    #: where the results do not record it)
    undefined: int | None = None
    #: who computed the value and who its interval (:mod:`lm_eval_stereo.results.provenance`)
    provenance: Provenance | None = None

    @property
    def result_id(self) -> str:
        return f"{self.task}/{self.metric}"


#: the kinds of :class:`Omission`, as the export's summary groups them, and what each means after its count
OMISSION_KINDS = {
    "left out": "headline(s) left out (a value EEE cannot hold, or no direction to rank by)",
    "no CI": "headline(s) published without a 95% CI",
    "no per-item lines": "task(s) or headline(s) published without (some) per-item lines",
    "nothing to publish": "task(s) or run(s) with nothing to publish",
}


@dataclass(frozen=True)
class Omission:
    """Something of a run that is not published, of a ``kind`` of :data:`OMISSION_KINDS`, and why."""

    task: str
    metric: str
    reason: str
    kind: str
    #: the task's logged items are not the run's: publish none of them
    untrusted_items: bool = False


def finite(value: Any) -> float | None:
    """``value`` as a float when it is a finite number, else None."""
    return float(value) if is_number(value) and math.isfinite(float(value)) else None


def _count(run: Run, task: str) -> int | None:
    """Items scored: a task's ``count`` metric where it reports one, else the documents lm_eval scored (for a group,
    the total over its members)."""
    counted = None if run.members(task) else finite(run.values(task).get("count"))
    if counted is not None:
        return int(counted)
    documents = run.document_counts(task)
    return documents[0] if documents else None


def _headline_metrics(declaration: Declaration, names: list[str]) -> list[Metric]:
    """The declared headlines with the seeded bootstrap's interval among the results' metrics, detail views (one
    template, one stereotype) left to their headline."""
    found = [declaration.metric(name) for name in names]
    return [
        metric
        for name, metric in zip(names, found)
        if metric is not None and metric.headline and metric.interval == "bootstrap"
    ]


def _no_items(run: Run, task: str) -> str:
    """Why a distance has no items to resample."""
    return "a group: its members' items are not resampled together" if run.members(task) else "no --log_samples items"


def _distance_bounds(metric: Metric) -> tuple[float, float] | None:
    if metric.bounds is None or metric.ideal is None:
        return None
    low, high = metric.bounds
    return 0.0, max(metric.ideal - low, high - metric.ideal)


def _distance(
    headline: Headline, metric: Metric, distances: Distances | None, no_items: str
) -> tuple[Headline, Omission | None]:
    """The distance of a middle-ideal headline to its ideal, with the interval of the resampled distance where the
    logged items give one, else the omission saying why not (``no_items`` when there are none)."""
    ideal = float(metric.ideal if metric.ideal is not None else math.nan)
    signed = (headline.interval.low, headline.interval.high) if headline.interval else None
    untrusted = False
    try:
        found, why = distances.of(metric.name, ideal, signed) if distances else (None, no_items)
    except ItemsMismatch as exc:
        found, why, untrusted = None, str(exc), True
    name = metric.name + DISTANCE_SUFFIX
    distance = Headline(
        headline.task, name, abs(headline.value - ideal), True, _distance_bounds(metric), None,
        f"|{metric.name} - {ideal:g}|: distance of {metric.name} to its ideal", found.stderr if found else None,
        "bootstrap", Interval(found.low, found.high) if found else None, headline.n,
        DEFAULT_ITERS if found else None, headline.benchmark, metric.name, ideal,
        provenance=Provenance(
            "export_distance", "export_distance_bootstrap" if found else "none",
            headline.provenance.metric_set if headline.provenance else None,
            headline.provenance.lm_eval_version if headline.provenance else "?",
            headline.provenance.backend if headline.provenance else "",
        ),
    )  # fmt: skip
    reason = f"distance to the ideal exported without CI: {why}"
    return distance, None if found else Omission(headline.task, name, reason, "no CI", untrusted)


def _undefined(values: dict, metric: Metric) -> int | None:
    """The recorded count of resamples on which ``metric`` was undefined (None where the results have none)."""
    found = finite(values.get(metric.undefined_name)) if metric.undefined_name else None
    return None if found is None else int(found)


def _provenance(run: Run, task: str, name: str, has_interval: bool) -> Provenance:
    """Who computed headline ``name`` and its interval; none for an interval the export leaves out."""
    found = provenance(run, task, name)
    return found if has_interval else replace(found, interval_by="none")


def plugin_headlines(
    run: Run, task: str, declaration: Declaration, distances: Distances | None
) -> tuple[list[Headline], list[Omission]]:
    """The headlines of a plugin task or group and their distances to the ideal (see the module docstring)."""
    values = run.values(task)
    headlines: list[Headline] = []
    omitted: list[Omission] = []
    benchmark = declaration.benchmark or (declaration.benchmarks[0] if len(declaration.benchmarks) == 1 else None)
    n = _count(run, task)
    for metric in _headline_metrics(declaration, list(values)):
        value = finite(values[metric.name])
        if metric.direction not in ("higher", "lower", "ideal"):
            omitted.append(
                Omission(task, metric.name, "left out: declared with no direction or ideal (not rankable)", "left out")
            )
            continue
        if value is None:
            why = "malformed in the results" if isinstance(values[metric.name], Unusable) else "EEE holds no NaN"
            omitted.append(Omission(task, metric.name, f"left out: value {values[metric.name]!r} ({why})", "left out"))
            continue
        low, high = (finite(values.get(bound)) for bound in metric.interval_names())
        interval = Interval(low, high) if low is not None and high is not None else None
        counted = values.get(metric.undefined_name) if metric.undefined_name else None
        if interval is not None and counted is not None and _undefined(values, metric) is None:
            interval = None  # the resamples it rests on are unknown: no interval and no count of resamples
            why = f"exported without CI: its count of undefined resamples {metric.undefined_name} is {counted!r}"
            omitted.append(Omission(task, metric.name, why, "no CI"))
        elif interval is None:
            recomputed = run.recomputed(task)
            why = "a group: lm_eval averages its members" if run.members(task) else "not in the results"
            why = recomputed.note if recomputed is not None and recomputed.note else why
            why = f"exported without CI: no finite bootstrap interval ({why})"
            omitted.append(Omission(task, metric.name, why, "no CI"))
        # a task's lm_eval stderr is its bootstrap standard error (SummaryTask); a group's, lm_eval's pooling of them
        stderr = run.stderr(task, metric.name)
        method = "lm_eval pooled over the members' bootstrap" if run.members(task) else "bootstrap"
        if stderr is None and run.recomputed(task) is not None:  # lm_eval's own task: the recomputed bootstrap's
            stderr, method = finite(values.get(f"{metric.name}_stderr_boot")), "bootstrap"
        headlines.append(
            Headline(
                task, metric.name, value, metric.direction == "lower", metric.bounds, metric.ideal,
                metric.description, stderr, method, interval, n, DEFAULT_ITERS if interval else None, benchmark,
                undefined=_undefined(values, metric) if interval else None,
                provenance=_provenance(run, task, metric.name, interval is not None),
            )
        )  # fmt: skip
        if metric.direction == "ideal":
            distance, omission = _distance(headlines[-1], metric, distances, _no_items(run, task))
            headlines.append(distance)
            omitted += [omission] if omission else []
    return headlines, omitted


def lm_eval_headlines(run: Run, task: str) -> tuple[list[Headline], list[Omission]]:
    """The metrics of one of lm_eval's own tasks with lm_eval's standard error and direction."""
    documents = run.document_counts(task)
    headlines: list[Headline] = []
    omitted: list[Omission] = []
    for name in capability_metrics(run, task):
        raw = run.values(task)[name]
        value, direction = finite(raw), capability_ideal(run, task, name)
        if value is None:
            omitted.append(Omission(task, name, f"left out: value {raw!r} (EEE holds no NaN)", "left out"))
        elif direction is None:
            omitted.append(Omission(task, name, "left out: lm_eval records no direction for it", "left out"))
        else:
            headlines.append(
                Headline(
                    task, name, value, direction.direction == "lower", None, None, f"lm_eval's {name} of {task}",
                    run.stderr(task, name), "lm_eval", None, documents[0] if documents else None, None, None,
                    provenance=provenance(run, task, name),
                )
            )  # fmt: skip
    return headlines, omitted
