"""Bad input on the newer paths, each case through ``lm_eval`` or the ``lm-eval-stereo`` command, asserting the exact
outcome: an option outside its range, a user-written MBBQ answer-detection table, replay recordings left unused or
``null``, a results or samples file that is not what lm_eval and the plugin write, runs tied in the run selection,
and the export's model id. docs/RELIABILITY.md lists these cases."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from lm_eval_runner import run_command, run_lm_eval, shared_data_dir
from test_report import results_and_samples

from lm_eval_stereo.core import options
from lm_eval_stereo.core.errors import MalformedDataError, OptionError
from lm_eval_stereo.models.replay import ReplayLM
from lm_eval_stereo.tasks.german_gender_bias.gerbbq import task as gerbbq_task
from lm_eval_stereo.tasks.mbbq import detection

DETECTION = shared_data_dir() / "mbbq" / "answer_detection.py"


# ---------------------------------------------------------------------------------------------- options


def test_an_option_outside_its_range_stops_the_run_naming_it(tiny_causal: Path, tmp_path: Path) -> None:
    """A negative minimum of sentences per stereotype was replaced by 1 (g_s from single sentences); now lm_eval
    stops before scoring, with the option, the value and what is allowed."""
    run = run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal}", "--tasks", "eurogest_en", "--limit", "2",
         "--metadata", json.dumps({"eurogest_min_sentences": -1})],
        tmp_path, check=False,
    )  # fmt: skip
    assert run.returncode != 0 and run.results == {}
    assert "option 'eurogest_min_sentences' must be an integer >= 1, got -1" in run.stderr


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"eurogest_min_sentences": 0}, "option 'eurogest_min_sentences' must be an integer >= 1, got 0"),
        ({"cooccurrence_seed": -1}, "option 'cooccurrence_seed' must be an integer >= 0, got -1"),
        ({"gest_version": "2.0"}, "option 'gest_version' must be one of 1.0, 1.1, got '2.0'"),
        ({"judge_batch_size": 0}, "option 'judge_batch_size' must be an integer >= 1, 'auto' or 'auto:N', got 0"),
        ({"judge_chat_template": "maybe"}, "option 'judge_chat_template' must be true or false"),
        ({"judge_gen_kwargs": 5}, "option 'judge_gen_kwargs' must be a JSON object or 'k=v,k=v' text, got 5"),
    ],
    ids=["min-sentences-0", "negative-seed", "gest-version", "batch-size-0", "chat-template", "gen-kwargs"],
)
def test_each_option_declares_what_it_allows(given: dict, message: str) -> None:
    from lm_eval_stereo.core import registry

    (name,) = given
    option = next(option for bench in registry.benchmarks() for option in bench.options if option.name == name)
    with pytest.raises(OptionError) as error:
        options.parse("the_task", (option,), given)
    assert str(error.value) == message or str(error.value).startswith(message)


# ------------------------------------------------------------------------------- user-supplied tables


def _detection_file(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    """A copy of MBBQ's answer_detection.py with ``old`` replaced by ``new`` (``count`` times)."""
    text = DETECTION.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "answer_detection.py"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return path


def test_a_prompt_with_a_slot_too_many_is_refused_through_lm_eval(tmp_path: Path) -> None:
    """A template with a sixth slot showed no sixth answer but was scored as if it did; now the task is refused."""
    table = _detection_file(tmp_path, "The answer choices are as follows: (A): {}", "(A): {} or {}")
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text(json.dumps({"full_prompt": "p", "output": "A"}) + "\n")
    run = run_lm_eval(
        ["--model", "replay", "--model_args", f"outputs={recorded}", "--tasks", "mbbq_gen_nl", "--limit", "1",
         "--metadata", json.dumps({"mbbq_detection_file": str(table)})],
        tmp_path / "out", check=False,
    )  # fmt: skip
    assert run.returncode != 0 and run.results == {}
    assert re.search(rf"{re.escape(str(table))}: table prompts, language 'en', field prompt \d: has 6 slot", run.stderr)


@pytest.mark.parametrize(
    ("old", "new", "language", "message"),
    [
        ('    "nl": {', '    "xx": {', "nl", "table extra_ans_detect, language 'nl': missing"),
        (
            "c_list = [",
            "c_list = ['c', 'C']\nunused = [",
            "en",
            "equal length >= 3, got a_list 29, b_list 29, c_list 2",
        ),
        ("before_ans = [", "before_ans = 3\nunused = [", "en", "table before_ans: must be a list of strings, got int"),
        ("(A): {}", "(A): {answer}", "en", "table prompts, language 'en', field prompt 1: slots {}, {}, {answer}"),
    ],
    ids=["missing-language", "short-list", "wrong-type", "bad-placeholder"],
)
def test_detection_table_errors_name_file_table_language_field(
    tmp_path: Path, old: str, new: str, language: str, message: str
) -> None:
    path = _detection_file(tmp_path, old, new)
    with pytest.raises(MalformedDataError) as error:
        detection.language_tables(str(path), language)
    assert str(error.value).startswith(f"{path}: ") and message in str(error.value)


def test_a_missing_translation_names_the_entry(tmp_path: Path) -> None:
    english = detection.parse_tables(DETECTION).before[0]
    text = DETECTION.read_text(encoding="utf-8")
    start = text.index("trans_before_ans_dict")
    entry = text.index(json.dumps(english), text.index('"tr"', start))
    path = tmp_path / "answer_detection.py"
    path.write_text(text[:entry] + '"renamed ' + text[entry + 1 :], encoding="utf-8")
    with pytest.raises(MalformedDataError, match=rf"table trans_before_ans_dict, language 'tr', field '{english}'"):
        detection.language_tables(str(path), "tr")


# ---------------------------------------------------------------------------------------------- replay


def test_replay_accounts_for_every_recording(tmp_path: Path) -> None:
    """Outputs left unused, a prompt recorded twice and a null output are counted in the results (config.replay)
    and named by file and row; the null output is scored as an empty generation."""
    docs = gerbbq_task.load_dataset("amb")["test"]
    rows = [(0, "C: unbekannt"), (1, None), (2, "B"), (0, "A")]
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text(
        "".join(json.dumps({"full_prompt": docs[i]["full_prompt"], "output": o}) + "\n" for i, o in rows)
    )
    run = run_lm_eval(
        ["--model", "replay", "--model_args", f"outputs={recorded}", "--tasks", "gerbbq_amb", "--limit", "2"],
        tmp_path / "out",
    )
    assert run.results["config"]["replay"] == {
        "source": str(recorded), "recorded": 4, "used": 2, "unused": 2,
        "unused_first": [f"{recorded}:3", f"{recorded}:4"], "prompts_recorded_more_than_once": 1,
        "null_outputs": 1, "null_outputs_first": [f"{recorded}:2"], "served_from_cache": 0,
        "served_from_cache_again": 0,
    }  # fmt: skip
    assert run.metric("gerbbq_amb", "empty") == pytest.approx(1 / 2)
    assert "2 of 4 recorded outputs left unused" in run.stderr


def test_replay_output_that_is_no_text_names_the_output_column(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text(
        json.dumps({"full_prompt": "p", "output": "a"}) + "\n" + json.dumps({"full_prompt": "q", "output": 3})
    )
    with pytest.raises(
        MalformedDataError, match=rf"{re.escape(str(recorded))}, row 2, field 'output': the output must"
    ):
        ReplayLM(outputs=str(recorded))


# ----------------------------------------------------------------------------------- the results reader


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def broken_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of StereoSet runs (with --log_samples items), each broken in one way."""
    root = tmp_path_factory.mktemp("broken_results")
    flags = [1] * 14 + [0] * 6
    for model in ("org/text-headline", "org/infinite-headline", "org/outside-ci", "org/newer-plugin",
                  "org/bad-undefined", "org/one-bad-line", "org/reference"):  # fmt: skip
        results_and_samples(root, model, flags)
    documents = {"effective": len(flags), "original": len(flags)}  # as many as each samples file holds
    for results in root.rglob("results_*.json"):
        _edit(results, lambda data: data["n-samples"].update({"stereoset_multi_en": documents}))
    folder = {name: root / f"org__{name}" for name in ("text-headline", "infinite-headline", "outside-ci",
              "newer-plugin", "bad-undefined", "one-bad-line")}  # fmt: skip
    task = "stereoset_multi_en"

    def results(name: str) -> Path:
        return next(folder[name].glob("results_*.json"))

    def metrics(name: str, **values) -> None:
        _edit(results(name), lambda data: data["results"][task].update({f"{k},none": v for k, v in values.items()}))

    metrics("text-headline", ss="52.0")
    metrics("infinite-headline", ss=math.inf)
    metrics("outside-ci", ss=99.0)
    metrics("bad-undefined", ss_ci_undefined="many")
    _edit(results("newer-plugin"), lambda data: data["configs"][task]["metadata"].update(
        {"benchmark": "stereoset_multi", "metric_set": "stereoset_multi.v9", "key_field": "key"}))  # fmt: skip
    samples = next(folder["one-bad-line"].glob("samples_*.jsonl"))
    samples.write_text(samples.read_text().replace('"doc_id": 3,', '"doc_id": 3'))
    tie = root / "org__reference" / "results_copy.json"  # the same model, the same date, another file
    tie.write_text(next((root / "org__reference").glob("results_*.json")).read_text())
    return root


@pytest.fixture(scope="module")
def broken_report(broken_results: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    output = tmp_path_factory.mktemp("broken_report") / "report.json"
    proc = run_command("report", broken_results, "--details", "--json", output)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, json.loads(output.read_text())


def test_a_malformed_headline_is_unusable_with_a_caveat_naming_file_task_field(broken_report, broken_results):
    markdown, _ = broken_report
    file = next((broken_results / "org__text-headline").glob("results_*.json"))
    assert f"{file}: stereoset_multi_en: field ss: not a number (str) (found '52.0')" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| org/text-headline |"))
    assert row.split(" | ")[2].startswith("unusable [") and "52.0" not in row


def test_a_non_finite_value_or_one_outside_its_ci_supports_no_verdict(broken_report, broken_results):
    markdown, report = broken_report
    file = next((broken_results / "org__outside-ci").glob("results_*.json"))
    assert f"{file}: stereoset_multi_en: field ss: outside its own 95% CI" in markdown
    rows = {model: next(line for line in markdown.splitlines() if line.startswith(f"| org/{model} |"))
            for model in ("infinite-headline", "outside-ci", "reference")}  # fmt: skip
    assert rows["reference"].split(" | ")[2].startswith("70.0 [50.0, 90.0]: no detectable bias with n = "), "a verdict"
    assert rows["infinite-headline"].split(" | ")[2].startswith("inf [50.0, 90.0]"), "shown"
    assert rows["outside-ci"].split(" | ")[2].startswith("99.0 [50.0, 90.0]"), "shown"
    for model in ("infinite-headline", "outside-ci"):
        assert "prefers" not in rows[model].split(" | ")[2] and "no detectable" not in rows[model], "no verdict"


def test_an_unknown_metric_set_is_named_as_from_a_newer_plugin(broken_report, broken_results):
    markdown, _ = broken_report
    file = next((broken_results / "org__newer-plugin").glob("results_*.json"))
    assert f"{file}: stereoset_multi_en: field metric_set: a metric set this lm-eval-stereo does not know: " \
           "written by a newer plugin" in markdown  # fmt: skip


def test_a_malformed_samples_line_is_counted_and_skipped_the_rest_compared(broken_report, broken_results):
    _, report = broken_report
    samples = next((broken_results / "org__one-bad-line").glob("samples_*.jsonl"))
    notes = [note for note in report["paired"]["not_compared"] if str(samples) in note]
    assert notes == [
        f"1 malformed line(s) of {samples} skipped ({samples}:4: not a JSON line (Expecting ',' delimiter: line 1 "
        "column 14 (char 13))): org/one-bad-line on stereoset_multi_en compared on its other 19 items"
    ]
    compared = {(r["a"], r["b"]) for r in report["paired"]["models"]}
    assert any("org/one-bad-line" in pair for pair in compared)


def test_runs_tied_on_date_are_decided_by_the_stated_rule_and_named(broken_report, broken_results):
    markdown, _ = broken_report
    kept = broken_results / "org__reference" / "results_copy.json"
    left = next(p for p in (broken_results / "org__reference").glob("results_*.json") if p != kept)
    line = next(
        line for line in markdown.splitlines() if line.startswith("- ⚠ tied runs: ") and "the same date" in line
    )
    message = line[line.index(str(broken_results)) :]
    assert f"{left} and {kept}" in line or f"{kept} and {left}" in line
    assert f"stereoset_multi_en taken from {kept}" in line and f"{left} left out" in line
    assert "on equal dates the results file whose path sorts last" in line
    exported = run_command("export", broken_results / "org__reference", "--format", "model-card", "--details")
    assert exported.returncode == 0, exported.stderr
    assert f"\n  tied runs: {message}\n" in exported.stderr, "the export names the run left out too"


# ------------------------------------------------------------------------------------------------ export


def test_export_never_claims_resamples_its_interval_does_not_rest_on(broken_results, tmp_path):
    """A non-numeric count of undefined resamples read as "defined everywhere": the record claimed 1,000 resamples.
    Now the headline is exported without CI and the omission says why."""
    out = tmp_path / "records"
    proc = run_command("export", broken_results / "org__bad-undefined", "--format", "eee", "--output", out, "--details")
    assert proc.returncode == 0, proc.stderr
    assert "exported without CI: its count of undefined resamples ss_ci_undefined is unusable ('many')" in proc.stderr
    (record,) = out.rglob("*.json")
    results = json.loads(record.read_text())["evaluation_results"]
    for result in results:
        uncertainty = result["score_details"].get("uncertainty", {})
        assert ("confidence_interval" in uncertainty) == ("num_bootstrap_samples" in uncertainty)
    ss = [r for r in results if r["score_details"]["score"] == 70.0 and "confidence_interval" not in
          r["score_details"].get("uncertainty", {})]  # fmt: skip
    assert ss, "SS is published without an interval"


def test_export_keeps_the_readable_items_of_a_samples_file_and_names_the_line_skipped(broken_results, tmp_path):
    """One malformed samples line made the export drop every per-item line; now the other items are published and
    the skipped line is named (the distance CI, resting on fewer items than the run's, is left out)."""
    out = tmp_path / "records"
    proc = run_command("export", broken_results / "org__one-bad-line", "--format", "eee", "--output", out, "--details")
    assert proc.returncode == 0, proc.stderr
    samples = next((broken_results / "org__one-bad-line").glob("samples_*.jsonl"))
    assert f"1 malformed samples line(s) skipped ({samples}:4: not a JSON line" in proc.stderr
    (sidecar,) = out.rglob("*_samples.jsonl")
    keys = [json.loads(line)["sample_id"] for line in sidecar.read_text().splitlines()]
    assert len(keys) == 19 and "en/intrasentence/0003" not in keys


@pytest.mark.parametrize("model_id", ["my org/model", "org/na..me"])
def test_model_id_that_is_no_hub_id_exits_2_naming_the_rule(broken_results, tmp_path, model_id: str):
    proc = run_command("export", broken_results / "org__reference", "--format", "model-card", "--model-id", model_id)
    assert proc.returncode == 2
    assert f"{model_id!r} is no hub id: expected ORG/NAME, each part 1-96 letters, digits" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("lm-eval-stereo export: error: argument --model-id: ")


def _set(data: dict, keys: tuple, value) -> dict:
    target = data
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value
    return data


TASK = "stereoset_multi_de"


@pytest.mark.parametrize(
    ("keys", "value", "field", "problem"),
    [
        (("results", TASK, "ss,none"), "0.5", "ss", "not a number (str)"),
        (("results", TASK, "ss,none"), {"a": 1}, "ss", "not a number (dict)"),
        (("results", TASK, "ss_ci_high,none"), -1.0, "ss_ci_high", "low bound is above its high bound"),
        (("results", TASK, "ss_ci_undefined,none"), 2.5, "ss_ci_undefined", "not an integer from 0 to 1000"),
        (("results", TASK, "count,none"), -4, "count", "negative"),
        (("results", TASK, "ss_stderr,none"), "abc", "ss", "stderr not a number"),
        (("n-samples", TASK, "effective"), "x", f"n-samples.{TASK}", "non-negative integer counts"),
        (("configs", TASK, "metadata"), [1], f"configs.{TASK}.metadata", "not an object"),
        (("configs",), [1, 2], "configs", "not an object"),
        (("group_subtasks", "stereoset_multi"), ["stereoset_multi"], "group_subtasks.stereoset_multi", "holds itself"),
        (("date",), "yesterday", "date", "modification time is taken instead"),
        (("configs", TASK, "metadata", "facts"), [1], f"configs.{TASK}.metadata.facts", "not an object: the task's"),
        (("configs", TASK, "metadata", "metric_set"), ["s"], f"configs.{TASK}.metadata.metric_set", "not text"),
        (("configs", TASK, "metadata", "key_field"), 3, f"configs.{TASK}.metadata.key_field", "not text"),
        (("configs", TASK, "metadata", "language"), {"de": 1}, f"configs.{TASK}.metadata.language", "not text"),
        (("configs", TASK), "task", f"configs.{TASK}", "not an object"),
        (("n-shot",), [0], "n-shot", "not an object"),
        (("n-shot", TASK), "zero", f"n-shot.{TASK}", "not a number"),
        (("versions",), "1.0", "versions", "not an object"),
        (("higher_is_better", TASK), [True], f"higher_is_better.{TASK}", "not an object"),
        (("config", "model"), ["hf"], "config.model", "not text: the backend is unknown"),
        (("config", "model_args"), 5, "config.model_args", "not text or an object"),
        (("config", "limit"), "ten", "config.limit", "not a number"),
        (("config", "model_dtype"), 16, "config.model_dtype", "not str"),
        (("chat_template_sha",), ["x"], "chat_template_sha", "not str"),
        (("fewshot_as_multiturn",), "yes", "fewshot_as_multiturn", "not bool"),
        (("lm_eval_version",), 4.13, "lm_eval_version", "not text"),
    ],
    ids=["text", "object", "bounds-reversed", "undefined-fraction", "negative-count", "stderr", "n-samples",
         "metadata", "configs", "group-cycle", "date", "facts", "metric-set", "key-field", "language", "config",
         "n-shot", "n-shot-entry", "versions", "higher-is-better", "backend", "model-args", "limit", "model-dtype",
         "chat-template", "multiturn", "lm-eval-version"],
)  # fmt: skip
def test_each_malformed_field_is_one_problem_naming_it(
    tmp_path: Path, keys: tuple, value, field: str, problem: str, capsys: pytest.CaptureFixture
):
    """Every field of a results file that the report and the export read is checked once where results/ reads it:
    one problem naming the file, the task and the field, never a traceback; a refused value is Unusable, not a
    number; a recorded declaration field of the wrong kind leaves the task undeclared (no verdict rests on it). The
    report and the export both name it."""
    from test_results_layer import stereoset_results

    from lm_eval_stereo.report import build_report, render_markdown, report_json
    from lm_eval_stereo.results.fields import Unusable
    from lm_eval_stereo.results.run import load_run

    path = tmp_path / "results_2026-01-01T00-00-00.json"
    path.write_text(json.dumps(_set(stereoset_results(), keys, value)))
    run = load_run(path)
    task = "stereoset_multi" if keys[0] == "group_subtasks" else TASK
    found = [p for p in run.problems(task) if p.field == field]
    assert len(found) == 1 and problem in found[0].message(path) and str(path) in found[0].message(path)
    if keys[0] == "results" and "stderr" not in keys[2]:
        assert isinstance(run.values(TASK)[keys[2].removesuffix(",none")], Unusable)
    if keys[:3] == ("configs", TASK, "metadata") and len(keys) == 4:  # a recorded declaration field: no declaration
        assert run.declaration(TASK) is None and run.declaration("stereoset_multi_en") is not None
    report = build_report([path])
    warnings = [w.message for w in report.warnings]
    assert any(found[0].message(path) in message for message in warnings)
    report_json(report)
    render_markdown(report, details=True)
    from lm_eval_stereo.export.command import main as export

    status = export([str(path), "--format", "model-card", "--details"])
    err = capsys.readouterr().err
    assert found[0].message(path) in err and "Traceback" not in err
    assert status == 0
