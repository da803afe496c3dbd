"""Every file a command of the plugin writes is whole or absent, and only inside its folder (issue 60).

The disk faults run each command on a small file system the test mounts (a tmpfs of 2 MB, filled to the last byte, or
remounted read-only), as root can here. Where the test cannot mount one (not root), the same
commands run through :mod:`disk_faults`, which injects the ``OSError`` the kernel would raise (``ENOSPC``,
``EROFS``) into every file and folder opened for writing there; :attr:`Disk.mounted` says which a run used, and the
assertions are the same. Links planted at a record's or a page's path, or on the way to it, point outside the
output folder; the files they point to must stay as they were.

The runs are built by hand and saved by lm_eval's own ``EvaluationTracker`` (:mod:`saved_runs`): no model runs.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from lm_eval_runner import REPO, run_command, shared_data_dir
from saved_runs import save_run
from small_disk import CLI, Disk, contents

from lm_eval_stereo.core import sources

MODEL_ID = "org/model"


def one_error_line(proc: subprocess.CompletedProcess, prefix: str) -> str:
    """The single stderr line of a command that stopped (no traceback)."""
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"lm-eval-stereo {prefix}: error: "), lines[0]
    return lines[0]


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Two models' StereoSet runs with their logged samples (a record and a sidecar each)."""
    root = tmp_path / "runs"
    save_run(root, "org/model", [1] * 14 + [0] * 6)
    save_run(root, "org/other", [1] * 8 + [0] * 12)
    return root


def export(runs: Path, output: Path, *more: str) -> list[str]:
    return ["export", str(runs), "--format", "eee", "--output", str(output), "--model-id", MODEL_ID, *more]


def test_exporting_again_into_a_full_datastore_keeps_the_earlier_records_whole(runs: Path, disk: Disk):
    """The issue's case: the second export (another organisation: other bytes) finds the disk full. It ends in one
    line naming the record it could not write and why; every earlier record and sidecar is as it was, and no
    temporary file is left."""
    output = disk.root / "datastore"
    first = run_command(*export(runs, output))
    assert first.returncode == 0, first.stderr
    before = contents(output)
    assert len(before) == 4 and sum(name.endswith("_samples.jsonl") for name in before) == 2
    disk.fill()
    again = disk.run(*export(runs, output, "--organization", "someone-else"))
    line = one_error_line(again, "export")
    assert line.endswith(": cannot be written (No space left on device)"), line
    written = line.removeprefix("lm-eval-stereo export: error: ").removesuffix(
        ": cannot be written (No space left on device)"
    )
    assert written.removeprefix(str(output) + "/") in before, "the file named is a record or sidecar of the export"
    assert contents(output) == before, "every earlier record and sidecar whole, byte for byte"
    assert not [path for path in output.rglob("*") if path.name.endswith(".part")]


def test_an_export_into_a_read_only_datastore_stops_in_one_line(runs: Path, disk: Disk):
    output = disk.root / "datastore"
    assert run_command(*export(runs, output)).returncode == 0
    before = contents(output)
    disk.read_only()
    line = one_error_line(disk.run(*export(runs, output, "--organization", "someone-else")), "export")
    assert line == f"lm-eval-stereo export: error: argument --output: {output}: cannot write (Read-only file system)"
    assert contents(output) == before


def test_the_report_on_a_full_disk_keeps_the_earlier_page_and_figures(runs: Path, disk: Disk):
    """``--html`` and ``--json`` on a full disk: one line naming the file, the earlier page, figures and JSON whole."""
    html, data = disk.root / "html", disk.root / "report.json"
    first = run_command("report", runs, "--html", html, "--json", data)
    assert first.returncode == 0, first.stderr
    before = contents(disk.root)
    assert "index.html" in {Path(name).name for name in before} and any(name.endswith(".png") for name in before)
    disk.fill()
    proc = disk.run("report", runs, "--html", html, "--details")
    line = one_error_line(proc, "report")
    assert line.startswith(f"lm-eval-stereo report: error: {html}/") and line.endswith(
        ": cannot be written (No space left on device)"
    ), line
    proc = disk.run("report", runs, "--json", data)
    assert one_error_line(proc, "report") == (
        f"lm-eval-stereo report: error: {data}: cannot be written (No space left on device)"
    )
    assert contents(disk.root) == before
    assert not [path for path in disk.root.rglob("*.part")]


def test_data_fetch_and_mirror_on_a_full_disk_stop_at_the_first_file_naming_it(tmp_path: Path, disk: Disk):
    """``data fetch`` into a cache, and ``data mirror`` into a folder, on a full disk: the command stops at the first
    file in one line naming it and the reason (not one line per file), exit 1, and nothing is left in either."""
    mirror = {sources.DATA_DIR_ENV: str(shared_data_dir())}
    cache = tmp_path / "cache"
    fetched = run_cli_env(["data", "fetch", "--benchmarks", "s_jsd"], {**mirror, sources.CACHE_ENV: str(cache)})
    assert fetched.returncode == 0, fetched.stderr
    disk.fill()
    full_cache = disk.root / "cache"
    proc = disk.run("data", "fetch", "--benchmarks", "s_jsd", env={**mirror, sources.CACHE_ENV: str(full_cache)})
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"lm-eval-stereo data fetch: the download cache {full_cache} cannot hold {full_cache}/")
    assert "(No space left on device): point LM_EVAL_STEREO_CACHE at a writable directory" in lines[0]
    assert not [path for path in full_cache.rglob("*") if path.is_file()] if full_cache.exists() else True
    target = disk.root / "mirror"
    proc = disk.run("data", "mirror", target, "--benchmarks", "s_jsd", env={sources.CACHE_ENV: str(cache)})
    problems = [line for line in proc.stderr.splitlines() if line.startswith("lm-eval-stereo data mirror: ")]
    assert proc.returncode == 1 and len(problems) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert problems[0].startswith(f"lm-eval-stereo data mirror: {target}/")
    assert problems[0].endswith(": cannot be written (No space left on device); the mirror stops here")
    assert not [path for path in target.rglob("*") if path.is_file()] if target.exists() else True


def run_cli_env(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """``lm-eval-stereo ARGS`` with the test's own variables: a fresh process (a fork server for one run's
    environment would cost more than the imports it saves)."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=300)


def test_a_tiny_model_on_a_full_disk_is_one_line_and_no_folder(disk: Disk):
    disk.fill()
    proc = disk.run("build-tiny-model", disk.root / "model")
    line = one_error_line(proc, "build-tiny-model")
    assert line.startswith(f"lm-eval-stereo build-tiny-model: error: {disk.root / 'model'}: cannot be written (")
    assert "No space left on device" in line
    assert not (disk.root / "model").exists() and not list(disk.root.glob(".model.*"))


def test_a_link_planted_at_a_record_s_path_is_replaced_not_written_through(runs: Path, tmp_path: Path):
    """The issue's case: the export wrote through a link planted at a record's path, overwriting a file outside the
    output folder. Now the record replaces the link; the file outside keeps its bytes."""
    output = tmp_path / "datastore"
    assert run_command(*export(runs, output)).returncode == 0
    records = sorted(output.rglob("*.json"))
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    expected = {record: record.read_bytes() for record in records}
    for record in records:
        record.unlink()
        record.symlink_to(outside)
    proc = run_command(*export(runs, output))
    assert proc.returncode == 0, proc.stderr
    assert outside.read_text() == "precious"
    for record, data in expected.items():  # the same record but its retrieval time
        assert not record.is_symlink() and json.loads(record.read_bytes()).keys() == json.loads(data).keys()


def test_a_link_on_the_way_that_leads_outside_stops_the_export(runs: Path, tmp_path: Path):
    """A folder of the datastore layout planted as a link to a folder outside: the export stops in one line naming
    it, and writes nothing there."""
    output, elsewhere = tmp_path / "datastore", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (output / "data").mkdir(parents=True)
    (output / "data" / "lm-eval-stereo").symlink_to(elsewhere, target_is_directory=True)
    line = one_error_line(run_command(*export(runs, output)), "export")
    assert f"{output}/data/lm-eval-stereo leads to {elsewhere}, outside {output}: nothing is written there" in line
    assert list(elsewhere.iterdir()) == []


def test_the_report_replaces_a_link_planted_at_its_page(runs: Path, tmp_path: Path):
    """Links planted at the page's and the ``--json`` file's paths, to files outside: each file outside keeps its
    bytes, the page and the JSON replace the links."""
    html, outside, outside_json = tmp_path / "html", tmp_path / "outside.html", tmp_path / "outside.json"
    html.mkdir()
    outside.write_text("precious")
    outside_json.write_text("precious too")
    (html / "index.html").symlink_to(outside)
    (html / "report.json").symlink_to(outside_json)
    proc = run_command("report", runs, "--html", html, "--json", html / "report.json")
    assert proc.returncode == 0, proc.stderr
    assert outside.read_text() == "precious" and outside_json.read_text() == "precious too"
    data = html / "report.json"
    assert not data.is_symlink() and [model["label"] for model in json.loads(data.read_text())["models"]] == [
        "org/model",
        "org/other",
    ]
    page = html / "index.html"
    assert not page.is_symlink() and page.read_text(encoding="utf-8").rstrip().endswith("</html>")
    assert json.dumps("org/other")[1:-1] in page.read_text(encoding="utf-8")


#: a GEST run of SmolLM2 committed with docs/REAL_MODELS.md: its figure file is named after its task
GEST_RUN = REPO / "docs/real_models/results/real-runs-sample/smollm2/hf/results_2026-11-23T23-47-58.822981.json"


def test_a_figure_named_after_a_task_that_climbs_out_of_the_folder_is_refused(tmp_path: Path):
    """A results file whose task is named ``gest_en/../../../../escaped`` (GEST names a figure after its task): the
    report stops in one line naming the figure, and nothing is written outside ``--html``, where the name leads."""
    runs, html = tmp_path / "runs" / "model", tmp_path / "a" / "b" / "html"
    runs.mkdir(parents=True)
    climbing = json.dumps("gest_en/../../../../escaped")
    (runs / GEST_RUN.name).write_text(GEST_RUN.read_text(encoding="utf-8").replace('"gest_en"', climbing))
    line = one_error_line(run_command("report", runs, "--html", html), "report")
    assert line == (
        f"lm-eval-stereo report: error: {html}/gest_gest_en/../../../../escaped.png: cannot be written (not inside "
        f"{html}: nothing is written there)"
    )
    assert sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file()) == [
        f"runs/model/{GEST_RUN.name}"
    ]
