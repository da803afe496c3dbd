"""Where each number comes from, said where it is shown: a plugin task (its metric set and seeded bootstrap, in the
run), one of lm_eval's own tasks that a benchmark declares (lm_eval's aggregation; the plugin's interval recomputed
from the logged samples) and a task no benchmark declares (lm_eval's aggregation and stderr), through ``lm_eval``
into the report's table, ``--json`` and the export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval
from local_tasks import GENERIC_DOCS, write_mc_task

from lm_eval_stereo.export.command import main as export
from lm_eval_stereo.report import build_report, render_markdown, report_json
from lm_eval_stereo.tasks.lm_eval_bias.offline_tasks import write_offline_tasks

CROWS = "crows_pairs_english"
STEREOSET = "stereoset_multi_en"
CAPABILITY = "capability_mc"


@pytest.fixture(scope="module")
def run(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    tasks = tmp_path_factory.mktemp("tasks")
    write_offline_tasks(tasks)
    write_mc_task(tasks, CAPABILITY, GENERIC_DOCS)
    return run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--tasks",
         f"{CROWS},{STEREOSET},{CAPABILITY}", "--include_path", str(tasks), "--limit", "6", "--log_samples"],
        tmp_path_factory.mktemp("out"),
    )  # fmt: skip


def test_json_names_who_computed_each_value_and_its_interval(run: LmEvalRun) -> None:
    data = report_json(build_report([run.output_dir]))
    version = run.results["lm_eval_version"]
    (crows,) = data["tasks"][CROWS].values()
    for name, metric in crows["metrics"].items():
        found = metric["provenance"]
        lm_evals = f"{name},none" in run.results["results"][CROWS]
        assert found["value"] == ("lm_eval" if lm_evals else "plugin_recomputed"), name
        assert found["lm_eval_version"] == version and found["metric_set"]
    pct = crows["metrics"]["pct_stereotype"]
    assert pct["ci_low"] is not None and pct["provenance"]["interval"] == "plugin_recomputed_bootstrap"
    assert pct["provenance"]["text"].startswith(f"value: lm_eval's own aggregation (lm_eval {version}); 95% CI: ")
    assert "recomputed from the logged samples" in pct["provenance"]["text"]
    (stereoset,) = data["tasks"][STEREOSET].values()
    ss = stereoset["metrics"]["ss"]["provenance"]
    assert (ss["value"], ss["interval"], ss["metric_set"]) == ("plugin", "plugin_bootstrap", "stereoset_multi.scores")
    (capability,) = data["tasks"][CAPABILITY].values()
    acc = capability["metrics"]["acc"]["provenance"]
    assert (acc["value"], acc["interval"], acc["metric_set"]) == ("lm_eval", "lm_eval_stderr", None)


def test_the_report_table_names_it_per_model_and_task(run: LmEvalRun) -> None:
    markdown = render_markdown(build_report([run.output_dir]), details=True)
    provenance = markdown.split("## Provenance")[1]
    header = next(line for line in provenance.splitlines() if line.startswith("| model |") and "computed by" in line)
    column = header.split(" | ").index("computed by")
    rows = {line.split(" | ")[1]: line.split(" | ")[column] for line in provenance.splitlines() if CROWS in line}
    assert "value: lm_eval's own aggregation" in rows[CROWS]
    assert "95% CI: lm-eval-stereo's seeded percentile bootstrap, recomputed from the logged samples" in rows[CROWS]


def test_the_export_records_and_model_card_name_it(run: LmEvalRun, tmp_path: Path, capsys) -> None:
    out = tmp_path / "records"
    assert export([str(run.output_dir), "--format", "eee", "--output", str(out), "--model-id", "org/tiny"]) == 0
    (path,) = [path for path in out.rglob("*.json")]
    results = {r["evaluation_result_id"]: r for r in json.loads(path.read_text())["evaluation_results"]}
    details = results[f"{CROWS}/pct_stereotype"]["score_details"]["details"]
    assert (details["value_computed_by"], details["interval_computed_by"]) == ("lm_eval", "plugin_recomputed_bootstrap")
    ss = results[f"{STEREOSET}/ss_distance"]["score_details"]["details"]
    assert (ss["value_computed_by"], ss["interval_computed_by"]) == ("export_distance", "export_distance_bootstrap")
    assert results[f"{CAPABILITY}/acc"]["score_details"]["details"]["interval_computed_by"] == "lm_eval_stderr"
    capsys.readouterr()
    assert export([str(run.output_dir), "--format", "model-card"]) == 0
    card = capsys.readouterr().out
    line = next(line for line in card.splitlines() if f"| {CROWS} | pct_stereotype |" in line)
    assert line.endswith("| lm_eval; CI: lm-eval-stereo bootstrap from samples |")
