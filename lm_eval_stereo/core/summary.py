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

from lm_eval_stereo.core import options as task_options
from lm_eval_stereo.core import registry
from lm_eval_stereo.core.metrics import MetricSet, register_table

MAX_CACHED = 32


class SharedSummary:
    """Per-document values and aggregations for the metrics of ``metric_set``, all computed at once."""

    def __init__(self, metric_set: MetricSet, key_field: str = "key") -> None:
        self.metric_set = metric_set
        self.metrics = metric_set.names
        self.key_field = key_field
        self._summaries: OrderedDict[tuple[str, ...], Mapping[str, Any]] = OrderedDict()

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
            self._summaries[key] = {**self.metric_set.compute(items), "_items": values}
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

    def aggregation(self, name: str) -> Callable[[list[Any]], Any]:
        """The aggregation function of metric ``name``."""

        def aggregate(values: list[Any]) -> Any:
            return self.summary(values)[name]

        aggregate.__name__ = aggregate.__qualname__ = f"agg_{name}"
        aggregate.__doc__ = f"Aggregation of ``{name}`` ({self.metric_set.label})."
        if name in {m.name for m in self.metric_set.metrics if m.ci}:

            def bootstrap_stderr(values: list[Any]) -> float:
                return self.summary(values)[f"{name}_stderr_boot"]

            aggregate.bootstrap_stderr = bootstrap_stderr  # type: ignore[attr-defined]
        return aggregate


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


class SummaryTask(ConfigurableTask):
    """A YAML task (minus ``class``) whose metrics are the :class:`MetricSet` of :meth:`metric_set`.

    Subclasses set :attr:`METRICS` (or override :meth:`metric_set`), :attr:`OPTIONS` and implement :meth:`item`.
    The YAML's ``custom_dataset`` receives the model arguments, the parsed options and ``dataset_kwargs``.
    """

    METRICS: ClassVar[MetricSet | None] = None
    OPTIONS: ClassVar[Sequence[registry.Option]] = ()
    KEY_FIELD: ClassVar[str] = "key"

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        # zero-shot, as in the papers: lm_eval ignores --num_fewshot for a task whose config says 0 (logged, n-shot 0)
        # instead of drawing examples from the test set
        config["num_fewshot"] = 0
        self.options = task_options.parse(str(config.get("task")), self.OPTIONS, config.get("metadata") or {})
        super().__init__(config=config, **kwargs)
        # the options in force, the benchmark, its metric set and the data pins are part of the task's config in the
        # results (what was measured, how): the report finds the declaration from there, whatever the task's name
        metric_set = self.metric_set()
        self.config.metadata = {**(self.config.metadata or {}), **self.options, **declaration(metric_set)}
        self._shared = SharedSummary(metric_set, self.KEY_FIELD)
        register_table(str(self.config.task), self._shared.metric_set)

    def metric_set(self) -> MetricSet:
        """The metrics of this task."""
        if self.METRICS is None:
            raise NotImplementedError(f"{type(self).__name__} declares no METRICS")
        return self.METRICS

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
        self.dataset = self.config.custom_dataset(**metadata, **(dataset_kwargs or {}))

    def process_results(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        return self._shared.per_doc_values(self.item(doc, results))

    def aggregation(self) -> dict[str, Callable[[list[Any]], Any]]:
        return {name: self._shared.aggregation(name) for name in self._shared.metrics}

    def higher_is_better(self) -> dict[str, bool | None]:
        return self._shared.metric_set.higher_is_better()
