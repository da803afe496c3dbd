"""``lm-eval-stereo export``: Every Eval Ever records and the model-card table of a real lm_eval run.

One tiny-model run (StereoSet English and GEST English, plugin tasks, next to a local lm_eval task) with
``--log_samples`` is exported; the records are validated against the upstream schemas (``jsonschema``, Draft-07) and
every number is compared with the results file (exact, or 1e-9 where a value is recomputed). Bad input is checked on
copies of that run.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from eee_rules import datastore_problems, upstream_validate, upstream_validator
from lm_eval_runner import LmEvalRun, run_command, run_lm_eval, shared_data_dir
from local_tasks import GENERIC_DOCS, write_mc_task
from suite_tools import skip_reason

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS, DEFAULT_SEED
from lm_eval_stereo.core.values import parse_model_args
from lm_eval_stereo.export.command import main as export
from lm_eval_stereo.tasks.gest.metrics import score_metric_set
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET

LIMIT = 8
TOLERANCE = 1e-9
#: the hub id the tests give the tiny model's folder (``--model-id``)
MODEL_ID = "test-org/tiny_causal0"
PLUGIN_TASKS = ("stereoset_multi_en", "gest_en", "gerbbq_mc_dis", "s_jsd_en")
HEADLINES = {
    "stereoset_multi_en": ("lms", "ss", "icat"),
    "gest_en": ("gs",),
    "gerbbq_mc_dis": ("accuracy", "bias"),
    "s_jsd_en": ("s_jsd", "b_s_jsd", "cps"),
}


def _schema(name: str) -> jsonschema.Draft7Validator:
    path = shared_data_dir() / "every-eval-ever" / "schemas" / name
    return jsonschema.Draft7Validator(json.loads(path.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def lm_eval_run(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    local = write_mc_task(tmp_path_factory.mktemp("local_tasks"), "capability_mc", GENERIC_DOCS)
    return run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu",
         "--tasks", ",".join((*PLUGIN_TASKS, "capability_mc")), "--include_path", str(local),
         "--limit", str(LIMIT), "--log_samples"],
        tmp_path_factory.mktemp("lm_eval_out"),
    )  # fmt: skip


@pytest.fixture(scope="module")
def eee_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("eee")


@pytest.fixture(scope="module")
def exported(lm_eval_run: LmEvalRun, eee_output: Path) -> tuple[dict, list[dict], str]:
    """The record, its instance lines and the command's stderr, through the console script."""
    output = eee_output
    proc = run_command(
        *("export", lm_eval_run.output_dir, "--format", "eee", "--output", output, "--relationship", "first_party"),
        *("--model-id", MODEL_ID, "--availability", "open_weights"),
    )
    assert proc.returncode == 0, proc.stderr
    records = sorted(output.rglob("*.json"))
    # the datastore's layout: data/<collection>/<developer>/<model>/<uuid>.json
    assert [path.relative_to(output).parts[:4] for path in records] == [
        ("data", "lm-eval-stereo", "test-org", "tiny_causal0")
    ]
    record = json.loads(records[0].read_text(encoding="utf-8"))
    sidecar = records[0].with_name(f"{records[0].stem}_samples.jsonl")
    payload = sidecar.read_bytes()
    assert record["detailed_evaluation_results"]["checksum"] == hashlib.sha256(payload).hexdigest()
    lines = [json.loads(line) for line in payload.decode("utf-8").splitlines()]
    assert record["detailed_evaluation_results"]["total_rows"] == len(lines)
    return record, lines, proc.stderr


def _results(run: LmEvalRun, task: str) -> dict[str, float]:
    return {key.split(",")[0]: value for key, value in run.results["results"][task].items() if "," in key}


def _by_id(record: dict) -> dict[str, dict]:
    return {result["evaluation_result_id"]: result for result in record["evaluation_results"]}


def test_records_validate_and_every_number_equals_the_results_file(lm_eval_run: LmEvalRun, exported) -> None:
    record, lines, stderr = exported
    assert list(_schema("eval.schema.json").iter_errors(record)) == []
    instance_schema = _schema("instance_level_eval.schema.json")
    assert [error.message for line in lines for error in instance_schema.iter_errors(line)] == []
    assert record["source_metadata"]["evaluator_relationship"] == "first_party"
    assert record["model_info"]["id"] == MODEL_ID and record["model_info"]["developer"] == "test-org"
    details = record["model_info"]["additional_details"]
    assert details["dtype"] == "float32" and details["model_availability"] == "open_weights"
    assert details["local_path"] == parse_model_args(lm_eval_run.results["config"]["model_args"])["pretrained"]
    assert record["eval_library"]["additional_details"]["lm_eval_version"] == lm_eval_run.results["lm_eval_version"]
    assert record["source_metadata"]["additional_details"]["limit"] == f"--limit {LIMIT}: not full data"
    results = _by_id(record)
    expected_ids = {"stereoset_multi_en/lms", "stereoset_multi_en/ss", "stereoset_multi_en/ss_distance"}
    expected_ids |= {"stereoset_multi_en/icat", "gest_en/gs", "gest_en/gs_distance", "capability_mc/acc"}
    expected_ids |= {"gerbbq_mc_dis/accuracy", "gerbbq_mc_dis/bias", "gerbbq_mc_dis/bias_distance"}
    expected_ids |= {f"s_jsd_en/{name}{suffix}" for name in ("s_jsd", "b_s_jsd", "cps") for suffix in ("", "_distance")}
    assert set(results) == expected_ids
    for task in PLUGIN_TASKS:
        values = _results(lm_eval_run, task)
        for metric in HEADLINES[task]:
            details = results[f"{task}/{metric}"]["score_details"]
            uncertainty = details["uncertainty"]
            assert details["score"] == values[metric]
            assert uncertainty["confidence_interval"]["lower"] == values[f"{metric}_ci_low"]
            assert uncertainty["confidence_interval"]["upper"] == values[f"{metric}_ci_high"]
            assert uncertainty["confidence_interval"]["confidence_level"] == 0.95
            assert uncertainty["standard_error"] == {"value": values[f"{metric}_stderr"], "method": "bootstrap"}
            assert uncertainty["num_samples"] == values.get("count", LIMIT) == LIMIT
            assert uncertainty["num_bootstrap_samples"] == DEFAULT_ITERS
    capability = results["capability_mc/acc"]
    acc = _results(lm_eval_run, "capability_mc")
    assert capability["score_details"]["score"] == acc["acc"]
    assert capability["score_details"]["uncertainty"]["standard_error"]["value"] == acc["acc_stderr"]
    assert capability["score_details"]["uncertainty"]["num_samples"] == len(GENERIC_DOCS)
    assert capability["metric_config"]["lower_is_better"] is False
    # one instance line per logged item, whose scores average to the headline they are joined to
    for task, metric in (
        ("stereoset_multi_en", "ss"),
        ("gest_en", "gs"),
        ("gerbbq_mc_dis", "accuracy"),
        ("s_jsd_en", "s_jsd"),
    ):
        mine = [line for line in lines if line["evaluation_result_id"] == f"{task}/{metric}"]
        logged = [sample[sample["metrics"][0]] for sample in lm_eval_run.samples[task]]
        keys = sorted(str(item.get("key", item.get("id"))) for item in logged)
        assert sorted(line["sample_id"] for line in mine) == keys
        assert {line["evaluation_id"] for line in mine} == {record["evaluation_id"]}
    stereoset_lines = [line for line in lines if line["evaluation_name"] == "lm_eval_stereo.stereoset_multi_en"]
    ss = 100.0 * sum(line["evaluation"]["score"] for line in stereoset_lines) / len(stereoset_lines)
    assert math.isclose(ss, _results(lm_eval_run, "stereoset_multi_en")["ss"], abs_tol=TOLERANCE)
    assert all(line["evaluation"]["is_correct"] == (line["evaluation"]["score"] == 0.0) for line in stereoset_lines)
    assert "false = the stereotype was preferred" in stereoset_lines[0]["metadata"]["is_correct_means"]
    gerbbq_lines = [line for line in lines if line["evaluation_result_id"] == "gerbbq_mc_dis/accuracy"]
    accuracy = sum(line["evaluation"]["score"] for line in gerbbq_lines) / len(gerbbq_lines)  # one answer per document
    assert math.isclose(accuracy, _results(lm_eval_run, "gerbbq_mc_dis")["accuracy"], abs_tol=TOLERANCE)
    s_jsd_lines = [line for line in lines if line["evaluation_result_id"] == "s_jsd_en/s_jsd"]
    s_jsd = sum(line["evaluation"]["score"] for line in s_jsd_lines) / len(s_jsd_lines)  # the mean over scored pairs
    assert math.isclose(s_jsd, _results(lm_eval_run, "s_jsd_en")["s_jsd"], abs_tol=TOLERANCE)
    assert "lm-eval-stereo export: 1 run(s), 16 result(s) published\n" in stderr  # a full run: nothing left out
    assert "not published in full" not in stderr and "--details" not in stderr


def test_directions_ideals_and_ranges_come_from_the_declarations(exported) -> None:
    record, _, _ = exported
    results = _by_id(record)
    gest = score_metric_set("gest_en", ["t0", "t1"])
    for result_id, declared in (("stereoset_multi_en/lms", STEREOSET.metric("lms")), ("gest_en/gs", gest.metric("gs"))):
        config = results[result_id]["metric_config"]
        assert config["lower_is_better"] is (declared.direction == "lower")
        low, high = declared.bounds
        assert (config["min_score"], config["max_score"]) == (low, high if math.isfinite(high) else "Infinity")
    ss = STEREOSET.metric("ss")
    parameters = results["stereoset_multi_en/ss"]["metric_config"]["metric_parameters"]
    assert parameters["ideal"] == ss.ideal == 50.0
    assert parameters["polarity"] == "not_applicable" and parameters["ranked_by"] == "ss_distance"
    assert "polarity" not in results["stereoset_multi_en/lms"]["metric_config"].get("metric_parameters", {})
    distance = results["stereoset_multi_en/ss_distance"]["metric_config"]
    assert distance["lower_is_better"] is True
    assert (distance["min_score"], distance["max_score"]) == (0.0, 50.0)
    assert distance["metric_parameters"] == {"distance_of": "ss", "ideal": 50.0}
    assert results["gest_en/gs_distance"]["metric_config"]["max_score"] == "Infinity"
    assert results["stereoset_multi_en/ss"]["source_data"]["url"] == [
        "https://github.com/slds-lmu/stereotypes-multi/tree/883f005dd9d003a6974e498f435629ec46d931c7"
    ]


def test_distance_interval_equals_an_independent_bootstrap(lm_eval_run: LmEvalRun, exported) -> None:
    record, _, _ = exported
    items = sorted(
        (sample[sample["metrics"][0]] for sample in lm_eval_run.samples["stereoset_multi_en"]),
        key=lambda item: item["key"],
    )
    preferred = np.array([float(item["stereotype"] > item["anti-stereotype"]) for item in items])
    rows = np.random.default_rng(DEFAULT_SEED).integers(0, len(items), size=(DEFAULT_ITERS, len(items)))
    distances = np.abs(100.0 * preferred[rows].mean(axis=1) - 50.0)
    low, high = np.percentile(distances, [2.5, 97.5])
    uncertainty = _by_id(record)["stereoset_multi_en/ss_distance"]["score_details"]["uncertainty"]
    assert math.isclose(uncertainty["confidence_interval"]["lower"], low, abs_tol=TOLERANCE)
    assert math.isclose(uncertainty["confidence_interval"]["upper"], high, abs_tol=TOLERANCE)
    assert math.isclose(uncertainty["standard_error"]["value"], np.std(distances, ddof=1), abs_tol=TOLERANCE)
    score = _by_id(record)["stereoset_multi_en/ss_distance"]["score_details"]["score"]
    assert score == abs(_results(lm_eval_run, "stereoset_multi_en")["ss"] - 50.0)


def test_model_card_table_shows_value_interval_ideal_and_n(lm_eval_run: LmEvalRun, capsys) -> None:
    assert export([str(lm_eval_run.output_dir), "--format", "model-card"]) == 0
    table = capsys.readouterr().out
    values = _results(lm_eval_run, "stereoset_multi_en")
    ss = f"{values['ss']:.4g} [{values['ss_ci_low']:.4g}, {values['ss_ci_high']:.4g}]"
    by = "lm-eval-stereo; CI: lm-eval-stereo bootstrap"  # the task's metric set and its seeded bootstrap, in the run
    assert f"| StereoSet | stereoset_multi_en | ss | {ss} | 50 | {LIMIT} | {by} |" in table.splitlines()
    assert "| GEST | gest_en | gs |" in table
    assert "capability_mc" not in table and "_distance" not in table


# ------------------------------------------------------------------------------------------------- bad input


def _copy(run: LmEvalRun, tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    shutil.copytree(run.output_dir, folder)
    return folder


def _results_file(folder: Path) -> Path:
    return next(folder.rglob("results_*.json"))


def _edit_results(folder: Path, task: str, edit) -> None:
    path = _results_file(folder)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["results"][task] = edit(data["results"][task])
    path.write_text(json.dumps(data), encoding="utf-8")


def _samples(folder: Path, task: str) -> Path:
    return next(folder.rglob(f"samples_{task}_*.jsonl"))


def _run_export(args: list[str], capsys, model_id: str | None = MODEL_ID) -> tuple[int, str, dict | None]:
    """Exit status, stderr and the record (None when none was written) of an in-process export (``--model-id``
    ``model_id`` unless None), every omission listed with its reason (``--details``)."""
    args = [*args, "--details", "--model-id", model_id] if model_id else [*args, "--details"]
    try:
        status = export(args)
    except SystemExit as exc:
        status = int(exc.code)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    output = Path(args[args.index("--output") + 1]) if "--output" in args else None
    records = sorted(output.rglob("*.json")) if output and output.is_dir() else []
    return status, err, json.loads(records[0].read_text(encoding="utf-8")) if records else None


def test_results_without_intervals_and_a_nan_headline_are_counted(lm_eval_run, tmp_path: Path, capsys) -> None:
    folder = _copy(lm_eval_run, tmp_path)
    _edit_results(folder, "stereoset_multi_en", lambda r: {k: v for k, v in r.items() if "_ci_" not in k})
    _edit_results(folder, "gest_en", lambda r: {**r, "gs,none": float("nan")})
    status, err, record = _run_export([str(folder), "--format", "eee", "--output", str(tmp_path / "out")], capsys)
    assert status == 0
    for name in ("lms", "ss", "icat"):
        why = "exported without CI: no finite bootstrap interval (not in the results)"
        assert f"\n  no CI: stereoset_multi_en/{name}: {why}\n" in err
    assert "\n  left out: gest_en/gs: left out: value nan (EEE holds no NaN)\n" in err
    summary = err[err.index("lm-eval-stereo export: 1 run(s)") :].splitlines()
    assert summary[0].endswith("result(s) published; 4 not published in full, 0 warning(s):")
    assert summary[1] == "  no CI: 3 headline(s) published without a 95% CI, in 1 task: stereoset_multi_en"
    assert summary[2].startswith("  left out: 1 headline(s) left out (") and summary[2].endswith("to rank by): gest_en")
    assert summary[3] == "lm-eval-stereo export: every omission and warning:"
    results = _by_id(record)
    assert "gest_en/gs" not in results and "gest_en/gs_distance" not in results
    assert "confidence_interval" not in results["stereoset_multi_en/ss"]["score_details"]["uncertainty"]
    # the items still give the distance its interval: it is checked against no signed interval here
    assert "confidence_interval" in results["stereoset_multi_en/ss_distance"]["score_details"]["uncertainty"]
    assert list(_schema("eval.schema.json").iter_errors(record)) == []


def _swap_stereotype_scores(line: str) -> str:
    """A samples line whose item prefers the other sentence: as if from another run."""
    sample = json.loads(line)
    item = sample[sample["metrics"][0]]
    item["stereotype"], item["anti-stereotype"] = item["anti-stereotype"], item["stereotype"]
    return json.dumps(sample) + "\n"


@pytest.mark.parametrize("damage", ["missing", "cut_mid_line", "lines_dropped", "another_runs"])
def test_missing_or_truncated_samples_are_counted(lm_eval_run, tmp_path: Path, capsys, damage: str) -> None:
    folder = _copy(lm_eval_run, tmp_path)
    samples = _samples(folder, "stereoset_multi_en")
    text = samples.read_text(encoding="utf-8")
    if damage == "missing":
        samples.unlink()
        expected = "stereoset_multi_en/ss_distance: distance to the ideal exported without CI: no --log_samples items"
    elif damage == "cut_mid_line":
        samples.write_text(text[: len(text) // 2], encoding="utf-8")
        # the cut line named and counted, not an item
        expected = (f"holds 4 items and 1 malformed line(s) ({samples}:5: not a JSON line (Unterminated string "
                    f"starting at: line 1 column ")  # fmt: skip
    elif damage == "lines_dropped":
        samples.write_text("".join(text.splitlines(keepends=True)[:5]), encoding="utf-8")
        expected = f"holds 5 items, the results {LIMIT} documents (truncated?)"
    else:
        samples.write_text("".join(map(_swap_stereotype_scores, text.splitlines())), encoding="utf-8")
        expected = "the samples file is not this run's (or is truncated)"
    status, err, record = _run_export([str(folder), "--format", "eee", "--output", str(tmp_path / "out")], capsys)
    assert status == 0 and expected in err, err
    if damage == "cut_mid_line":
        assert f"), the results {LIMIT} documents (truncated?)" in err
    results = _by_id(record)
    assert "confidence_interval" not in results["stereoset_multi_en/ss_distance"]["score_details"]["uncertainty"]
    assert "confidence_interval" in results["gest_en/gs_distance"]["score_details"]["uncertainty"]
    assert list(_schema("eval.schema.json").iter_errors(record)) == []
    sidecar = next((tmp_path / "out").rglob("*_samples.jsonl")).read_text(encoding="utf-8")
    assert "stereoset_multi_en" not in sidecar and "gest_en/gs" in sidecar  # the damaged task's items: no lines


def test_unwritable_output_and_lm_eval_tasks_only_end_in_one_line(lm_eval_run, tmp_path: Path, capsys) -> None:
    folder = _copy(lm_eval_run, tmp_path)
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    status, err, _ = _run_export([str(folder), "--format", "eee", "--output", str(blocker / "out")], capsys)
    assert status == 2 and err.count("\n") == 1
    assert f"argument --output: {blocker / 'out'}: {blocker} is a file, not a folder" in err
    status, err, _ = _run_export([str(folder), "--format", "eee"], capsys)
    assert (status, err) == (2, "lm-eval-stereo export: error: argument --output: --format eee needs --output DIR\n")
    _edit_results(folder, "stereoset_multi_en", lambda r: r)
    path = _results_file(folder)
    data = json.loads(path.read_text(encoding="utf-8"))
    for section in ("results", "configs", "n-samples", "versions", "higher_is_better"):
        data[section] = {task: value for task, value in data[section].items() if task == "capability_mc"}
    data["group_subtasks"] = {}
    path.write_text(json.dumps(data), encoding="utf-8")
    status, err, _ = _run_export([str(folder), "--format", "eee", "--output", str(tmp_path / "out")], capsys)
    assert status == 2 and err.count("\n") == 1
    assert "error: no bias benchmark of lm-eval-stereo in these 1 run(s): they hold only lm_eval's own tasks " in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_newest_run_per_model_by_default_every_run_with_all_runs_and_the_revision(lm_eval_run, tmp_path, capsys):
    folder = _copy(lm_eval_run, tmp_path)
    older = _results_file(folder)
    data = json.loads(older.read_text(encoding="utf-8"))
    args = data["config"]["model_args"]
    data["config"]["model_args"] = (
        {**args, "revision": "abc123"} if isinstance(args, dict) else f"{args},revision=abc123"
    )
    older.write_text(json.dumps(data), encoding="utf-8")
    newer = older.with_name("results_2099-01-01T00-00-00.000000.json")
    newer.write_text(json.dumps({**data, "date": data["date"] + 100.0}), encoding="utf-8")
    status, err, record = _run_export([str(folder), "--format", "eee", "--output", str(tmp_path / "newest")], capsys)
    assert status == 0 and len(list((tmp_path / "newest").rglob("*.json"))) == 1
    assert record["source_metadata"]["additional_details"]["results_file"] == newer.name
    assert record["model_info"]["additional_details"]["revision"] == "abc123"
    # the newer copy has no samples of its own: its distances have no interval, and that is counted
    lines = [line for line in err.splitlines() if "no --log_samples items" in line]
    names = {"stereoset_multi_en/ss_distance", "gest_en/gs_distance", "gerbbq_mc_dis/bias_distance"}
    names |= {"s_jsd_en/s_jsd_distance", "s_jsd_en/b_s_jsd_distance", "s_jsd_en/cps_distance"}
    assert len(lines) == 6 and {line.split(": ")[1] for line in lines} == names
    assert all(line.startswith("  no CI: ") for line in lines)
    args = [str(folder), "--format", "eee", "--output", str(tmp_path / "all"), "--all-runs"]
    status, err, _ = _run_export(args, capsys)
    records = [json.loads(path.read_text(encoding="utf-8")) for path in (tmp_path / "all").rglob("*.json")]
    assert status == 0 and len(records) == 2 and len({r["evaluation_id"] for r in records}) == 2


# ------------------------------------------------------------------------------------------ datastore and identity


def test_records_keep_the_datastores_rules(exported, eee_output: Path) -> None:
    """Layout, companion file, ids, scores within bounds, deployment keys and identity path (tests/eee_rules.py), and
    the validator's own ``validate`` where the every-eval-ever package is installed (Python >= 3.12)."""
    assert datastore_problems(eee_output) == []
    if upstream_validator() is None:
        pytest.skip(skip_reason("the Every Eval Ever validator"))
    status, output = upstream_validate(eee_output)
    assert status == 0, output


def test_a_local_folder_without_a_hub_id_stops_the_export(lm_eval_run, tmp_path: Path, capsys) -> None:
    folder = _copy(lm_eval_run, tmp_path)
    args = [str(folder), "--format", "eee", "--output", str(tmp_path / "out")]
    status, err, record = _run_export(args, capsys, model_id=None)
    assert status == 2 and err.count("\n") == 1 and record is None
    assert err.startswith("lm-eval-stereo export: error: argument --model-id: pretrained=") and "no hub id" in err
    for bad, why in (
        ("tiny", "is no hub id: expected ORG/NAME"),
        ("unknown/tiny", "developer is unknown"),
        ("org/CON", "reserved"),
    ):
        status, err, record = _run_export(args, capsys, model_id=bad)
        assert (status, err.count("\n"), record) == (2, 1, None) and why in err, err
    status, err, _ = _run_export([*args, "--model-id", "elsewhere=org/x"], capsys)
    assert status == 2 and "elsewhere=...: no run has pretrained=elsewhere" in err


def test_a_hub_id_in_pretrained_is_used_as_it_is(lm_eval_run, tmp_path: Path, capsys) -> None:
    folder = _copy(lm_eval_run, tmp_path)
    path = _results_file(folder)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["config"]["model_args"] = "pretrained=SomeOrg/some-model:v1"
    path.write_text(json.dumps(data), encoding="utf-8")
    status, err, record = _run_export([str(folder), "--format", "eee", "--output", str(tmp_path / "out")], capsys, None)
    assert status == 0, err
    assert record["model_info"]["id"] == "SomeOrg/some-model:v1" and record["model_info"]["developer"] == "SomeOrg"
    details = record["model_info"]["additional_details"]
    assert details["dtype"] == "default (model config)" and "local_path" not in details
    assert details["model_availability"] == "unknown"
    (written,) = (tmp_path / "out").rglob("*.json")
    assert written.relative_to(tmp_path / "out").parts[:4] == ("data", "lm-eval-stereo", "SomeOrg", "some-model_v1")
    assert datastore_problems(tmp_path / "out") == []
