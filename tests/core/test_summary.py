"""core/summary.py's shared summary: every metric's aggregation, computed from the items once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from lm_eval_stereo.core.metrics import MetricSet, Resampling, count, ideal
from lm_eval_stereo.core.summary import SharedSummary


def _columns(items: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    return {"hit": np.array([float(item["hit"]) for item in items])}


def _share(columns: Mapping[str, np.ndarray]) -> dict[str, float]:
    return {"share": float(np.mean(columns["hit"]))}


def _summarize(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {**_share(_columns(items)), "count": float(len(items))}


METRICS = MetricSet(
    "toy",
    (ideal("share", 0.5, "share of hits", ci=True), count("count", "items")),
    _summarize,
    (Resampling(_share, _columns),),
)

ITEMS = [{"key": f"k{i}", "hit": i % 4 != 0} for i in range(12)]  # 9 hits of 12


def test_every_metric_is_aggregated_from_one_summary_and_only_interval_metrics_carry_a_bootstrap_stderr() -> None:
    shared = SharedSummary(METRICS)
    assert set(shared.aggregations) == set(METRICS.names)
    first = shared.aggregations[shared.first]
    values = [shared.per_doc_values(item) for item in ITEMS]
    assert first([value[shared.first] for value in values]) == 0.75
    keys = [value["count"] for value in values]
    assert shared.aggregations["count"](keys) == 12.0
    low, high = shared.aggregations["share_ci_low"](keys), shared.aggregations["share_ci_high"](keys)
    assert 0.4 < low < 0.75 < high <= 1.0
    with_stderr = {name for name, function in shared.aggregations.items() if hasattr(function, "bootstrap_stderr")}
    assert with_stderr == {"share"}
    assert shared.aggregations["share"].bootstrap_stderr(keys) > 0
