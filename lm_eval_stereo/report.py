"""A compact table of the headline results of an ``lm_eval`` run: each metric with its 95% CI and the counts.

lm_eval's own table lists every metric of every task (GEST alone has ~150); this report keeps, per task and group,
the metrics that carry a bootstrap CI (``<m>_ci_low``/``<m>_ci_high``) and the bookkeeping figures that say what was
measured (items scored, ties, undetermined or unclassified outputs, the normalisation used).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

BOOKKEEPING = (
    "count",
    "ties",
    "undetermined",
    "empty",
    "unscored",
    "unclassified_share",
    "detection_yield",
    "n_generations",
    "n_classified",
    "normalization",
    "gender_classifier",
    "pairs",
    "identical_pairs",
    "overlength_pairs",
    "no_shared_pairs",
    "nan_pairs",
    "roundtrip_mismatches",
    "unscorable_tokens",
)


def load_results(path: str | Path) -> dict[str, Any]:
    """The results JSON at ``path``, or the newest ``results_*.json`` below a directory."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.rglob("results_*.json"), key=lambda p: p.stat().st_mtime)
        if not files:
            raise FileNotFoundError(f"no results_*.json below {path}")
        path = files[-1]
    return json.loads(path.read_text())


def _format(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _metric_values(metrics: dict[str, Any]) -> dict[str, Any]:
    """``{name: value}`` of one task's ``"name,filter"`` entries, stderr entries left out."""
    values = {}
    for key, value in metrics.items():
        name, _, filter_key = key.partition(",")
        if filter_key and not name.endswith("_stderr"):
            values[name] = value
    return values


def headline_rows(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(task, metric, value, 95% CI) rows for the headline and bookkeeping metrics of every task and group.

    A headline metric is one that carries a bootstrap CI in some task; groups (means over their tasks) show it
    without an interval, since a mean of interval bounds is not an interval.
    """
    per_task = {task: _metric_values(metrics) for task, metrics in sorted(results.get("results", {}).items())}
    headlines = {name[: -len("_ci_low")] for values in per_task.values() for name in values if name.endswith("_ci_low")}
    rows = []
    for task, values in per_task.items():
        for name, value in values.items():
            if name.endswith(("_ci_low", "_ci_high")) or (name not in headlines and name not in BOOKKEEPING):
                continue
            low, high = values.get(f"{name}_ci_low"), values.get(f"{name}_ci_high")
            interval = f"[{_format(low)}, {_format(high)}]" if low is not None and high is not None else ""
            rows.append((task, name, _format(value), interval))
    return rows


def render(results: dict[str, Any]) -> str:
    """Markdown table of :func:`headline_rows`, with the model that was evaluated."""
    config = results.get("config", {})
    lines = [
        f"model: {config.get('model', '?')} {config.get('model_args', '')}".rstrip(),
        "",
        "| task | metric | value | 95% CI |",
        "|---|---|---:|---|",
    ]
    lines += [f"| {task} | {name} | {value} | {ci} |" for task, name, value, ci in headline_rows(results)]
    return "\n".join(lines)
