"""lm_eval's own files of a run, and its answer cache, whole or absent when the disk turns against the run (issue 60;
:mod:`lm_eval_stereo.core.lm_eval_files`, :mod:`lm_eval_stereo.core.answer_cache_faults`).

Every case runs ``lm_eval`` (the tiny seeded model, ``gest_en``) with its ``--output_path`` or ``--use_cache`` on a
small file system the test mounts (:mod:`small_disk`: a 2 MB tmpfs, filled to the last byte or to a few pages, or
remounted read-only; root can here). Where none can be mounted, the full-disk case runs the plugin's command through
:mod:`disk_faults`, which injects the kernel's ``OSError``; the cases that need a disk with room for some files and
not others, one that turns read-only while the run works, or SQLite's own writes (which no Python ``open`` makes)
need the mount.

- A full disk: no results file, no samples file, nothing of the staging folder left; lm_eval's table still printed,
  then one line naming the results file and the reason, exit status 2 (lm_eval: half a results file, exit 0).
- Room for the results but not the samples: the results file whole, no samples file, one line naming it (lm_eval:
  samples cut after a few items, exit 0).
- ``--output_path`` turned read-only while the run works (the stand-in server holds the first request until the disk
  is remounted): no file, one line (lm_eval: no results, exit 0); at ``--verbosity ERROR`` the reason is still named.
- A staging folder a killed run left is no run to the report.
- An answer cache on a disk that fills while the run works: one line naming the file at the answer that could not be
  stored, no trace; the answers stored before answer the same command once there is room, and its results equal a run
  without the cache. One in a read-only folder stops before the first request, named, whether it exists or not.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from lm_eval_runner import LM_EVAL_STEREO, LmEvalRun, lm_eval_command, run_command, run_lm_eval, start_lm_eval
from small_disk import Disk
from suite_tools import skip_reason

from lm_eval_stereo.core.answer_cache_faults import ADVICE
from lm_eval_stereo.results.files import DATE_ID

TASK = "gest_en"
#: bytes left on the disk where the results fit and the samples of :data:`MANY` documents do not (the results file of
#: ``gest_en`` is about 28 KB, its samples about 9 KB a document)
ROOM_FOR_RESULTS = 64 * 1024
MANY = 30
#: bytes left on the disk where the answer cache's probe fits and a few pages of answers more do not
ROOM_FOR_A_FEW_ANSWERS = 16 * 1024


def hf_args(tiny_causal: Path, limit: int, *more: str) -> list[str]:
    return ["--model", "hf", "--model_args", f"pretrained={tiny_causal}", "--tasks", TASK, "--limit", str(limit), *more]


def model_folder(tiny_causal: Path) -> str:
    from lm_eval.loggers.evaluation_tracker import sanitize_model_name

    return sanitize_model_name(str(tiny_causal))


def on_disk(disk: Disk, args: list[str], out: Path) -> LmEvalRun:
    """``lm_eval ARGS`` with ``--output_path out``; where the disk is not mounted, the plugin's command through
    :mod:`disk_faults`."""
    launcher = () if disk.mounted else disk.command()
    return run_lm_eval(args, out, launcher=launcher, check=False)


def needs_mount(disk: Disk) -> None:
    if not disk.mounted:
        # no Python open() shows this fault: only a real file system does
        pytest.skip(skip_reason("a file system the tests can mount"))


def last_line(run: LmEvalRun | subprocess.CompletedProcess) -> str:
    return run.stderr.strip().splitlines()[-1]


def files_below(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.name != "filler")


def test_a_full_disk_leaves_no_half_results_file_and_ends_in_one_line(disk: Disk, tiny_causal: Path):
    out = disk.root / "out"
    out.mkdir()
    disk.fill(leave=8 * 1024)  # room for a page of the results file, not for all of it
    run = on_disk(disk, hf_args(tiny_causal, 3, "--log_samples"), out)
    folder = out / model_folder(tiny_causal)
    assert run.returncode == 2, run.stderr[-3000:]
    assert re.fullmatch(
        rf"lm-eval-stereo: {re.escape(str(folder))}/results_{DATE_ID}\.json: cannot be written \(No space left on "
        r"device\); 1 more of this run's files could not be written either",
        last_line(run),
    ), last_line(run)
    assert files_below(out) == [], "no results file, no samples file, no staging folder"
    assert f"|{TASK}|" in run.stdout.replace(" ", ""), "lm_eval's table is still printed"
    assert "Traceback" not in run.stderr and "Could not save" not in run.stderr


def test_room_for_the_results_but_not_the_samples_keeps_the_results_whole(disk: Disk, tiny_causal: Path):
    needs_mount(disk)
    out = disk.root / "out"
    out.mkdir()
    disk.fill(leave=ROOM_FOR_RESULTS)
    run = on_disk(disk, hf_args(tiny_causal, MANY, "--log_samples"), out)
    folder = out / model_folder(tiny_causal)
    [results] = list(folder.glob("results_*.json"))
    date = results.name.removeprefix("results_").removesuffix(".json")
    assert run.returncode == 2 and last_line(run) == (
        f"lm-eval-stereo: {folder}/samples_{TASK}_{date}.jsonl: cannot be written (No space left on device)"
    ), run.stderr[-3000:]
    assert json.loads(results.read_text())["results"][TASK]["count,none"] == MANY, "the results file whole"
    assert files_below(out) == [folder.name, f"{folder.name}/{results.name}"]


def test_an_output_path_turned_read_only_while_the_run_works_is_one_line(disk: Disk, tiny_causal: Path, tmp_path):
    """The plugin's command checks ``--output_path`` before anything loads; the stand-in server holds the run's first
    request until the disk is remounted read-only. ``--verbosity ERROR`` hides lm_eval's own warning: the reason is
    named all the same."""
    from openai_stand_in import serve_stand_in

    needs_mount(disk)
    out = disk.root / "out"
    with serve_stand_in() as stand_in:
        stand_in.hold()
        model_args = f"model=stand-in-model,base_url={stand_in.base}/v1/completions,tokenizer={tiny_causal}"
        args = ["--model", "local-completions", "--model_args", model_args, "--tasks", TASK, "--limit", "2"]
        args += ["--log_samples", "--verbosity", "ERROR"]
        log = tmp_path / "run.log"
        command, env = lm_eval_command(args, out, executable=LM_EVAL_STEREO)
        process = start_lm_eval(command, env, tmp_path, log)
        try:
            assert stand_in.wait_for_request(timeout=300), log.read_text()[-3000:]
            disk.read_only()
            stand_in.release()
            status = process.wait(300)
        finally:
            stand_in.release()
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(60)
    text = log.read_text()
    folder = out / "stand-in-model"
    assert status == 2, text[-3000:]
    assert re.fullmatch(
        rf"lm-eval-stereo: {re.escape(str(folder))}/results_{DATE_ID}\.json: cannot be written \(Read-only file "
        r"system\); 1 more of this run's files could not be written either",
        text.strip().splitlines()[-1],
    ), text[-2000:]
    assert files_below(out) == [] and "Traceback" not in text


def test_a_staging_folder_a_killed_run_left_is_no_run_to_the_report(tmp_path: Path):
    from saved_runs import save_run

    from lm_eval_stereo.core.lm_eval_files import STAGE_NAME

    runs = tmp_path / "runs"
    save_run(runs, "org/model", [1] * 14 + [0] * 6)
    [results] = list(runs.rglob("results_*.json"))
    stage = results.parent / STAGE_NAME
    stage.mkdir()
    (stage / results.name).write_text(results.read_text())  # a run killed before its files were renamed into place
    report = tmp_path / "report.json"
    proc = run_command("report", runs, "--json", report)
    assert proc.returncode == 0 and STAGE_NAME not in proc.stdout + proc.stderr, proc.stderr
    read = {
        model["results_file"] for task in json.loads(report.read_text())["tasks"].values() for model in task.values()
    }
    assert read == {str(results)}


# --- the answer cache --------------------------------------------------------------------------------------------------


def answers_in(cache: Path) -> int:
    import sqlite3

    with sqlite3.connect(cache) as connection:
        count = connection.execute("SELECT COUNT(*) FROM unnamed").fetchone()[0]
    connection.close()
    return count


def test_an_answer_cache_on_a_disk_that_fills_keeps_what_it_stored_for_the_resumed_run(
    disk: Disk, tiny_causal: Path, tmp_path: Path
):
    needs_mount(disk)
    prefix = disk.root / "cache" / "requests"
    cache = Path(f"{prefix}_rank0.db")
    run_lm_eval([*hf_args(tiny_causal, 1), "--use_cache", str(prefix)], tmp_path / "first")
    assert answers_in(cache) == 4
    disk.fill(leave=ROOM_FOR_A_FEW_ANSWERS)
    args = [*hf_args(tiny_causal, MANY), "--use_cache", str(prefix)]
    stopped = run_lm_eval(args, tmp_path / "stopped", check=False)
    assert stopped.returncode == 2 and stopped.results == {}, stopped.stderr[-3000:]
    assert (
        last_line(stopped)
        == f"lm-eval-stereo: --use_cache: {cache} cannot be written (database or disk is full): {ADVICE}"
    )
    assert "Traceback" not in stopped.stderr and "sqlite3" not in stopped.stderr
    assert "Running loglikelihood requests" in stopped.stderr, "stopped while it scored, not before"
    stored = answers_in(cache)
    assert 4 < stored < 4 * MANY

    disk.empty()
    resumed = run_lm_eval(args, tmp_path / "resumed")
    assert f"Cached requests: {stored}, Requests remaining: {4 * MANY - stored}" in resumed.stderr
    uncached = run_lm_eval(hf_args(tiny_causal, MANY), tmp_path / "uncached")
    assert resumed.results["results"][TASK] == uncached.results["results"][TASK]


@pytest.mark.parametrize(
    ("existing", "reason"), [(True, "attempt to write a readonly database"), (False, "unable to open database file")]
)
def test_an_answer_cache_in_a_read_only_folder_stops_before_the_first_request(
    disk: Disk, tiny_causal: Path, tmp_path: Path, existing: bool, reason: str
):
    needs_mount(disk)
    prefix = disk.root / "cache" / "requests"
    (disk.root / "cache").mkdir()
    if existing:
        run_lm_eval([*hf_args(tiny_causal, 1), "--use_cache", str(prefix)], tmp_path / "first")
    disk.read_only()
    run = run_lm_eval([*hf_args(tiny_causal, 2), "--use_cache", str(prefix)], tmp_path / "out", check=False)
    assert run.returncode == 2 and run.results == {}, run.stderr[-3000:]
    assert last_line(run) == f"lm-eval-stereo: --use_cache: {prefix}_rank0.db cannot be written ({reason}): {ADVICE}"
    assert "Traceback" not in run.stderr and "Running loglikelihood requests" not in run.stderr


def test_concurrent_answers_to_a_cache_on_a_full_disk_end_in_one_line(disk: Disk, tiny_causal: Path, tmp_path: Path):
    """Two requests at once (``local-completions``, ``num_concurrent=2``, against the stand-in: well-formed answers):
    lm_eval stores each answer inside its retries, through asyncio; the first that cannot be stored ends the run, the
    answers still in flight are not stored, and neither lm_eval ("retrying") nor asyncio (a task's exception "never
    retrieved") adds a line after it."""
    from openai_stand_in import serve_stand_in

    needs_mount(disk)
    prefix = disk.root / "cache" / "requests"
    with serve_stand_in() as stand_in:
        model_args = f"model=stand-in-model,base_url={stand_in.base}/v1/completions,tokenizer={tiny_causal}"
        args = ["--model", "local-completions", "--model_args", f"{model_args},num_concurrent=2", "--tasks", TASK]
        run_lm_eval([*args, "--limit", "1", "--use_cache", str(prefix)], tmp_path / "first")
        disk.fill(leave=ROOM_FOR_A_FEW_ANSWERS)
        run = run_lm_eval([*args, "--limit", str(MANY), "--use_cache", str(prefix)], tmp_path / "out", check=False)
    cache = f"{prefix}_rank0.db"
    assert run.returncode == 2 and run.results == {}, run.stderr[-3000:]
    assert (
        last_line(run) == f"lm-eval-stereo: --use_cache: {cache} cannot be written (database or disk is full): {ADVICE}"
    )
    for noise in ("Traceback", "retrying", "never retrieved", "sqlite3"):
        assert noise not in run.stderr, noise


# --- in process: a caller of lm_eval's EvaluationTracker of its own ------------------------------------------------------


def tracker_of(output_path: Path):
    from lm_eval.loggers.evaluation_tracker import EvaluationTracker

    tracker = EvaluationTracker(output_path=str(output_path))
    tracker.general_config_tracker.log_experiment_args(
        model_source="hf", model_args="pretrained=org/model", system_instruction=None, chat_template=None,
        fewshot_as_multiturn=False,
    )  # fmt: skip
    return tracker


SAMPLE = {"doc_id": 0, "doc": {}, "target": "", "arguments": [["a", "b"]], "resps": [], "filtered_resps": []}


def test_samples_saved_twice_for_a_task_are_appended_as_lm_eval_appends_them(tmp_path: Path):
    tracker = tracker_of(tmp_path)
    tracker.save_results_aggregated(results={"results": {}}, samples=None)
    for doc_id in (0, 1):
        tracker.save_results_samples(task_name="t", samples=[{**SAMPLE, "doc_id": doc_id}])
    [file] = list((tmp_path / "org__model").glob("samples_t_*.jsonl"))
    assert [json.loads(line)["doc_id"] for line in file.read_text().splitlines()] == [0, 1]
    assert sorted(path.name for path in tmp_path.rglob("*")) == sorted(
        ["org__model", file.name, f"results_{tracker.date_id}.json"]
    ), "no staging folder left"


def test_a_caller_of_its_own_gets_the_failed_write_at_once(tmp_path: Path):
    from lm_eval_stereo.core.whole_files import WriteError

    (tmp_path / "org__model").write_text("a file where the model's folder goes")
    tracker = tracker_of(tmp_path)
    with pytest.raises(WriteError) as failed:
        tracker.save_results_aggregated(results={"results": {}}, samples=None)
    assert str(failed.value) == f"{tmp_path}/org__model/results_{tracker.date_id}.json: cannot be written (File exists)"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["org__model"]
