"""How a benchmark declares its metrics: once, in Python.

A :class:`MetricSet` lists every metric of a task (:class:`Metric`: name, direction, ideal value, which kind of 95%
interval it carries, :data:`IntervalKind`) and holds the two functions that compute them from the task's per-document
items:

- ``summarize(items) -> {name: value}``: every declared metric, and the bounds of the intervals that are not the
  seeded bootstrap's (GEST-MT's per-stereotype Agresti-Coull intervals, the persona co-occurrence interval that
  resamples outputs), under the same names ``<name>_ci_low``/``<name>_ci_high``;
- one or more :class:`Resampling`: a statistic giving the metrics with ``ci=True``, re-run by the one generic
  resampler (:func:`lm_eval_stereo.core.bootstrap.bootstrap`) on each resample of ``data(items)`` (default: the items
  themselves; numeric benchmarks pass columns, which resample faster), optionally within ``strata`` when a statistic
  is defined within groups (e.g. one GEST stereotype's mean over that stereotype's samples).

:meth:`MetricSet.compute` adds ``<name>_ci_low`` / ``<name>_ci_high`` (95% percentile interval),
``<name>_ci_undefined`` (the resamples, of :data:`~lm_eval_stereo.core.bootstrap.DEFAULT_ITERS`, on which the
statistic was not finite and which the interval therefore leaves out; 0 where it is defined on every resample) and
``<name>_stderr_boot`` (bootstrap standard error) for every ``ci`` metric and checks that exactly the declared metrics
and interval bounds came out. A statistic is either defined on every resample, with the boundary value its formula
implies (stated in its metric set's docstring and its README), or its undefined resamples are counted there. No metric is declared under a ``_ci_low``/``_ci_high`` name: a metric names its interval
kind, and readers (the report, the export) find intervals from the declaration. The harness glue (:mod:`lm_eval_stereo.core.summary`) turns a MetricSet into lm_eval aggregations; the task
YAMLs repeat no metric name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lm_eval_stereo.core.bootstrap import DEFAULT_SEED, NAN_INTERVAL, Interval, bootstrap

Direction = Literal["higher", "lower", "ideal", "count", "info"]
CI_SUFFIXES = ("ci_low", "ci_high")
#: ``<name>_ci_undefined``: the bootstrap resamples on which a ``ci`` metric's statistic was not finite
UNDEFINED_SUFFIX = "ci_undefined"
#: how a metric's 95% interval is computed: ``bootstrap`` by the one seeded resampler from the declared
#: :class:`Resampling` (``ci=True``); ``agresti-coull`` (a binomial share's score interval) and ``outputs-bootstrap`` (a
#: seeded bootstrap over generated outputs, not items) by the metric set's ``summarize`` itself
IntervalKind = Literal["bootstrap", "agresti-coull", "outputs-bootstrap"]
INTERVAL_KINDS: tuple[str, ...] = ("bootstrap", "agresti-coull", "outputs-bootstrap")


@dataclass(frozen=True)
class CompanionFigure:
    """A figure the report shows next to a headline, computed from the task's results: ``compute(values, config)``
    gets the task's metric values and its config from the results file (None when the figure does not apply; e.g.
    GerBBQ+'s accuracy over determinate answers). With ``reads_other_tasks``, ``compute(values, config, others)`` also
    gets the model's other tasks in the report, ``{task: (values, config)}``, whichever results file holds them, for a
    figure of a companion task found by what the tasks recorded (e.g. the control set's accuracy in the same language
    next to a bias score)."""

    label: str
    compute: Callable[..., float | None]
    reads_other_tasks: bool = False


@dataclass(frozen=True)
class Metric:
    """One metric: ``direction`` is "higher"/"lower" (is better), "ideal" (``ideal`` in the middle, e.g. SS = 50),
    "count" (bookkeeping: items, ties, undetermined outputs) or "info" (a string such as the normalisation used).
    ``detail`` marks a view of a headline (one template, one stereotype) that reports show with the benchmark's details,
    not in their summary. ``label`` names the metric for a person ("SS"), ``above``/``below`` say what a value whose CI
    lies above/below the ideal means ("prefers stereotypes"); ``companion_figure`` is a figure the report shows next to
    it (:class:`CompanionFigure`). ``bounds`` is the range ``(low, high)`` the metric can take (``math.inf`` for an open
    end), None where it is not declared; exports (Every Eval Ever ``min_score``/``max_score``) read it. ``interval``
    names the kind of its 95% interval (:data:`IntervalKind`, None: none); ``ci=True`` is short for
    ``interval="bootstrap"``, the seeded resampler's, and either sets the other. ``caution`` says, for a bookkeeping
    metric the report checks (ties, undetermined outputs, detection yield, a fit that did not converge), what its
    warning means for this benchmark's headlines."""

    name: str
    direction: Direction
    ideal: float | None = None
    ci: bool = False
    description: str = ""
    detail: bool = False
    label: str = ""
    above: str = ""
    below: str = ""
    companion_figure: CompanionFigure | None = None
    bounds: tuple[float, float] | None = None
    interval: IntervalKind | None = None
    caution: str = ""

    def __post_init__(self) -> None:
        if self.interval is not None and self.interval not in INTERVAL_KINDS:
            raise ValueError(f"metric {self.name}: unknown interval kind {self.interval!r}; one of {INTERVAL_KINDS}")
        if self.ci and self.interval not in (None, "bootstrap"):
            raise ValueError(f"metric {self.name}: ci=True is the seeded bootstrap, not {self.interval!r}")
        if self.ci or self.interval == "bootstrap":
            object.__setattr__(self, "ci", True)
            object.__setattr__(self, "interval", "bootstrap")
        if self.name.endswith(tuple(f"_{suffix}" for suffix in (*CI_SUFFIXES, UNDEFINED_SUFFIX))):
            raise ValueError(f"metric {self.name}: interval bounds are declared by their metric's interval kind")
        if (self.direction == "ideal") != (self.ideal is not None):
            raise ValueError(f"metric {self.name}: an ideal value goes with direction 'ideal' and only with it")
        if self.bounds is not None:
            low, high = self.bounds
            inside = self.ideal is None or low <= self.ideal <= high
            if not low < high or not inside:
                raise ValueError(f"metric {self.name}: bounds {self.bounds} must be increasing and hold the ideal")

    @property
    def title(self) -> str:
        """The metric's name for a person (its ``label``, else its name)."""
        return self.label or self.name

    def reading(self, side: Literal["above", "below"]) -> str:
        """What a CI entirely above or below the ideal means (the declared wording, else "above/below the ideal")."""
        return (self.above if side == "above" else self.below) or f"{side} the ideal"

    @property
    def higher_is_better(self) -> bool | None:
        """lm_eval's flag: True/False for directed metrics, None where neither end is better."""
        return {"higher": True, "lower": False}.get(self.direction)

    @property
    def numeric(self) -> bool:
        return self.direction != "info"

    @property
    def has_interval(self) -> bool:
        """Whether the metric carries a 95% interval (of any :data:`IntervalKind`)."""
        return self.interval is not None

    @property
    def headline(self) -> bool:
        """A headline: a metric with an interval that is not a detail view."""
        return self.has_interval and not self.detail

    def interval_names(self) -> tuple[str, ...]:
        """``<name>_ci_low``, ``<name>_ci_high`` where the metric has an interval."""
        return tuple(f"{self.name}_{suffix}" for suffix in CI_SUFFIXES) if self.has_interval else ()

    @property
    def undefined_name(self) -> str | None:
        """``<name>_ci_undefined`` for a metric whose interval is a bootstrap (the seeded resampler's, ``ci``, or one
        its ``summarize`` runs, ``outputs-bootstrap``), else None."""
        return f"{self.name}_{UNDEFINED_SUFFIX}" if self.interval in ("bootstrap", "outputs-bootstrap") else None

    def reported_names(self) -> tuple[str, ...]:
        """The metric and what lm_eval reports beside it: its interval bounds and, for a ``ci`` metric, the count of
        undefined resamples."""
        return (self.name, *self.interval_names(), *((self.undefined_name,) if self.undefined_name else ()))


Bounds = tuple[float, float]
#: a share (0 to 1), a percentage (0 to 100), a signed share difference (-1 to 1), a ratio (0 to infinity), any number
SHARE: Bounds = (0.0, 1.0)
PERCENT: Bounds = (0.0, 100.0)
SIGNED_SHARE: Bounds = (-1.0, 1.0)
RATIO: Bounds = (0.0, math.inf)
REAL: Bounds = (-math.inf, math.inf)


def higher(name: str, description: str = "", ci: bool = False, **reading: Any) -> Metric:
    return Metric(name, "higher", ci=ci, description=description, **reading)


def lower(name: str, description: str = "", ci: bool = False, **reading: Any) -> Metric:
    return Metric(name, "lower", ci=ci, description=description, **reading)


def ideal(
    name: str, value: float, description: str = "", ci: bool = False, detail: bool = False, **reading: Any
) -> Metric:
    """A metric best at ``value``; ``reading``: ``label``, ``above``, ``below``, ``bounds`` (see :class:`Metric`)."""
    return Metric(name, "ideal", ideal=value, ci=ci, description=description, detail=detail, **reading)


def count(name: str, description: str = "", caution: str = "") -> Metric:
    return Metric(name, "count", description=description, caution=caution)


def info(name: str, description: str = "", ci: bool = False, interval: IntervalKind | None = None) -> Metric:
    return Metric(name, "info", ci=ci, description=description, interval=interval)


Items = list[dict[str, Any]]


@dataclass(frozen=True)
class Bookkeeping:
    """A bookkeeping metric (items, ties, undetermined outputs, ...): ``pooling`` says how a group totals it over its
    members ("sum" for counts; "share" for shares, weighted by each member's items), ``qualifies`` whether it is shown
    beside the headlines in lm_eval's console table when a task declares it."""

    name: str
    pooling: Literal["sum", "share"]
    qualifies: bool = True


#: every bookkeeping metric, in the order tables show them
BOOKKEEPING = (
    Bookkeeping("count", "sum"),
    Bookkeeping("pairs", "sum"),
    Bookkeeping("n_generations", "sum"),
    Bookkeeping("n_classified", "sum", qualifies=False),
    Bookkeeping("unscored", "sum"),
    Bookkeeping("near_ties", "sum"),
    Bookkeeping("undetermined", "share"),
    Bookkeeping("empty", "share"),
    Bookkeeping("unclassified_share", "share"),
    Bookkeeping("ties", "sum"),
    Bookkeeping("boundary_mismatches", "sum"),
    Bookkeeping("identical_pairs", "sum", qualifies=False),
    Bookkeeping("overlength_pairs", "sum", qualifies=False),
    Bookkeeping("no_shared_pairs", "sum", qualifies=False),
    Bookkeeping("nan_pairs", "sum"),
    Bookkeeping("roundtrip_mismatches", "sum"),
    Bookkeeping("unscorable_tokens", "sum"),
    Bookkeeping("undetected", "sum"),
    Bookkeeping("detection_yield", "share"),
    Bookkeeping("unmatched", "sum"),
    Bookkeeping("scored_cells", "sum"),
    Bookkeeping("fit_converged", "sum"),
)
#: bookkeeping counts that qualify a headline, shown beside it in lm_eval's console table when a task declares them
QUALIFYING_COUNTS = tuple(entry.name for entry in BOOKKEEPING if entry.qualifies)
#: at most this many metrics of a task in lm_eval's console table (the results file keeps every one)
TABLE_ROWS = 8
#: the console-table metrics of every plugin task built in this process, by task name (see :func:`table_metrics`)
_TABLES: dict[str, tuple[str, ...]] = {}


def _items_themselves(items: Items) -> Items:
    return items


@dataclass(frozen=True)
class Resampling:
    """A statistic re-run on bootstrap resamples of ``data(items)``, within ``strata(items)`` if given."""

    statistic: Callable[[Any], Mapping[str, float]]
    data: Callable[[Items], Any] = _items_themselves
    strata: Callable[[Items], Sequence[Hashable]] | None = None

    def run(self, items: Items, seed: int = DEFAULT_SEED) -> dict[str, Interval]:
        strata = self.strata(items) if self.strata is not None else None
        return bootstrap(self.data(items), self.statistic, strata=strata, seed=seed)


@dataclass(frozen=True)
class ItemScore:
    """What one item of a task scores, for per-item exports: ``score(item)`` is the raw value whose mean gives the
    headline ``metric`` (None for an item the metric leaves out), ``correct(item)`` a yes/no reading of it and
    ``correct_means`` what that reading is where an item has no right answer (StereoSet: false = the stereotype was
    preferred)."""

    metric: str
    score: Callable[[Mapping[str, Any]], float | None]
    correct: Callable[[Mapping[str, Any]], bool]
    correct_means: str


@dataclass(frozen=True)
class PairingUnit:
    """What two runs of a task share item by item when that is not the logged items themselves (e.g. the
    association cells of a leakage table, which every language has): ``units(items)`` turns a run's logged items into
    those units by key, and ``metric_set``'s resampling statistics compare them (its interval metrics)."""

    units: Callable[[Iterable[Mapping[str, Any]]], dict[str, dict[str, Any]]]
    metric_set: MetricSet


@dataclass(frozen=True)
class RankAgreement:
    """Metrics that rank units (e.g. stereotypes by their mean score) in each language: the report compares every
    language's ranking with the ``reference`` language's by Spearman's rank correlation of ``metrics`` on the items
    both share, with a bootstrap interval (:mod:`lm_eval_stereo.report.rankings`). The metrics must be computed by one
    of the metric set's resampling statistics."""

    reference: str
    metrics: tuple[str, ...]


@dataclass(frozen=True)
class MetricSet:
    """All metrics of a task and the functions that compute them (see the module docstring). ``id`` names the kind
    of metric set in the benchmark registry, ``<benchmark>.<kind>`` (:mod:`lm_eval_stereo.core.registry`); tasks
    write it into their results so that the report finds this declaration whatever the task is called.
    ``item_score`` says what one item scores (:class:`ItemScore`), where the benchmark declares it; ``pairing``
    what paired comparisons compare where it is not the items (:class:`PairingUnit`; None: the items);
    ``rank_agreement`` the ranking the report compares language against a reference language (:class:`RankAgreement`;
    None: none); ``primary`` the headline a reader is shown first, one per task (the paper's main figure; empty: the
    first of :attr:`table`, see :attr:`primary_headline`)."""

    label: str
    metrics: tuple[Metric, ...]
    summarize: Callable[[Items], Mapping[str, Any]]
    resampling: tuple[Resampling, ...] = field(default=())
    id: str = ""
    item_score: ItemScore | None = None
    pairing: PairingUnit | None = None
    rank_agreement: RankAgreement | None = None
    primary: str = ""

    def __post_init__(self) -> None:
        names = [m.name for m in self.metrics]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"{self.label}: metrics declared twice: {', '.join(duplicated)}")
        if self.primary and self.primary not in self.table:
            raise ValueError(f"{self.label}: the primary headline {self.primary!r} is not one of {list(self.table)}")
        if any(m.ci for m in self.metrics) and not self.resampling:
            raise ValueError(f"{self.label}: metrics with ci=True need a Resampling")
        if self.item_score is not None and self.item_score.metric not in names:
            raise ValueError(f"{self.label}: the item score feeds {self.item_score.metric!r}, which is not declared")

    @property
    def table(self) -> tuple[str, ...]:
        """The metrics lm_eval's console table shows (at most :data:`TABLE_ROWS`): the :attr:`headlines` (without
        any, the directed or ideal ones that are not a detail view), then the declared :data:`QUALIFYING_COUNTS`."""
        return self.table_with()

    def table_with(self, counts: Iterable[str] = ()) -> tuple[str, ...]:
        """:attr:`table` of a task that also reports ``counts`` outside its metric set (``near_ties``), which take
        their place among the :data:`QUALIFYING_COUNTS`."""
        headlines = list(self.headlines) or [
            m.name for m in self.metrics if m.direction in ("higher", "lower", "ideal") and not m.detail
        ]
        declared = {m.name for m in self.metrics} | set(counts)
        return tuple([*headlines, *(name for name in QUALIFYING_COUNTS if name in declared)][:TABLE_ROWS])

    @property
    def headlines(self) -> tuple[str, ...]:
        """The headlines: declared metrics with an interval (any :data:`IntervalKind`) that are not a detail view."""
        return tuple(m.name for m in self.metrics if m.headline)

    @property
    def primary_headline(self) -> str:
        """The headline shown first (the report's first screen): the declared ``primary``, else the first of
        :attr:`table` (the first headline; empty where the set declares nothing directed)."""
        return self.primary or next(iter(self.table), "")

    @property
    def names(self) -> tuple[str, ...]:
        """Every metric lm_eval reports: the declared ones, each metric with an interval followed by its bounds (and a
        bootstrap one by its count of undefined resamples, ``<name>_ci_undefined``)."""
        return tuple(name for m in self.metrics for name in m.reported_names())

    def metric(self, name: str) -> Metric:
        """The declaration of ``name`` (an interval bound or undefined count inherits the direction of its metric)."""
        for m in self.metrics:
            if name in m.reported_names():
                return m
        raise KeyError(f"{self.label} has no metric {name!r}")

    def higher_is_better(self) -> dict[str, bool | None]:
        """lm_eval's flags: a metric's own, its bounds' the same; a count of undefined resamples none (a count)."""
        return {
            name: None if name.endswith(f"_{UNDEFINED_SUFFIX}") else self.metric(name).higher_is_better
            for name in self.names
        }

    def group_means(self) -> tuple[str, ...]:
        """Metrics a group averages over its tasks: numeric ones, not interval bounds (a mean of bounds is no
        interval)."""
        return tuple(m.name for m in self.metrics if m.numeric)

    def intervals(self, items: Items, seed: int = DEFAULT_SEED) -> dict[str, float]:
        """``<name>_ci_low``/``_ci_high``, ``<name>_ci_undefined`` and ``<name>_stderr_boot`` of every ``ci`` metric
        (NaN bounds where no interval could be computed; the undefined count is that of the resamples whose value was
        not finite, 0 without items), from bootstrap resamples seeded with ``seed``."""
        names = [m.name for m in self.metrics if m.ci]
        if not names:
            return {}
        found: dict[str, Interval] = {}
        for resampling in self.resampling if items else ():
            found.update(resampling.run(items, seed))
        result: dict[str, float] = {}
        for name in names:
            interval = found.get(name, NAN_INTERVAL)
            result[f"{name}_ci_low"], result[f"{name}_ci_high"] = interval.low, interval.high
            result[f"{name}_{UNDEFINED_SUFFIX}"] = interval.undefined
            result[f"{name}_stderr_boot"] = interval.stderr
        return result

    def compute(self, items: Items) -> dict[str, Any]:
        """Every metric of :attr:`names` from the items (plus the bootstrap standard errors ``<name>_stderr_boot``)."""
        values = dict(self.summarize(items))
        values.update(self.intervals(items))
        missing = [name for name in self.names if name not in values]
        if missing:
            raise RuntimeError(f"{self.label}: summarize did not compute {', '.join(missing)}")
        return values


def register_table(task: str, metric_set: MetricSet, counts: Iterable[str] = ()) -> None:
    """Record that the plugin task ``task`` reports ``metric_set`` and the bookkeeping ``counts`` its task class adds
    (its console-table metrics, :func:`table_metrics`).

    Called when a task is built, so only tasks of this process count: a metric set built for other reasons (the
    report's candidates, a test) never changes what another task's table shows."""
    _TABLES[task] = metric_set.table_with(counts)


def table_metrics(task: str) -> tuple[str, ...] | None:
    """The console-table metrics of a plugin task built in this process, or for a group the union over its member
    tasks (those named ``<group>_...``: ``gest`` → ``gest_en``, ``gest_mt_cs``, ...) up to :data:`TABLE_ROWS`; None
    for anything else (lm_eval's own tasks and groups)."""
    if task in _TABLES:
        return _TABLES[task]
    members = [names for name, names in _TABLES.items() if name.startswith(f"{task}_")]
    return tuple(dict.fromkeys(name for names in members for name in names))[:TABLE_ROWS] if members else None


def nan_for(names: Iterable[str]) -> dict[str, float]:
    """NaN for each of ``names`` (metrics of an empty selection)."""
    return dict.fromkeys(names, math.nan)
