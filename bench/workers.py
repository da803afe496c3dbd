"""The bench's side of :mod:`bench.engine_worker`: a worker process started in a session of its own, its models built,
commanded one run at a time, and stopped by its PID (the whole session: the vLLM engine processes it started too)
however the bench ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# the tier's servers and CPU accounting (tests/), and the tools they find (scripts/): one definition for tests and bench
sys.path[:0] = [str(REPO / "tests"), str(REPO / "scripts")]
from model_server import session_cpu  # noqa: E402

#: the environment of every worker: offline, the plugin's tasks only (faster task building), vLLM's CPU KV cache
ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
       "LM_EVAL_STEREO_ONLY_PLUGIN_TASKS": "1", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
#: seconds a worker may take to end once its stdin is closed (its engines shut down) before it is killed
STOP_TIMEOUT = 120


def kill_session(pid: int) -> None:
    """SIGKILL to whatever is left of the process session (and group) that ``pid`` started."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class WorkerFailed(RuntimeError):
    """A worker ended or answered nothing: the message names it and ends with its log."""


class Worker:
    """One :mod:`bench.engine_worker` process of ``setups`` run by ``python``; its log (stderr, vLLM's included) in
    ``log``. :meth:`ready` waits for its models."""

    def __init__(self, python: Path, setups: list[dict], model: Path, log: Path, env: dict[str, str]) -> None:
        self.names = [setup["name"] for setup in setups]
        self.log = log
        self.command = [str(python), "-m", "bench.engine_worker", json.dumps(setups), str(model)]
        self.env = {**os.environ, **ENV, "PYTHONPATH": str(REPO), **env}
        self.restarts = 0
        self.start()

    def start(self) -> None:
        with open(self.log, "ab") as stderr:
            self.process = subprocess.Popen(self.command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=stderr, text=True, start_new_session=True,
                                            env=self.env)  # fmt: skip

    def restart(self) -> Worker:
        """What is left of the worker stopped, a new one started with the same setups and its models built: for a
        worker whose engine died (the machine's OOM killer takes the largest process, an engine of the bench's or of
        anything else running)."""
        self.stop()
        self.restarts += 1
        self.start()
        return self.ready()

    def answer(self) -> dict:
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line:
            self.process.wait(STOP_TIMEOUT)
            tail = self.log.read_text(errors="replace")[-4000:]
            raise WorkerFailed(f"bench worker {', '.join(self.names)} ended ({self.process.returncode}):\n{tail}")
        return json.loads(line)

    def ready(self) -> Worker:
        self.answer()
        return self

    def run(self, setup: str, row: str, tasks: list[str], limit: float) -> dict:
        """One ``simple_evaluate`` of ``row`` with ``setup``'s model (:func:`bench.engine_worker.run_once`)."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps({"setup": setup, "row": row, "tasks": tasks, "limit": limit}) + "\n")
            self.process.stdin.flush()
        except OSError:  # the worker has ended: answer() says how, with its log
            pass
        return self.answer()

    def cpu(self) -> float:
        """CPU-seconds so far of the worker's session (its engine processes included)."""
        return session_cpu(self.process.pid)

    def stop(self) -> None:
        """stdin closed (the worker shuts its engines down and ends), then whatever is left of its session killed."""
        if self.process.poll() is None:
            try:
                if self.process.stdin:
                    self.process.stdin.close()
                self.process.wait(STOP_TIMEOUT)
            except (OSError, subprocess.TimeoutExpired):
                pass
        kill_session(self.process.pid)
        self.process.wait(60)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
