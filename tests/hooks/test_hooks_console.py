"""``hooks/console.py``: the console table compacts the plugin's rows and prints lm_eval's as lm_eval prints them, byte
for byte; a plugin aggregation answers for its own standard error, lm_eval answers for its own."""

from __future__ import annotations

import lm_eval.evaluator_utils as evaluator_utils
import lm_eval.utils as utils
import pytest
from lm_eval.api.metrics import mean

from lm_eval_stereo.core.metrics import register_table
from lm_eval_stereo.hooks.console import stderr_wrapper, table_wrapper
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET

LONG_TEXT = "x" * 500


def results(*tasks: str) -> dict:
    """A results dict of ``tasks``, each with a long text metric, a headline and a detail."""
    metrics = {"alias": "", "ss,none": 50.0, "ss_stderr,none": 1.0, "intra_ss,none": 1.0, "table,none": LONG_TEXT}
    return {"results": {task: {**metrics, "alias": task} for task in tasks}, "versions": dict.fromkeys(tasks, 1.0)}


def test_lm_eval_s_rows_are_printed_as_lm_eval_prints_them():
    stock = utils.make_table.__wrapped__
    ours = table_wrapper(stock)
    lm_evals = results("local_task", "hellaswag")
    assert ours(lm_evals) == stock(lm_evals) and LONG_TEXT in stock(lm_evals)
    assert ours(lm_evals, "results", True) == stock(lm_evals, "results", True)
    with pytest.raises(KeyError):  # no groups: lm_eval's own error
        ours(lm_evals, column="groups")


def printed(table: str) -> dict[str, list[str]]:
    """Per task, the metrics its rows print."""
    rows: dict[str, list[str]] = {}
    task = ""
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        task = cells[0] or task
        rows.setdefault(task, []).append(cells[4])
    return rows


def test_the_plugin_s_rows_show_their_headlines_and_a_note_for_a_long_text(monkeypatch):
    register_table("stereoset_multi_en", STEREOSET)
    ours = table_wrapper(utils.make_table.__wrapped__)
    shown = ours(results("stereoset_multi_en", "local_task"))
    assert printed(shown) == {"stereoset_multi_en": ["ss"], "local_task": ["intra_ss", "ss", "table"]}
    assert shown.count(LONG_TEXT) == 1  # lm_eval's task's text, whole
    monkeypatch.setenv("LM_EVAL_STEREO_TABLE", "full")  # every metric of the plugin's tasks: a long text as a note
    full = ours(results("stereoset_multi_en", "local_task"))
    assert printed(full)["stereoset_multi_en"] == ["intra_ss", "ss", "table"]
    assert full.count(LONG_TEXT) == 1 and "(500 characters: see the results file)" in full


def test_a_plugin_aggregation_answers_for_its_standard_error_and_lm_eval_for_its_own():
    stock = evaluator_utils.stderr_for_metric.__wrapped__
    ours = stderr_wrapper(stock)

    def aggregation(items):
        return 0.5

    aggregation.bootstrap_stderr = lambda items: 0.125
    assert ours(aggregation, 1000) is aggregation.bootstrap_stderr
    assert ours(metric=aggregation, bootstrap_iters=0) is None  # lm_eval's: no standard errors asked for
    assert ours(mean, 1000) is stock(mean, 1000) and ours(mean, bootstrap_iters=1000) is stock(mean, 1000)
