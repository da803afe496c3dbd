"""``lm_eval.utils`` (the console table) and ``lm_eval.evaluator_utils`` (its standard errors): what lm_eval 0.4.13
prints after a run.

- ``make_table`` prints every metric of every task. The plugin's tasks report dozens (per group, per language, their
  counts) and some are long texts (the stereotype-leakage ``association_table``: a JSON table of 960 cells), which make
  the table unreadable; the plugin's tasks show their headlines and qualifying counts (:func:`compact`), long texts a
  note of their length (:func:`short_texts`). The results file keeps everything.
- ``stderr_for_metric(aggregation)`` gives the ``<metric>_stderr`` field only for lm_eval's built-in aggregations
  ("N/A" otherwise), so a plugin metric's seeded bootstrap standard error would be lost; an aggregation with a
  ``bootstrap_stderr`` attribute (:meth:`lm_eval_stereo.core.summary.SharedSummary.aggregation`) answers for itself.
"""

from __future__ import annotations

import functools
import os
from types import ModuleType
from typing import Any


def install_stderr(module: ModuleType) -> None:
    """Let an aggregation carry its own standard error: lm_eval asks ``stderr_for_metric(aggregation)`` for the
    ``<metric>_stderr`` field and knows only its built-in aggregations ("N/A" otherwise). A plugin aggregation with a
    ``bootstrap_stderr`` attribute (:meth:`lm_eval_stereo.core.summary.SharedSummary.aggregation`: the seeded
    bootstrap standard error of a metric with a CI) answers for itself."""
    original = module.stderr_for_metric
    if getattr(original, "_lm_eval_stereo", False):
        return

    @functools.wraps(original)
    def stderr_for_metric(metric: Any, bootstrap_iters: int) -> Any:
        own = getattr(metric, "bootstrap_stderr", None)
        if own is not None and bootstrap_iters > 0:
            return own
        return original(metric=metric, bootstrap_iters=bootstrap_iters)

    stderr_for_metric._lm_eval_stereo = True  # type: ignore[attr-defined]
    module.stderr_for_metric = stderr_for_metric


#: a text metric longer than this is shortened in lm_eval's console table; the results file keeps it whole
TABLE_TEXT_LIMIT = 60


def short_texts(result_dict: dict, column: str) -> dict:
    """``result_dict`` with every text metric of ``column`` longer than :data:`TABLE_TEXT_LIMIT` replaced by a note
    of its length (a copy; e.g. the stereotype-leakage ``association_table``, a JSON table of 960 cells)."""
    shortened = {
        task: {
            key: f"({len(value):,} characters: see the results file)"
            if "," in key and isinstance(value, str) and len(value) > TABLE_TEXT_LIMIT
            else value
            for key, value in metrics.items()
        }
        for task, metrics in result_dict.get(column, {}).items()
    }
    return {**result_dict, column: shortened}


#: ``LM_EVAL_STEREO_TABLE=full`` prints every metric of the plugin's tasks in lm_eval's console table
FULL_TABLE_VARIABLE = "LM_EVAL_STEREO_TABLE"


def compact(result_dict: dict, column: str) -> dict:
    """``result_dict`` with the plugin's tasks and groups of ``column`` reduced to their console-table metrics
    (:func:`lm_eval_stereo.core.metrics.table_metrics`: headlines with their stderr, qualifying counts); lm_eval's own
    tasks, and everything under ``LM_EVAL_STEREO_TABLE=full``, unchanged (a copy; the results file keeps all)."""
    if os.environ.get(FULL_TABLE_VARIABLE, "").strip().lower() == "full":
        return result_dict
    from lm_eval_stereo.core.metrics import table_metrics

    reduced = {}
    for task, metrics in result_dict.get(column, {}).items():
        names = table_metrics(task)
        if names is not None:
            keep = {*names, *(f"{name}_stderr" for name in names)}
            metrics = {key: value for key, value in metrics.items() if "," not in key or key.split(",")[0] in keep}
        reduced[task] = metrics
    return {**result_dict, column: reduced}


def install_table(module: ModuleType) -> None:
    """Keep lm_eval's console table readable: the plugin's tasks show their headlines and qualifying counts
    (:func:`compact`), long text metrics are shortened (:func:`short_texts`)."""
    original = module.make_table
    if getattr(original, "_lm_eval_stereo", False):
        return

    @functools.wraps(original)
    def make_table(result_dict: dict, column: str = "results", sort_results: bool = False) -> str:
        shown = short_texts(compact(result_dict, column), column)
        return original(shown, column=column, sort_results=sort_results)

    make_table._lm_eval_stereo = True  # type: ignore[attr-defined]
    module.make_table = make_table
