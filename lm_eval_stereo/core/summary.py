"""The one summary-task mechanism: every plugin task computes all its metrics once from its per-document items.

lm_eval aggregates every metric separately, each from the list of values ``process_results`` returned for it. A
corpus-level benchmark computes all its metrics from the same items, so a :class:`SummaryTask` returns the full item
under its FIRST metric and only the item's key under the others (``--log_samples`` holds each item once). The first
metric's aggregation computes every metric (:meth:`MetricSet.compute`, items sorted by key, so bootstrap resamples
do not depend on request order or data-parallel ranks); the other aggregations look the result up by the items' keys.
lm_eval runs the aggregations of a task in the order of the first document's metrics, so the first one runs first.

A task YAML names its class (``class: !function <its benchmark's task module>.<Class>``) and repeats no
metric: :class:`SummaryTask` answers lm_eval's public hooks ``process_results``, ``aggregation`` and
``higher_is_better`` from the class's :class:`~lm_eval_stereo.core.metrics.MetricSet`, and parses the task's options
(:mod:`lm_eval_stereo.core.options`) before the data is loaded.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from lm_eval.api.task import ConfigurableTask

from lm_eval_stereo.core import model_arguments, registry, truncation
from lm_eval_stereo.core import options as task_options
from lm_eval_stereo.core.extras import Extra
from lm_eval_stereo.core.metrics import MetricSet, register_table
from lm_eval_stereo.core.model_tokenizer import check_local_tokenizer
from lm_eval_stereo.core.near_ties import NEAR_TIES
from lm_eval_stereo.core.near_ties import fields as near_tie_fields
from lm_eval_stereo.core.near_ties import names as tie_names
from lm_eval_stereo.core.near_ties import range_names as tie_range_names

MAX_CACHED = 32


class SharedSummary:
    """Per-document values and aggregations for the metrics of ``metric_set``, all computed at once; with
    ``near_ties`` (a task whose items are judgements comparing log-likelihoods), also the count of near-tie items and
    each headline's range over their judgements (:mod:`lm_eval_stereo.core.near_ties`)."""

    def __init__(self, metric_set: MetricSet, key_field: str = "key", near_ties: bool = False) -> None:
        self.metric_set = metric_set
        self.near_ties = near_ties
        self.metrics = metric_set.names + (tie_names(metric_set.headlines) if near_ties else ())
        self.key_field = key_field
        self._summaries: OrderedDict[tuple[str, ...], Mapping[str, Any]] = OrderedDict()
        with_interval = {metric.name for metric in metric_set.metrics if metric.ci}
        #: every metric's aggregation function, built once: lm_eval asks the task for all of them once per metric
        self.aggregations = {name: self._aggregation(name, name in with_interval) for name in self.metrics}

    def compute(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Every metric of the items (:meth:`MetricSet.compute`), with the near-tie fields where they are counted."""
        values = self.metric_set.compute(items)
        if self.near_ties:
            values.update(near_tie_fields(self.metric_set.summarize, items, self.metric_set.headlines, values))
        return values

    @property
    def first(self) -> str:
        return self.metrics[0]

    def per_doc_values(self, item: dict[str, Any]) -> dict[str, Any]:
        """The full item under the first metric, the item's key under all the others."""
        key = item[self.key_field]
        return {name: item if name == self.first else key for name in self.metrics}

    def summary(self, values: list[Any]) -> Mapping[str, Any]:
        """The summary for these values: computed from items, or found by the items' keys."""
        if values and isinstance(values[0], dict):
            items = sorted(values, key=lambda item: str(item[self.key_field]))
            key = tuple(str(item[self.key_field]) for item in items)
            if key in self._summaries and self._summaries[key]["_items"] is values:  # the same call's stderr
                return self._summaries[key]
            self._summaries[key] = {**self.compute(items), "_items": values}
            while len(self._summaries) > MAX_CACHED:
                self._summaries.popitem(last=False)
            return self._summaries[key]
        key = tuple(sorted(str(value) for value in values))
        if key not in self._summaries:
            raise RuntimeError(
                f"{self.metric_set.label}: metrics of these {len(values)} documents were not computed; the "
                f"aggregation of {self.first!r}, which receives the per-document items, must run first"
            )
        return self._summaries[key]

    def _aggregation(self, name: str, with_interval: bool) -> Callable[[list[Any]], Any]:
        """The aggregation function of metric ``name``; ``with_interval``: with its bootstrap standard error."""

        def aggregate(values: list[Any]) -> Any:
            return self.summary(values)[name]

        aggregate.__name__ = aggregate.__qualname__ = f"agg_{name}"
        aggregate.__doc__ = f"Aggregation of ``{name}`` ({self.metric_set.label})."
        if with_interval:

            def bootstrap_stderr(values: list[Any]) -> float:
                return self.summary(values)[f"{name}_stderr_boot"]

            aggregate.bootstrap_stderr = bootstrap_stderr  # type: ignore[attr-defined]
        return aggregate


#: the metadata keys a task records for its readers besides its declaration (:meth:`SummaryTask.recorded`); not
#: options, and not passed to the task's ``custom_dataset``
RECORDED = registry.RECORDED


def declaration(metric_set: MetricSet) -> dict[str, str]:
    """What a task writes into its config metadata so that its results name what computed them: its ``benchmark``,
    the ``metric_set`` id (:mod:`lm_eval_stereo.core.registry`) and ``data``, ``source@commit`` of every pinned upstream
    source the benchmark reads."""
    bench = registry.benchmark_of_metric_set(metric_set.id)
    if bench is None:
        raise RuntimeError(
            f"{metric_set.label}: metric set id {metric_set.id!r} is declared by no registered benchmark "
            "(a benchmark declares its metric sets in its folder's __init__.py)"
        )
    pins = ", ".join(f"{source.name}@{source.commit[:12]}" for source in sorted(bench.sources, key=lambda s: s.name))
    return {"benchmark": bench.name, "metric_set": metric_set.id, "data": pins}


def _named_language(dataset_kwargs: Mapping[str, Any] | None) -> str | None:
    """The language a task's YAML names in its ``dataset_kwargs`` (``language`` or ``lang``), None when none."""
    for key in ("language", "lang"):
        if isinstance((dataset_kwargs or {}).get(key), str):
            return dataset_kwargs[key]
    return None


#: lm_eval's ``construct_requests`` keywords that an ``Instance`` does not take: the chat template to format with
CHAT_TEMPLATE_KEYWORDS = ("apply_chat_template", "chat_template")


def instance_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """lm_eval's ``construct_requests`` keywords for the ``Instance`` s a plugin task builds: its chat-template ones
    dropped (the plugin's requests are scored as they are written, never formatted with a chat template)."""
    return {key: value for key, value in kwargs.items() if key not in CHAT_TEMPLATE_KEYWORDS}


class SummaryTask(ConfigurableTask):
    """A YAML task (minus ``class``) whose metrics are the :class:`MetricSet` of :meth:`metric_set`.

    Subclasses set :attr:`METRICS` (or override :meth:`metric_set`), :attr:`OPTIONS` and implement :meth:`item`.
    The YAML's ``custom_dataset`` receives the model arguments, the parsed options and ``dataset_kwargs``.

    Besides its declaration, a task records in its config metadata what readers of its results need
    (:meth:`recorded`): ``key_field``, the item field that keys its logged items; ``language``, the language it
    measures (:meth:`language`; absent where a task has no one language; a group records nothing, its members do);
    ``facts``, benchmark-specific facts its metric set is built from (:meth:`facts`, e.g. GEST's prompt templates).
    """

    METRICS: ClassVar[MetricSet | None] = None
    OPTIONS: ClassVar[Sequence[registry.Option]] = ()
    KEY_FIELD: ClassVar[str] = "key"
    #: the language of a task whose YAML does not say it (``gest_en``); else ``dataset_kwargs`` or the benchmark's
    LANGUAGE: ClassVar[str | None] = None
    #: the optional extra of lm-eval-stereo its scoring needs (a language tool), checked before anything is loaded
    EXTRA: ClassVar[Extra | None] = None
    #: whether it scores an encoder-decoder model's targets (mT5: ``--model hf --model_args backend=seq2seq``), not a
    #: causal LM's continuations (``scripts/run_real_models.py`` runs the causal log-likelihood tasks)
    SEQ2SEQ: ClassVar[bool] = False
    #: whether its items judge by comparing a causal LM's log-likelihoods and mark the judgements that are near ties
    #: (``near_tie``, ``near_tie_alternatives``): the task then reports ``near_ties`` and each headline's
    #: ``<headline>_near_tie_low`` / ``_near_tie_high`` (:mod:`lm_eval_stereo.core.near_ties`)
    COMPARES_LOGLIKELIHOODS: ClassVar[bool] = False

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        if self.EXTRA is not None:
            self.EXTRA.require(str(config.get("task")), _named_language(config.get("dataset_kwargs")) or self.LANGUAGE)
        # zero-shot, as in the papers: lm_eval ignores --num_fewshot for a task whose config says 0 (logged, n-shot 0)
        # instead of drawing examples from the test set
        config["num_fewshot"] = 0
        metadata = config.get("metadata") or {}
        self.options = task_options.parse(str(config.get("task")), self.OPTIONS, metadata, model_arguments.given())
        check_local_tokenizer(metadata)
        super().__init__(config=config, **kwargs)
        # the options in force, the benchmark, its metric set and the data pins are part of the task's config in the
        # results (what was measured, how): the report finds the declaration from there, whatever the task's name
        metric_set = self.metric_set()
        recorded = {**declaration(metric_set), **self.recorded(metric_set)}
        self.config.metadata = {**(self.config.metadata or {}), **self.options, **recorded}
        near_ties = self.counts_near_ties()
        self._shared = SharedSummary(metric_set, self.KEY_FIELD, near_ties)
        register_table(str(self.config.task), self._shared.metric_set, (NEAR_TIES,) if near_ties else ())

    def counts_near_ties(self) -> bool:
        """Whether the task's items are judgements that compare a causal LM's log-likelihoods, which mark their near
        ties (:mod:`lm_eval_stereo.core.near_ties`): :attr:`COMPARES_LOGLIKELIHOODS`."""
        return self.COMPARES_LOGLIKELIHOODS

    def metric_set(self) -> MetricSet:
        """The metrics of this task."""
        if self.METRICS is None:
            raise NotImplementedError(f"{type(self).__name__} declares no METRICS")
        return self.METRICS

    def language(self) -> str | None:
        """The language the task measures: its YAML's ``dataset_kwargs`` ``language`` (or ``lang``), else
        :attr:`LANGUAGE`, else its benchmark's one language (``de`` for the German suite); None where none is known."""
        named = _named_language(self.config.dataset_kwargs)
        if named is not None:
            return named
        if self.LANGUAGE is not None:
            return self.LANGUAGE
        bench = registry.benchmark_of_metric_set(self.metric_set().id)
        return bench.languages[0] if bench is not None and len(bench.languages) == 1 else None

    def facts(self) -> dict[str, Any]:
        """Benchmark-specific facts the task's metric set is built from (none by default)."""
        return {}

    def recorded(self, metric_set: MetricSet) -> dict[str, Any]:
        """What readers of the results need besides the declaration (:data:`RECORDED`): ``key_field``, ``scoring``,
        ``language`` (when known) and ``facts`` (when the task has any). The registry's factory of ``metric_set`` must build from
        this metadata a declaration of metrics the task computes (checked here, so a task never records what its
        readers cannot use; a family's extra counts, e.g. the causal leakage tasks' boundary mismatches, may be left
        out of the registry's declaration)."""
        recorded: dict[str, Any] = {"key_field": self.KEY_FIELD, "scoring": type(self).__name__}
        language = self.language()
        if language is not None:
            recorded["language"] = language
        facts = self.facts()
        if facts:
            recorded["facts"] = facts
        rebuilt = registry.metric_set(metric_set.id, str(self.config.task), recorded)
        if rebuilt is None or not set(rebuilt.names) <= set(metric_set.names):
            raise RuntimeError(
                f"{type(self).__name__}: the metric set {metric_set.id!r} built from the recorded metadata differs "
                "from the task's (record the facts its factory reads, SummaryTask.facts)"
            )
        return recorded

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """The per-document item (with a unique :attr:`KEY_FIELD`) from the document and its responses."""
        raise NotImplementedError

    def fewshot_docs(self) -> None:
        """None: a zero-shot task has no few-shot pool (lm_eval would otherwise materialise every test document at
        start-up to build one)."""
        return None

    def download(self, dataset_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """``custom_dataset(**metadata, **parsed options, **dataset_kwargs)`` (lm_eval's own download, without its
        generic warning about ``--metadata``, which the plugin's option parser replaces)."""
        metadata = {**(self.config.metadata or {}), **self.options}
        metadata = {key: value for key, value in metadata.items() if key not in RECORDED}
        self.dataset = self.config.custom_dataset(**metadata, **(dataset_kwargs or {}))

    def build_all_requests(self, *args: Any, **kwargs: Any) -> None:
        """lm_eval's, once every task of the run is built: first the options given that no task of the run reads
        (:func:`lm_eval_stereo.core.options.warn_unread`)."""
        task_options.warn_unread()
        super().build_all_requests(*args, **kwargs)

    def process_results(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """The item's values (:meth:`SharedSummary.per_doc_values`), and ``truncated``: 1 where the backend marked an
        answer as that of a request that did not fit its window (:mod:`lm_eval_stereo.core.truncation`), else 0."""
        values = self._shared.per_doc_values(self.item(doc, results))
        values[truncation.TRUNCATED] = int(truncation.any_truncated(results))
        return values

    def aggregation(self) -> dict[str, Callable[[list[Any]], Any]]:
        """Every metric's aggregation, and ``truncated``: the count of documents with a request that did not fit the
        model's window."""
        return {**self._shared.aggregations, truncation.TRUNCATED: sum}

    def higher_is_better(self) -> dict[str, bool | None]:
        """The metric set's flags; the near-tie fields carry the direction of their headline (the count none)."""
        flags = self._shared.metric_set.higher_is_better()
        if self._shared.near_ties:
            flags[NEAR_TIES] = None
            for headline in self._shared.metric_set.headlines:
                flags.update(dict.fromkeys(tie_range_names(headline), flags.get(headline)))
        return flags
