"""All metrics of a task computed once from its per-document items.

lm_eval aggregates every metric separately, each from the list of the values ``process_results`` returned for it. A
corpus-level benchmark computes all its metrics from the same items, so a task built on :class:`SharedSummary` returns
the full item under its FIRST metric and only the item's key under the others (so ``--log_samples`` holds each item
once). The first metric's aggregation computes the summary of all metrics (items sorted by key, so bootstrap
resamples do not depend on request order or data-parallel ranks); the other aggregations look it up by their keys.
lm_eval runs the aggregations of a task in the order of the first document's metrics, so the first one runs first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

MAX_CACHED = 32


class SharedSummary:
    """Per-document values and aggregations for ``metrics``, all computed by ``summarize(items)``."""

    def __init__(
        self,
        label: str,
        metrics: Sequence[str],
        summarize: Callable[[list[dict[str, Any]]], Mapping[str, Any]],
        key_field: str = "key",
    ) -> None:
        self.label = label
        self.metrics = tuple(metrics)
        self.summarize = summarize
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
            self._summaries[key] = self.summarize(items)
            while len(self._summaries) > MAX_CACHED:
                self._summaries.popitem(last=False)
            return self._summaries[key]
        key = tuple(sorted(str(value) for value in values))
        if key not in self._summaries:
            raise RuntimeError(
                f"{self.label}: metrics of these {len(values)} documents were not computed; the aggregation of "
                f"{self.first!r}, which receives the per-document items, must run first"
            )
        return self._summaries[key]

    def aggregation(self, name: str) -> Callable[[list[Any]], Any]:
        """The aggregation function of metric ``name``."""

        def aggregate(values: list[Any]) -> Any:
            return self.summary(values)[name]

        aggregate.__name__ = aggregate.__qualname__ = f"agg_{name}"
        aggregate.__doc__ = f"Aggregation of ``{name}`` ({self.label})."
        return aggregate

    def aggregations(self, prefix: str = "agg_") -> dict[str, Callable[[list[Any]], Any]]:
        """``{prefix + name: aggregation}`` for every metric, to export at module level for the task YAMLs."""
        return {f"{prefix}{name}": self.aggregation(name) for name in self.metrics}
