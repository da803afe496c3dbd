"""The registry of benchmarks: each benchmark declares itself once, and everything else reads that declaration.

Each benchmark folder of the plugin's tasks package exports one :class:`Benchmark` from its ``__init__.py``; the
package's own ``__init__.py`` lists them and :func:`register` s them, so importing any plugin task (lm_eval imports a
task module through a YAML's ``class: !function``, which imports the tasks package first) fills the registry before a
task is built. ``core`` imports no task module and names none: the option parser, the data layer (a source by name,
:func:`get_source`), the data pins of a task and the report ask the registry.

Every benchmark is found through the entry-point group :data:`ENTRY_POINT_GROUP`
(``[project.entry-points."lm_eval_stereo.benchmarks"]``): the plugin names its list of benchmarks there, and a
benchmark from outside the package plugs in the same way, its distribution naming its :class:`Benchmark` (``name =
"package.module:BENCHMARK"``, or a list of them); every lookup here registers the installed ones first (once per
process), so a reader of results (the report, the export) need not import the benchmarks itself; a benchmark's task
YAMLs reach lm_eval through its tasks package (the plugin's) or ``--include_path`` (one from outside). Calling :func:`register` at the import of its task module works too,
but then only processes that import it (lm_eval's, not the report's) know it.

Every plugin task writes its benchmark and the id of its metric set (``<benchmark>.<kind>``,
:attr:`~lm_eval_stereo.core.metrics.MetricSet.id`) into its config metadata, which lm_eval keeps in the results
file, with what readers need besides (its language, the key field of its items, benchmark facts such as GEST's
prompt templates; :mod:`lm_eval_stereo.core.summary`); the results layer (:mod:`lm_eval_stereo.results`) finds the
declaration from there (:func:`metric_set`), whatever the task is called.
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.upstream import Source

if TYPE_CHECKING:
    from lm_eval_stereo.core.findings import Findings
    from lm_eval_stereo.core.metrics import MetricSet

#: ``(task, its config metadata as the task recorded it) -> MetricSet``: the metric set of a task of this kind (GEST
#: declares its metrics per prompt template and reads the templates the task recorded, ``facts.templates``)
MetricSetFactory = Callable[[str, Mapping[str, Any]], "MetricSet"]


#: the config metadata keys a task records for the readers of its results besides ``benchmark``, ``metric_set`` and
#: ``data``: ``language``, ``key_field`` (the item field keying its logged items), ``facts`` (benchmark-specific,
#: read by its metric set's factory) and ``scoring`` (its task class: how its items were scored; tasks of one metric
#: set and one scoring in different languages are translations of each other for the report's language comparisons);
#: :meth:`lm_eval_stereo.core.summary.SummaryTask.recorded` writes them
RECORDED = ("language", "key_field", "facts", "scoring")


class RecordedFactError(ValueError):
    """A fact a task recorded for its metric set's factory (``facts.<name>`` of its config metadata) is not of the kind
    the factory reads: ``field`` (``facts.<name>``), the ``value`` found and ``what`` it must be."""

    def __init__(self, name: str, value: Any, what: str) -> None:
        self.field, self.value, self.what = f"facts.{name}", value, what
        super().__init__(f"{self.field} is not {what} (found {value!r:.80})")


def recorded_fact(metadata: Mapping[str, Any], name: str, check: Callable[[Any], bool], what: str) -> Any:
    """The fact ``name`` a task recorded (``facts.<name>``), None where it recorded none; :class:`RecordedFactError`
    naming it when ``check`` refuses it (``what``: what it must be). A factory reads its facts through this, so that a
    malformed one is named by its field, never a raw error of the metric set it would build."""
    facts = metadata.get("facts") or {}
    value = facts.get(name) if isinstance(facts, Mapping) else None
    if value is not None and not check(value):
        raise RecordedFactError(name, value, what)
    return value


def same_for_every_task(metric_set: MetricSet) -> MetricSetFactory:
    """The factory of a metric set that is the same for every task of its kind."""

    def factory(task: str, metadata: Mapping[str, Any]) -> MetricSet:
        return metric_set

    return factory


@dataclass(frozen=True)
class Option:
    """A task option: its key in ``--metadata``, default, parser ``(value, name) -> parsed`` and help text
    (:mod:`lm_eval_stereo.core.options` parses them)."""

    name: str
    default: Any
    parse: Callable[[Any, str], Any]
    help: str

    def value(self, given: Mapping[str, Any]) -> Any:
        if self.name not in given or given[self.name] is None:
            return self.default
        return self.parse(given[self.name], self.name)


@dataclass(frozen=True)
class LmEvalTasks:
    """lm_eval's own tasks that a benchmark declares without running them: their data, prompts and ``process_results``
    stay lm_eval's, and their results record no declaration, so the readers find it by the task's name.

    ``metric_sets``: fnmatch pattern of an lm_eval task or group name -> the id of the metric set its logged values
    are recomputed with (first match wins); ``items(task, samples)``: the items of lm_eval's ``--log_samples`` lines of
    ``task`` by key (its per-document metric values and what the metric set reads besides; a key both languages of a
    parallel set share where they are translations of each other); ``language(task)``: the task's language and the
    family of its translations (None where it has none); ``version``: the lm_eval release whose task names and
    aggregation functions the declarations follow (said where the installed one differs)."""

    metric_sets: Mapping[str, str]
    items: Callable[[str, Sequence[Mapping[str, Any]]], dict[str, dict[str, Any]]]
    language: Callable[[str], tuple[str, str] | None]
    version: str

    def metric_set_id(self, task: str) -> str | None:
        """The metric-set id declared for lm_eval's task or group ``task``, None when no pattern matches."""
        return next((id_ for pattern, id_ in self.metric_sets.items() if fnmatch.fnmatchcase(task, pattern)), None)


@dataclass(frozen=True, eq=False)
class Benchmark:
    """One benchmark: its folder ``name``, ``title``, the fnmatch ``task_patterns`` of its task and group names, the
    ``options`` its tasks accept in ``--metadata`` (each name once), its ``metric_sets`` by id, the pinned upstream
    ``sources`` it reads (declared in its folder's ``sources.py``; a source that several benchmarks read is one object,
    declared once), its report ``figures``, its ``languages`` (the languages its tasks measure, built from its data's
    language registry, which its YAML generator reads itself), ``report_ideals``: the value the report measures a metric
    declared without a direction against (fnmatch pattern -> value; e.g. a leakage coefficient against 0, no carry-over,
    where the declaration stays undirected because the target language's own coefficient is expected positive), and
    ``commands``: subcommands of the ``lm-eval-stereo`` console script that only this benchmark has (name ->
    ``main(argv) -> exit status``), ``demo_tasks``: its tasks and groups in each run of ``make demo``
    (:data:`DEMO_RUNS`; the Makefile reads them with ``scripts/demo_tasks.py``), ``leaderboard``: its tasks and
    groups in each versioned leaderboard group (:data:`LEADERBOARD_GROUPS`; the group YAMLs are generated from them by
    ``tasks/leaderboard/_generate_groups.py``), ``findings``: the sentences of its page of docs/REAL_MODELS.md
    (:data:`~lm_eval_stereo.core.findings.Findings`; None: none), and ``lm_eval_tasks``: lm_eval's own tasks it
    declares (:class:`LmEvalTasks`; None for a benchmark of its own tasks)."""

    name: str
    title: str
    task_patterns: tuple[str, ...]
    options: tuple[Option, ...]
    metric_sets: Mapping[str, MetricSetFactory]
    sources: tuple[Source, ...]
    figures: tuple[FigureSpec, ...] = ()
    languages: tuple[str, ...] = ()
    report_ideals: Mapping[str, float] = field(default_factory=dict)
    commands: Mapping[str, Callable[[Sequence[str]], int]] = field(default_factory=dict)
    demo_tasks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    leaderboard: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    findings: Findings | None = None
    lm_eval_tasks: LmEvalTasks | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple({option.name: option for option in self.options}.values()))
        foreign = [key for key in self.metric_sets if key.partition(".")[0] != self.name]
        if foreign:
            raise ValueError(f"benchmark {self.name}: metric-set ids must start with '{self.name}.': {foreign}")
        unknown = sorted(set(self.demo_tasks) - set(DEMO_RUNS))
        if unknown:
            raise ValueError(f"benchmark {self.name}: demo_tasks of unknown runs {unknown}; known: {DEMO_RUNS}")
        unknown = sorted(set(self.leaderboard) - set(LEADERBOARD_GROUPS))
        if unknown:
            raise ValueError(
                f"benchmark {self.name}: leaderboard tasks of unknown groups {unknown}; known: {LEADERBOARD_GROUPS}"
            )

    def owns(self, task: str) -> bool:
        """Whether ``task`` (a task or group name) matches one of :attr:`task_patterns`."""
        return any(fnmatch.fnmatchcase(task, pattern) for pattern in self.task_patterns)


#: the runs of ``make demo`` a benchmark names tasks for (:attr:`Benchmark.demo_tasks`): ``tiny``, a random tiny
#: causal LM on every task it can run; with SmolLM2, ``scoring`` (log-likelihood, ``--model hf-prefix``),
#: ``scoring_more`` (the same on more documents, where a statistic needs them) and ``generation`` (the chat template)
DEMO_RUNS = ("tiny", "scoring", "scoring_more", "generation")

#: the versioned leaderboard groups a benchmark names tasks for (:attr:`Benchmark.leaderboard`; docs/LEADERBOARD.md):
#: ``stereo_leaderboard``, every log-likelihood benchmark a causal LM can run, and ``stereo_leaderboard_chat``, the
#: generative protocols
LEADERBOARD_GROUPS = ("stereo_leaderboard", "stereo_leaderboard_chat")

_REGISTRY: dict[str, Benchmark] = {}

#: the upstream sources of the registered benchmarks by name, in registration order (filled by :func:`register`; a
#: source by name is :func:`get_source`)
SOURCES: dict[str, Source] = {}

_NONE_REGISTERED = "none registered (the plugin's tasks package registers them when it is imported)"


def register(*benchmarks: Benchmark) -> None:
    """Add benchmarks and their sources to the registry (the tasks package registers the plugin's benchmarks)."""
    for benchmark in benchmarks:
        known = _REGISTRY.get(benchmark.name)
        if known is benchmark:
            continue
        if known is not None:
            raise ValueError(f"benchmark {benchmark.name} is declared twice")
        for source in benchmark.sources:
            if SOURCES.get(source.name, source) is not source:
                raise ValueError(
                    f"benchmark {benchmark.name}: source {source.name} is declared twice; declare it once and import "
                    "it into each benchmark that reads it"
                )
        _REGISTRY[benchmark.name] = benchmark
        SOURCES.update((source.name, source) for source in benchmark.sources)


#: the entry-point group in which a distribution outside lm-eval-stereo names its :class:`Benchmark`
ENTRY_POINT_GROUP = "lm_eval_stereo.benchmarks"
_entry_points_loaded = False


class BenchmarkEntryPointWarning(RuntimeWarning):
    """An installed distribution names something in :data:`ENTRY_POINT_GROUP` that cannot be registered."""


def _registered() -> dict[str, Benchmark]:
    """The registry, with the benchmarks that installed distributions name in :data:`ENTRY_POINT_GROUP` registered
    on the first call; one that cannot be loaded or registered is left out with a warning naming it."""
    global _entry_points_loaded
    if not _entry_points_loaded:
        _entry_points_loaded = True
        from importlib.metadata import entry_points

        own = __name__.partition(".")[0]
        found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda point: point.module.partition(".")[0] != own)
        for entry_point in found:  # the plugin's own benchmarks first, in the order of their list
            try:
                declared = entry_point.load()
                listed = tuple(declared) if isinstance(declared, (tuple, list)) else (declared,)
                strangers = [type(item).__name__ for item in listed if not isinstance(item, Benchmark)]
                if strangers or not listed:
                    raise TypeError(
                        f"{', '.join(strangers) or 'an empty list'}, not a lm_eval_stereo.core.registry.Benchmark"
                    )
                register(*listed)
            except Exception as exc:  # noqa: BLE001 - a broken outside benchmark must not stop the others
                warnings.warn(
                    f"benchmark entry point {entry_point.name} = {entry_point.value} ({ENTRY_POINT_GROUP}) is left "
                    f"out: {type(exc).__name__}: {exc}",
                    BenchmarkEntryPointWarning,
                    stacklevel=3,
                )
    return _REGISTRY


def benchmarks() -> tuple[Benchmark, ...]:
    """Every registered benchmark, in registration order."""
    return tuple(_registered().values())


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name`` (its folder name); KeyError listing the known ones."""
    try:
        return _registered()[name]
    except KeyError:
        known = ", ".join(_REGISTRY) or _NONE_REGISTERED
        raise KeyError(f"unknown benchmark {name!r}; known: {known}") from None


def get_source(name: str) -> Source:
    """The upstream source called ``name`` that a registered benchmark reads; KeyError listing the known ones."""
    _registered()
    try:
        return SOURCES[name]
    except KeyError:
        known = ", ".join(sorted(SOURCES)) or _NONE_REGISTERED
        raise KeyError(f"unknown data source {name!r}; known: {known}") from None


def all_options() -> frozenset[str]:
    """The names of every option of every registered benchmark (one ``--metadata`` serves every task of a run)."""
    return frozenset(option.name for bench in _registered().values() for option in bench.options)


def benchmark_of_metric_set(metric_set_id: str) -> Benchmark | None:
    """The benchmark declaring the metric set ``metric_set_id``, None when none does."""
    bench = _registered().get(metric_set_id.partition(".")[0])
    return bench if bench is not None and metric_set_id in bench.metric_sets else None


def metric_set(metric_set_id: str, task: str, metadata: Mapping[str, Any] | None = None) -> MetricSet | None:
    """The metric set ``metric_set_id`` of ``task`` from what the task recorded in its config ``metadata`` (None when
    no registered benchmark declares that id)."""
    bench = benchmark_of_metric_set(metric_set_id)
    return bench.metric_sets[metric_set_id](task, metadata or {}) if bench is not None else None


def lm_eval_task(task: str) -> tuple[Benchmark, str] | None:
    """The benchmark declaring lm_eval's own task or group ``task`` and the id of its metric set (:class:`LmEvalTasks`),
    None when no registered benchmark declares it."""
    for bench in _registered().values():
        found = bench.lm_eval_tasks.metric_set_id(task) if bench.lm_eval_tasks is not None else None
        if found is not None:
            return bench, found
    return None


def command(name: str) -> Callable[[Sequence[str]], int] | None:
    """The console-script subcommand ``name`` that a registered benchmark declares, None when none does."""
    return next((bench.commands[name] for bench in _registered().values() if name in bench.commands), None)


def benchmark_by_task_name(task: str) -> Benchmark | None:
    """The benchmark whose :attr:`Benchmark.task_patterns` match ``task``: only for results files written before
    tasks recorded their benchmark (:mod:`lm_eval_stereo.results.legacy`)."""
    return next((bench for bench in _registered().values() if bench.owns(task)), None)
