"""The export's model identity, datastore layout and complete omissions, on committed results of real runs
(docs/real_models/results: SmolLM2-135M-Instruct on a folder of ``lm-eval-stereo real-model``), and the first
leaderboard entry (docs/leaderboard) against the datastore's rules (tests/eee_rules.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from eee_rules import datastore_problems, upstream_validate, upstream_validator
from lm_eval_runner import REPO
from suite_tools import skip_reason

from lm_eval_stereo.export.command import main as export
from lm_eval_stereo.local_models.real import MARKER, SMOLLM2

RUNS = REPO / "docs" / "real_models" / "results" / "real-runs" / "smollm2" / "hf-prefix"
#: a leakage regression run (no headline with a bootstrap interval) and a GEST run
FILES = ("results_2026-11-23T23-20-37.474692.json", "results_2026-11-23T23-41-14.160128.json")
HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
ENTRY = REPO / "docs" / "leaderboard"


@pytest.fixture
def results(tmp_path: Path) -> tuple[Path, Path]:
    """Copies of the two runs, whose ``pretrained=`` names a model folder here with the real-model marker."""
    model = tmp_path / "real-models" / "smollm2"
    model.mkdir(parents=True)
    marker = {"name": SMOLLM2.name, "title": SMOLLM2.title, "licence": SMOLLM2.licence, "gguf_sha256": SMOLLM2.sha256}
    (model / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    folder = tmp_path / "results"
    folder.mkdir()
    for name in FILES:
        data = json.loads((RUNS / name).read_text(encoding="utf-8"))
        data["config"]["model_args"] = {**data["config"]["model_args"], "pretrained": str(model)}
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return folder, model


def test_every_task_is_in_a_record_or_counted_and_the_weights_are_named(results, tmp_path: Path, capsys) -> None:
    folder, model = results
    output = tmp_path / "out"
    args = [str(folder), "--format", "eee", "--output", str(output), "--model-id", HUB_ID]
    assert export([*args, "--availability", "open_weights", "--details"]) == 0
    err = capsys.readouterr().err
    assert (
        "  nothing to publish: stereotype_leakage_en: no result: stereotype_leakage.regression declares no headline "
        "with a bootstrap interval (nothing to rank)"
    ) in err
    assert f"  nothing to publish: {FILES[0]}: no record: nothing of the run to publish (its tasks are counted)" in err
    grouped = f"  nothing to publish: 2 task(s) or run(s) with nothing to publish: stereotype_leakage_en, {FILES[0]}"
    assert grouped in err
    (record_path,) = output.rglob("*.json")  # the leakage run has nothing to publish: no empty record
    assert (
        record_path.parent.relative_to(output).as_posix() == "data/lm-eval-stereo/HuggingFaceTB/SmolLM2-135M-Instruct"
    )
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert record["model_info"]["id"] == HUB_ID and record["model_info"]["developer"] == "HuggingFaceTB"
    assert record["model_info"]["additional_details"] == {
        "deployment_type": "self_deployed",
        "model_availability": "open_weights",
        "lm_eval_backend": "hf-prefix",
        "dtype": "float32",
        "local_path": str(model),
        "weights_sha256": SMOLLM2.sha256,
        "weights_file": SMOLLM2.gguf_name,
        "quantisation": "Q4_1 (GGUF), dequantised to float32",
    }
    gs = {r["evaluation_result_id"]: r for r in record["evaluation_results"]}["gest_en/gs"]["metric_config"]
    assert gs["metric_parameters"]["polarity"] == "not_applicable" and gs["metric_parameters"]["ideal"] == 1.0
    assert datastore_problems(output) == []
    # the model-card table names the model by the same id
    assert export([str(folder), "--format", "model-card", "--model-id", HUB_ID]) == 0
    assert capsys.readouterr().out.startswith(f"**{HUB_ID}**: lm-eval-stereo bias benchmarks")


def test_several_local_models_need_an_id_each(results, tmp_path: Path, capsys) -> None:
    folder, model = results
    data = json.loads((folder / FILES[1]).read_text(encoding="utf-8"))
    data["config"]["model_args"]["pretrained"] = str(tmp_path / "another")
    (folder / "results_2026-11-24T00-00-00.000000.json").write_text(json.dumps(data), encoding="utf-8")
    args = [str(folder), "--format", "eee", "--output", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as stopped:
        export([*args, "--model-id", HUB_ID])
    assert stopped.value.code == 2 and "would name 2 models" in capsys.readouterr().err
    assert export([*args, "--model-id", HUB_ID, "--model-id", f"{tmp_path / 'another'}=org/another"]) == 0
    capsys.readouterr()
    folders = {path.parent.relative_to(tmp_path / "out").as_posix() for path in (tmp_path / "out").rglob("*.json")}
    assert folders == {f"data/lm-eval-stereo/{HUB_ID}", "data/lm-eval-stereo/org/another"}


def test_the_first_entry_keeps_the_datastores_rules() -> None:
    assert sorted(path.name for path in ENTRY.iterdir()) == ["README.md", "data"]
    assert datastore_problems(ENTRY) == []
    (record_path,) = ENTRY.rglob("*.json")
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert record["model_info"]["id"] == HUB_ID
    assert record["source_metadata"]["additional_details"]["limit"] == "--limit 25: not full data"
    if upstream_validator() is None:
        pytest.skip(skip_reason("the Every Eval Ever validator"))
    status, output = upstream_validate(ENTRY)
    assert status == 0, output


def _break(root: Path, how: str) -> None:
    (record_path,) = root.rglob("*.json")
    record = json.loads(record_path.read_text(encoding="utf-8"))
    if how == "developer unknown":
        record["model_info"] |= {"id": "SmolLM2-135M-Instruct", "developer": "unknown"}
    elif how == "score outside its bounds":
        record["evaluation_results"][0]["score_details"]["score"] = 101.0
    elif how == "no deployment_type":
        del record["model_info"]["additional_details"]["deployment_type"]
    elif how == "file_path elsewhere":
        record["detailed_evaluation_results"]["file_path"] = record_path.with_suffix(".jsonl").name
    elif how == "another model folder":
        shutil.move(record_path.parent, record_path.parent.with_name("smollm2"))
        return
    record_path.write_text(json.dumps(record), encoding="utf-8")


@pytest.mark.parametrize(
    ("how", "found"),
    [
        ("developer unknown", "is not ORG/NAME"),
        ("score outside its bounds", "score 101.0 outside [0.0, 100.0]"),
        ("no deployment_type", "deployment_type None"),
        ("file_path elsewhere", "file_path '916a5930"),
        ("another model folder", "are not the id's ['HuggingFaceTB', 'SmolLM2-135M-Instruct']"),
    ],
)
def test_the_rules_find_what_the_datastore_rejects(tmp_path: Path, how: str, found: str) -> None:
    shutil.copytree(ENTRY / "data", tmp_path / "data")
    _break(tmp_path, how)
    problems = datastore_problems(tmp_path)
    assert any(found in problem for problem in problems), problems
