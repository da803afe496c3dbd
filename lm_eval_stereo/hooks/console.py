"""``lm_eval.utils`` (the console table) and ``lm_eval.evaluator_utils`` (its standard errors): what lm_eval 0.4.13
prints after a run, with no extension point for a task's rows or a metric's standard error.

- ``make_table`` prints every metric of every task. The plugin's tasks report dozens (per group, per language, their
  counts) and some are long texts (the stereotype-leakage ``association_table``: a JSON table of 960 cells), which make
  the table unreadable; the plugin's tasks show their headlines and qualifying counts (:func:`compact`), their long
  texts a note of their length (:func:`short_texts`). lm_eval's own tasks' rows are printed as lm_eval prints them;
  the results file keeps everything.
- ``stderr_for_metric(aggregation)`` gives the ``<metric>_stderr`` field only for lm_eval's built-in aggregations
  ("N/A" otherwise), so a plugin metric's seeded bootstrap standard error would be lost; an aggregation with a
  ``bootstrap_stderr`` attribute (:meth:`lm_eval_stereo.core.summary.SharedSummary.aggregation`, the plugin's own)
  answers for itself; every other aggregation is lm_eval's.
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import Any


def stderr_wrapper(original: Any) -> Any:
    """``stderr_for_metric`` that lets a plugin aggregation with a ``bootstrap_stderr`` attribute (the seeded
    bootstrap standard error of a metric with a CI) answer for itself; lm_eval answers for every other one."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def stderr_for_metric(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        own = getattr(bound.arguments["metric"], "bootstrap_stderr", None)
        if own is not None and bound.arguments["bootstrap_iters"] > 0:
            return own
        return original(*bound.args, **bound.kwargs)

    return stderr_for_metric


#: a text metric longer than this is shortened in lm_eval's console table; the results file keeps it whole
TABLE_TEXT_LIMIT = 60


def short_texts(result_dict: dict, column: str) -> dict:
    """``result_dict`` with every text metric of the plugin's tasks and groups of ``column``
    (:func:`lm_eval_stereo.core.metrics.table_metrics`) longer than :data:`TABLE_TEXT_LIMIT` replaced by a note of its
    length (a copy; e.g. the stereotype-leakage ``association_table``, a JSON table of 960 cells); lm_eval's own tasks
    unchanged."""
    from lm_eval_stereo.core.metrics import table_metrics

    shortened = {
        task: {
            key: f"({len(value):,} characters: see the results file)"
            if "," in key and isinstance(value, str) and len(value) > TABLE_TEXT_LIMIT
            else value
            for key, value in metrics.items()
        }
        if table_metrics(task) is not None
        else metrics
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


def table_wrapper(original: Any) -> Any:
    """``make_table`` that keeps the plugin's rows readable: their headlines and qualifying counts (:func:`compact`),
    their long text metrics shortened (:func:`short_texts`); lm_eval's own rows as lm_eval prints them."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def make_table(*args: Any, **kwargs: Any) -> str:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        column, result_dict = bound.arguments["column"], bound.arguments["result_dict"]
        if isinstance(result_dict, dict) and column in result_dict:
            bound.arguments["result_dict"] = short_texts(compact(result_dict, column), column)
        return original(*bound.args, **bound.kwargs)

    return make_table
