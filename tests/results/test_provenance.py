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


@pytest.fixture(scope="module")
def merged_row(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LmEvalRun, LmEvalRun]:
    """One model scored by ``hf-prefix`` on StereoSet and by ``hf`` on GEST: backends that give the same numbers, so the
    report puts both runs on one row."""
    out = tmp_path_factory.mktemp("merged_row")
    model_args = f"pretrained={tiny_causal},dtype=float32"
    prefix, plain = (
        run_lm_eval(
            ["--model", backend, "--model_args", model_args, "--tasks", task, "--limit", "4", "--log_samples"],
            out / backend,
        )  # fmt: skip
        for backend, task in (("hf-prefix", STEREOSET), ("hf", "gest_en"))
    )
    assert prefix.returncode == 0 and plain.returncode == 0, (prefix.stderr[-2000:], plain.stderr[-2000:])
    return out, prefix, plain


def test_provenance_names_the_backend_that_scored_each_number_on_a_merged_row(merged_row) -> None:
    out, prefix, plain = merged_row
    assert (prefix.results["config"]["model"], plain.results["config"]["model"]) == ("hf-prefix", "hf")
    report = build_report([out])
    assert len(report.rows) == 1, "hf-prefix gives hf's numbers: one row"
    markdown = render_markdown(report, details=True)
    provenance = markdown.split("## Provenance")[1]
    lines = [[cell.strip() for cell in line.split("|")] for line in provenance.splitlines() if line.startswith("|")]
    header = next(cells for cells in lines if "model and arguments" in cells)
    rows = {cells[header.index("task")]: cells for cells in lines if len(cells) == len(header) and cells[2] != "task"}
    arguments = f"dtype=float32,pretrained={prefix.results['config']['model_args']['pretrained']}"
    assert rows[STEREOSET][header.index("model and arguments")] == f"hf-prefix {arguments}"
    assert rows["gest_en"][header.index("model and arguments")] == f"hf {arguments}"
    assert rows[STEREOSET][header.index("computed by")].endswith("; scored by hf-prefix")
    assert rows["gest_en"][header.index("computed by")].endswith("; scored by hf")
    data = report_json(report)
    ((stereoset,), (gest,)) = (data["tasks"][task].values() for task in (STEREOSET, "gest_en"))
    assert stereoset["metrics"]["ss"]["provenance"]["backend"] == "hf-prefix"
    assert gest["metrics"]["gs"]["provenance"]["backend"] == "hf"


def test_the_export_names_the_backend_of_each_record(merged_row, tmp_path: Path) -> None:
    out, _, _ = merged_row
    records = tmp_path / "records"
    assert export([str(out), "--format", "eee", "--output", str(records), "--model-id", "org/tiny"]) == 0
    scored = {}
    for path in records.rglob("*.json"):
        for result in json.loads(path.read_text())["evaluation_results"]:
            details = result["score_details"]["details"]
            scored[result["evaluation_result_id"]] = details["scored_by"]
            assert details["computed_by"].endswith(f"; scored by {details['scored_by']}")
    assert scored[f"{STEREOSET}/ss"] == "hf-prefix" and scored["gest_en/gs"] == "hf"


def test_provenance_names_vllm_prefix_and_a_served_endpoint(tmp_path: Path) -> None:
    """Backends the quick tier cannot start, from results files as lm_eval writes them: ``vllm-prefix`` by its name,
    a served model by its backend and the endpoint it answered from."""
    from test_report import with_ci, write_results

    metrics = {**with_ci(60.0, 5, "lms"), **with_ci(52.0, 5, "ss"), "count": 100, "ties": 0}
    write_results(tmp_path / "engine", "org/model", {STEREOSET: metrics}, backend="vllm-prefix")
    served = write_results(tmp_path / "served", "org/served", {STEREOSET: metrics}, backend="local-completions")
    data = json.loads(served.read_text())
    endpoint = "http://127.0.0.1:8000/v1/completions"
    data["config"]["model_args"] = f"model=org/served,base_url={endpoint}"
    served.write_text(json.dumps(data))
    found = {
        model: cell["metrics"]["ss"]["provenance"]
        for model, cell in report_json(build_report([tmp_path]))["tasks"][STEREOSET].items()
    }
    backends = sorted(provenance["backend"] for provenance in found.values())
    assert backends == [f"local-completions at {endpoint}", "vllm-prefix"]
    assert all(provenance["text"].endswith(f"; scored by {provenance['backend']}") for provenance in found.values())
