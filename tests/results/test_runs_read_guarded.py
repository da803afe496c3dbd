"""What the report and the export read of a folder of runs (issue 60): a run saved with the file form of
``--output_path`` is read, a hostile results file or samples line (nested 100,000 levels deep, nested deeper than
lm_eval ever writes, larger than :data:`~lm_eval_stereo.results.files.MAX_RESULTS_BYTES`) is skipped and named while
the other runs are still read, a plugin task whose every logged item is a number is named, and a recorded fact of the
wrong kind is named by its field. Each case goes through ``lm-eval-stereo report`` and ``lm-eval-stereo export``.

The runs are built by hand and saved by lm_eval's own ``EvaluationTracker`` (:mod:`saved_runs`): no model runs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lm_eval_runner import run_command
from saved_runs import TASK, save_run

from lm_eval_stereo.results.files import MAX_DEPTH, MAX_RESULTS_BYTES


def export(folder: Path, output: Path, *more: str) -> subprocess.CompletedProcess:
    return run_command("export", folder, "--format", "eee", "--output", output, "--model-id", "org/model", *more)


def records(output: Path) -> dict[str, list[str]]:
    """The files of each model's folder of an export, by model (``org/name``)."""
    found: dict[str, list[str]] = {}
    for path in sorted(output.rglob("*.json*")):
        found.setdefault("/".join(path.parent.parts[-2:]), []).append(path.name)
    return found


def test_a_run_saved_with_the_file_form_of_output_path_is_read_by_the_report_and_the_export(tmp_path: Path):
    """``--output_path out/x.json`` (lm_eval writes ``out/x_<date>.json`` and the samples beside it) next to the
    folder form: the report of ``out/`` compares both models on their logged items, the export writes both records
    with their per-item files. Before, the file-form run was left out without a word."""
    out = tmp_path / "out"
    file_form = save_run(out / "x.json", "org/file-form", [1] * 18 + [0] * 2)
    folder_form = save_run(out, "org/folder-form", [1] * 4 + [0] * 16)
    assert file_form.parent == out and file_form.name.startswith("x_") and folder_form.name.startswith("results_")
    data = tmp_path / "report.json"
    report = run_command("report", out, "--json", data)
    assert report.returncode == 0 and report.stderr == "", report.stderr
    assert [model["label"] for model in json.loads(data.read_text())["models"]] == ["org/file-form", "org/folder-form"]
    (paired,) = json.loads(data.read_text())["paired"]["models"]
    assert (paired["a"], paired["b"], paired["task"]) == ("org/file-form", "org/folder-form", TASK)
    assert paired["left_out"] == 0 and {comparison["items"] for comparison in paired["comparisons"]} == {20}, (
        "every logged item of both runs"
    )
    ss = next(comparison for comparison in paired["comparisons"] if comparison["metric"] == "ss")
    assert ss["discordant"] == [14, 0], "items 4-17 prefer the stereotype in the file-form run only"
    proc = export(out, tmp_path / "records")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("lm-eval-stereo export: 2 run(s), 8 result(s) published\n"), proc.stderr
    found = records(tmp_path / "records")
    assert sorted(found) == ["org/file-form", "org/folder-form"]
    assert all(len(files) == 2 and files[1].endswith("_samples.jsonl") for files in found.values()), found


def test_a_json_file_named_like_a_file_form_run_that_is_none_is_named_as_skipped(tmp_path: Path):
    out = tmp_path / "out"
    save_run(out, "org/model", [1] * 10 + [0] * 10)
    stranger = out / "notes_2026-01-01T00-00-00.000000.json"
    stranger.write_text(json.dumps({"notes": "not a run"}))
    report = run_command("report", out)
    assert report.returncode == 0
    assert report.stderr == (
        f"lm-eval-stereo report: warning: {stranger}: not an lm_eval results file (no 'results' object) (skipped)\n"
    )


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_hostile_results_files_are_skipped_and_named_and_the_other_runs_read(tmp_path: Path):
    """A results file nested 100,000 levels deep crashed the report and the export with a RecursionError. Now it, one
    nested just deeper than the limit (which Python would parse, and a later reader meet again) and one larger than
    the size limit (sparse: no disk used) are each skipped with its reason, and both good runs are read (the hostile
    files, the newest of their model, do not hide the model's run)."""
    out = tmp_path / "out"
    save_run(out, "org/model", [1] * 14 + [0] * 6)
    save_run(out, "org/other", [1] * 8 + [0] * 12)
    folder = out / "org__model"
    too_deep = f"nested deeper than {MAX_DEPTH} levels (JSON that no lm_eval writes)"
    hostile = {
        folder / "results_2027-01-01T00-00-00.000000.json": (deep(100_000), too_deep),
        folder / "results_2027-01-02T00-00-00.000000.json": (
            json.dumps({"results": {}, "configs": {"x": json.loads(deep(MAX_DEPTH + 1))}}),
            too_deep,
        ),
        folder / "results_2027-01-03T00-00-00.000000.json": (
            "",
            "larger than 64 MiB, the most a results file is read at (lm_eval writes a few MB)",
        ),
    }
    for path, (text, _) in hostile.items():
        path.write_text(text)
    with open(folder / "results_2027-01-03T00-00-00.000000.json", "wb") as handle:
        handle.truncate(MAX_RESULTS_BYTES + 1)
    said = [f"{path}: not read: {why} (skipped)" for path, (_, why) in hostile.items()]
    data = tmp_path / "report.json"
    report = run_command("report", out, "--json", data)
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    assert report.stderr == "".join(f"lm-eval-stereo report: warning: {line}\n" for line in said)
    assert [model["label"] for model in json.loads(data.read_text())["models"]] == ["org/model", "org/other"]
    proc = export(out, tmp_path / "records", "--details")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"  skipped file: 3 warning(s): {', '.join(map(str, hostile))}\n" in proc.stderr
    assert all(f"  skipped file: {line}\n" in proc.stderr for line in said)
    assert sorted(records(tmp_path / "records")) == ["org/model", "org/other"]


def test_a_samples_line_nested_100000_levels_deep_is_a_malformed_line_named(tmp_path: Path):
    out = tmp_path / "out"
    save_run(out, "org/model", [1] * 14 + [0] * 6)
    save_run(out, "org/other", [1] * 8 + [0] * 12)
    samples = next((out / "org__other").glob("samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    lines[2] = deep(100_000)
    samples.write_text("\n".join(lines) + "\n")
    said = f"{samples}:3: not a JSON line (nested deeper than {MAX_DEPTH} levels (JSON that no lm_eval writes))"
    data = tmp_path / "report.json"
    report = run_command("report", out, "--json", data)
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    notes = json.loads(data.read_text())["paired"]["not_compared"]
    assert notes == [f"1 malformed line(s) of {samples} skipped ({said}): org/other on {TASK} compared on its other "
                     "19 items"]  # fmt: skip
    proc = export(out, tmp_path / "records", "--details")
    assert proc.returncode == 0, proc.stderr
    assert f"{TASK}: 1 malformed samples line(s) skipped ({said}): no distance CI" in proc.stderr


def test_every_logged_item_a_number_in_a_run_of_an_older_plugin_is_named(tmp_path: Path):
    """A StereoSet run of a plugin older than the recorded metadata (its task read by name) whose every logged item
    is a number: the export said only "no --log_samples items" and the report nothing; both now name the file and
    the line."""
    out = tmp_path / "out"
    save_run(out, "org/model", [1] * 14 + [0] * 6, recorded=False)
    samples = next(out.rglob("samples_*.jsonl"))
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    samples.write_text("".join(json.dumps({**line, "lms": 7}) + "\n" for line in lines))
    said = f"{samples}:1: the logged item under 'lms' is int, not an object (and 19 more malformed lines; no item read)"
    report = run_command("report", out, "--details")
    assert report.returncode == 0, report.stderr
    assert f"- Not compared: {said} (no paired statistics for org/model on {TASK})" in report.stdout
    proc = export(out, tmp_path / "records", "--details")
    assert proc.returncode == 0, proc.stderr
    assert f"  no per-item lines: {TASK}: samples file unreadable ({said}): no distance CI, no per-item lines" in (
        proc.stderr
    )


#: per task: what it records of its metric set, the fact of the wrong kind and what that fact must be
MALFORMED_FACTS = {
    "gest_en": ({"metric_set": "gest.scores", "facts": {"templates": 5}}, "facts.templates",
                "a list of prompt template names"),
    "eurogest_en": ({"metric_set": "eurogest.scores", "facts": {"min_sentences": "ten"}}, "facts.min_sentences",
                    "an integer >= 1"),
    "eurogest_de": ({"metric_set": "eurogest.scores", "facts": {"complete_only": "yes"}}, "facts.complete_only",
                    "true or false"),
    "rubia_gender": ({"metric_set": "rubia.shares", "facts": {"domain": ["gender"]}}, "facts.domain", "text"),
}  # fmt: skip


def test_a_recorded_fact_of_the_wrong_kind_is_named_by_its_field(tmp_path: Path):
    """A fact a plugin task records for its metric set, of the wrong kind (one task per fact, in one results file):
    named by file and ``configs.<task>.metadata`` before, with a raw error of the metric set's factory (or, for
    ``complete_only``, read as true); now by its field, in the report and the export."""
    out = tmp_path / "out"
    results = save_run(out, "org/model", [1] * 14 + [0] * 6)
    data = json.loads(results.read_text())
    said = []
    for task, (recorded, field, what) in MALFORMED_FACTS.items():
        metadata = {"version": 1.0, "key_field": "id", "language": task[-2:], "scoring": "x"} | recorded
        data["results"][task] = {"alias": task, "count,none": 20}
        data["configs"][task] = {"task": task, "metadata": metadata}
        value = recorded["facts"][field.removeprefix("facts.")]
        said.append(
            f"{results}: {task}: field configs.{task}.metadata.{field}: not {what}: the task's metric set cannot be "
            f"built; read as a task no benchmark declares (found {value!r})"
        )
    results.write_text(json.dumps(data))
    report = run_command("report", out, "--details")
    assert report.returncode == 0, report.stderr
    assert all(f"- ⚠ org/model: malformed field: {line}" in report.stdout for line in said), report.stdout
    proc = run_command("export", out, "--format", "model-card", "--details")
    assert proc.returncode == 0, proc.stderr
    assert all(f"  malformed field: {line}\n" in proc.stderr for line in said), proc.stderr
