"""Faults survived, for real.

- An ``lm_eval`` run of the plugin's tasks (``stereoset_multi_en`` and ``gest_en`` with ``--use_cache``) is killed
  with SIGKILL once some of its requests are in lm_eval's request cache, then run again with the same ``--use_cache``:
  the second run reads the cache (the model is given exactly the requests that were not cached, fewer than an
  uninterrupted run gives it; counted by :mod:`lm_eval_counting`) and gives the uninterrupted run's metrics. With
  ``--model hf`` and with ``--model hf-prefix``.
- ``lm-eval-stereo report --html`` killed while writing its page (:mod:`report_killed_mid_write`) leaves the previous
  page whole; a second run replaces the half-written file with the whole new page.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
from lm_eval_counting import calls
from lm_eval_runner import (
    TESTS,
    LmEvalRun,
    assert_same_metrics,
    lm_eval_command,
    read_outputs,
    run_lm_eval,
    start_lm_eval,
)

from lm_eval_stereo.cli import main

TASKS = ("stereoset_multi_en", "gest_en")
LIMIT = 30
#: the run is killed once lm_eval's cache holds this many requests (of about 250)
KILL_AFTER = 30
COUNTING = TESTS / "lm_eval_counting.py"
KILLING = TESTS / "report_killed_mid_write.py"
RESULTS = TESTS / "fixtures" / "report_capability"


def lm_eval_args(model: str, pretrained: Path, cache: Path) -> list[str]:
    args = ["--model", model, "--model_args", f"pretrained={pretrained},dtype=float32", "--device", "cpu"]
    return [*args, "--batch_size", "1", "--tasks", ",".join(TASKS), "--limit", str(LIMIT), "--use_cache", str(cache)]


def cached_requests(cache: Path, writer_killed: bool = False) -> int:
    """Answers in lm_eval's request cache ``<cache>_rank0.db`` (a sqlitedict table; the plugin's record of whose
    answers they are is a table of its own), read while it may be written (read-only), or once its writer was killed (read-write:
    a transaction the kill cut off is rolled back, as the resumed run does, where a read-only reader finds the file
    locked)."""
    database = cache.with_name(f"{cache.name}_rank0.db")
    if not database.exists():
        return 0
    mode = "rw" if writer_killed else "ro"
    try:
        with closing(sqlite3.connect(f"file:{database}?mode={mode}", uri=True, timeout=0.1)) as connection:
            return connection.execute('SELECT COUNT(*) FROM "unnamed"').fetchone()[0]
    except sqlite3.OperationalError:  # the table is not there yet, or the writer holds the lock this instant
        return 0


@dataclass
class Interrupted:
    """An uninterrupted run, a run killed part way, and the run that resumed it from the cache."""

    fresh: LmEvalRun
    fresh_calls: int
    killed_status: int
    killed_outputs: dict
    cached_at_kill: int
    resumed: LmEvalRun
    resumed_calls: int


def kill_part_way(command: list[str], env: dict[str, str], folder: Path, cache: Path) -> int:
    """Start the run in a session of its own, SIGKILL it (its process group) once the cache holds ``KILL_AFTER``
    requests; its exit status."""
    process = start_lm_eval(command, env, folder, folder / "killed.log")
    deadline = time.monotonic() + 600
    while process.poll() is None and cached_requests(cache) < KILL_AFTER and time.monotonic() < deadline:
        time.sleep(0.02)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    return process.wait()


@pytest.fixture(scope="module", params=["hf", "hf-prefix"])
def interrupted(request: pytest.FixtureRequest, tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory):
    model, root = request.param, tmp_path_factory.mktemp(request.param)

    def counting(name: str) -> list[str]:
        return [sys.executable, str(COUNTING), str(root / f"{name}.calls")]

    fresh = run_lm_eval(
        lm_eval_args(model, tiny_causal, root / "fresh" / "lm"), root / "fresh", launcher=counting("fresh")
    )
    cache = root / "cache" / "lm"
    command, env = lm_eval_command(
        lm_eval_args(model, tiny_causal, cache), root / "killed", launcher=counting("killed")
    )
    status = kill_part_way(command, env, root / "killed", cache)
    cached_at_kill = cached_requests(cache, writer_killed=True)
    resumed = run_lm_eval(lm_eval_args(model, tiny_causal, cache), root / "resumed", launcher=counting("resumed"))
    return Interrupted(
        fresh,
        calls(root / "fresh.calls"),
        status,
        read_outputs(root / "killed")[0],
        cached_at_kill,
        resumed,
        calls(root / "resumed.calls"),
    )


def test_the_run_was_killed_part_way(interrupted: Interrupted):
    assert interrupted.killed_status == -signal.SIGKILL, "the run ended before it could be killed"
    assert 0 < interrupted.cached_at_kill < interrupted.fresh_calls
    assert interrupted.killed_outputs == {}, "a killed run writes no results"


def test_the_resumed_run_read_the_cache(interrupted: Interrupted):
    """lm_eval answered the cached requests; the model got only the others, fewer than in an uninterrupted run."""
    found = re.findall(r"Cached requests: (\d+), Requests remaining: (\d+)", interrupted.resumed.stderr)
    assert len(found) == 1, interrupted.resumed.stderr[-2000:]
    cached, remaining = map(int, found[0])
    assert cached >= interrupted.cached_at_kill and remaining == interrupted.resumed_calls
    assert cached + remaining == interrupted.fresh_calls
    assert 0 < interrupted.resumed_calls <= interrupted.fresh_calls - interrupted.cached_at_kill


def test_the_resumed_run_gives_the_uninterrupted_metrics(interrupted: Interrupted):
    """``hf``: the very same floats; ``hf-prefix``: within 1e-6, as its data-parallel runs (the resumed run packs the
    uncached requests' trees side by side with other trees than the uninterrupted run, which moves the last float
    bits: measured 2e-8 on g_s)."""
    one, two = interrupted.fresh.results, interrupted.resumed.results
    tolerance = 0.0 if one["config"]["model"] == "hf" else 1e-6
    for task in TASKS:
        assert (
            two["n-samples"][task]
            == one["n-samples"][task]
            == {"original": one["n-samples"][task]["original"], "effective": LIMIT}
        )
        assert assert_same_metrics(one["results"][task], two["results"][task], tolerance=tolerance) >= 10, task


def test_report_killed_while_writing_keeps_the_old_page_and_a_second_run_replaces_it(tmp_path: Path, capsys):
    html = tmp_path / "html"
    assert main(["report", str(RESULTS / "org__model-a"), "--html", str(html)]) == 0
    previous = (html / "index.html").read_text(encoding="utf-8")
    command = [sys.executable, str(KILLING), "report", str(RESULTS), "--html", str(html)]
    killed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert (html / "index.html").read_text(encoding="utf-8") == previous, "the previous page is whole"
    (left,) = html.glob(".index.html.*.part")
    half = left.read_text(encoding="utf-8")
    assert half and "</html>" not in half, "the killed run left a half-written page beside it, under another name"
    assert main(["report", str(RESULTS), "--html", str(html)]) == 0
    page = (html / "index.html").read_text(encoding="utf-8")
    assert page.startswith(half) and page.rstrip().endswith("</html>") and len(page) > 2 * len(half) - 2
    assert page != previous and "model-b" in page and "model-b" not in previous
    assert list(html.glob(".index.html.*.part")) == [left], "the second run left no file of its own behind"
    capsys.readouterr()
