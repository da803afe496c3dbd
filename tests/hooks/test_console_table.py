"""lm_eval's console table stays compact for the plugin's tasks: headlines with their bootstrap stderr and the counts
that qualify them, at most 8 metrics a task; the results file keeps every value; lm_eval's own tasks are unchanged."""

from __future__ import annotations

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval
from local_tasks import write_mc_task
from test_hf_prefix import GENERIC_DOCS

from lm_eval_stereo.core.metrics import TABLE_ROWS, register_table, table_metrics
from lm_eval_stereo.hooks.console import compact
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET


def printed_metrics(stdout: str) -> dict[str, list[str]]:
    """Per task of lm_eval's task table, the metric names it printed (rows of a task follow its named row)."""
    rows: dict[str, list[str]] = {}
    task = ""
    for line in stdout.split("\n\n")[0].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 5 or cells[0] in ("Tasks",) or set(cells[0]) <= {"-"} and cells[0]:
            continue
        task = cells[0].lstrip("- ").strip() or task
        rows.setdefault(task, []).append(cells[4])
    return rows


@pytest.fixture(scope="module")
def run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    folder = tmp_path_factory.mktemp("local_task")
    write_mc_task(folder, "local_mc", GENERIC_DOCS, metrics=("acc", "acc_norm"))
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu"]
    args += ["--tasks", "stereoset_multi_en,gest_en,s_jsd_en,local_mc", "--limit", "3", "--include_path", str(folder)]
    result = run_lm_eval(args, tmp_path_factory.mktemp("console_table"))
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_plugin_tasks_print_their_headlines_and_qualifying_counts(run):
    rows = printed_metrics(run.stdout)
    # near_ties: a count the comparison tasks add outside their metric sets (lm_eval_stereo.core.near_ties)
    assert sorted(rows["stereoset_multi_en"]) == sorted(STEREOSET.table_with(["near_ties"]))
    assert set(STEREOSET.table) == {"lms", "ss", "icat", "count", "unscored", "ties", "boundary_mismatches"}
    assert sorted(rows["gest_en"]) == ["count", "gs", "near_ties", "unscored"]
    assert sorted(rows["s_jsd_en"]) == [
        "b_s_jsd", "cps", "nan_pairs", "near_ties", "pairs", "roundtrip_mismatches", "s_jsd", "unscorable_tokens",
    ]  # fmt: skip
    assert all(len(names) <= TABLE_ROWS for names in rows.values())


def test_the_headline_rows_carry_the_bootstrap_stderr_and_the_results_file_keeps_everything(run):
    results = run.results["results"]["stereoset_multi_en"]
    cells = [[cell.strip() for cell in line.split("|")] for line in run.stdout.splitlines() if line.count("|") > 8]
    ss_row = next(row for row in cells if row[5] == "ss")
    assert ss_row[-2] == f"{results['ss_stderr,none']:.4f}" and results["ss_stderr,none"] > 0
    for hidden in ("ss_ci_low,none", "intra_ss,none", "ss_gender,none", "icat_macro,none"):
        assert hidden in results  # not printed, still in the results for the report
        assert not any(row[5] == hidden.split(",")[0] for row in cells)


def test_lm_evals_own_tasks_print_unchanged(run):
    assert sorted(printed_metrics(run.stdout)["local_mc"]) == ["acc", "acc_norm"]


def test_the_full_table_variable_keeps_every_metric(monkeypatch):
    register_table("stereoset_multi_en", STEREOSET)
    results = {"results": {"stereoset_multi_en": {"alias": "x", "ss,none": 50.0, "intra_ss,none": 1.0}}}
    assert compact(results, "results")["results"]["stereoset_multi_en"] == {"alias": "x", "ss,none": 50.0}
    monkeypatch.setenv("LM_EVAL_STEREO_TABLE", "full")
    assert compact(results, "results") == results


def test_only_built_tasks_decide_the_table():
    """A metric set built for another purpose under a task's name (as the report builds its candidates) does not
    change that task's table; a name no task of this process carries is left alone."""
    from lm_eval_stereo.tasks.gest.metrics import score_metric_set

    register_table("stereoset_multi_en", STEREOSET)
    score_metric_set("stereoset_multi_en", ["t0", "t1"])
    assert table_metrics("stereoset_multi_en") == STEREOSET.table
    assert table_metrics("stereoset_multi") == STEREOSET.table  # a group: the union over its member tasks
    assert table_metrics("hellaswag") is None
    results = {"results": {"hellaswag": {"alias": "h", "acc,none": 0.3, "acc_norm,none": 0.4}}}
    assert compact(results, "results") == results
