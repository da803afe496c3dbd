"""The engine bench's worker processes (``bench/workers.py``, ``bench/engine_worker.py``): a worker whose model cannot
be built fails the bench with its log's last lines, and stopping it leaves no process of its session behind (the
bench stops what it started by PID, however it ends). No model is loaded: the setup names a backend lm_eval does not
have."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from model_server import session_cpu

from bench.workers import Worker, WorkerFailed


def session_alive(session: int) -> bool:
    """Whether any process of ``session`` is still running (read from ``/proc``)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            return True
    return False


def test_a_worker_that_cannot_build_its_model_fails_with_its_log_and_leaves_nothing_running(tmp_path):
    setups = [{"name": "broken", "model": "no-such-backend"}]
    worker = Worker(Path(sys.executable), setups, tmp_path / "model", tmp_path / "worker.log", {})
    session = worker.process.pid
    with worker, pytest.raises(WorkerFailed) as failed:
        worker.ready()
    message = str(failed.value)
    assert message.startswith("bench worker broken ended (1):") and "no-such-backend" in message
    assert worker.process.returncode == 1
    assert not session_alive(session) and session_cpu(session) == 0.0


def test_a_worker_that_ends_in_a_run_is_restarted_once_then_its_setup_is_failed_and_nothing_left_running(tmp_path):
    """The worker holds no model (no setups: it is ready at once); the command names a setup it does not hold, so it
    ends with a KeyError in every run, as a worker whose engine died ends: restarted once, the run made again, then
    the setup FAILED with the exception, and the other rounds skip it."""
    from bench.bench_engines import RESTARTS, Setup, interleaved

    worker = Worker(Path(sys.executable), [], tmp_path / "model", tmp_path / "worker.log", {})
    first_session = worker.process.pid
    with worker:
        worker.ready()
        runs, failed = interleaved([Setup(worker, {"backend": "hf"})], {"row": (["task"], 1)}, repetitions=2)
        second_session = worker.process.pid
    assert RESTARTS == 1 and worker.restarts == 1 and second_session != first_session
    assert runs == {}
    assert list(failed) == ["hf"]
    assert failed["hf"] == "warm-up of row: KeyError: 'hf' (log: worker.log)"
    assert (tmp_path / "worker.log").read_text().count("KeyError: 'hf'") == 2
    assert not session_alive(first_session) and not session_alive(second_session)


def test_a_replica_that_does_not_answer_fails_its_setups_with_its_log_and_the_reason(tmp_path):
    """A port nothing listens on (as a replica the OOM killer took): the bench's call to it raises the worker failure
    that shows its setups FAILED, naming the replica, its log's last lines and the refused connection."""
    import socket
    import types
    import urllib.request

    from bench.servers import answering

    with socket.socket() as probe:  # a free port, closed again: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "replica0.log"
    log.write_text("INFO engine started\nERROR EngineCore died\n")
    replica = types.SimpleNamespace(base=f"http://127.0.0.1:{port}", process=None, log=log)
    with pytest.raises(WorkerFailed) as failed:
        answering(replica, lambda: urllib.request.urlopen(f"{replica.base}/metrics", timeout=10))
    message = str(failed.value)
    assert message.startswith(f"vllm serve at http://127.0.0.1:{port} not answering (exit status None):")
    assert "ERROR EngineCore died" in message and message.splitlines()[-1].startswith("URLError: ")
