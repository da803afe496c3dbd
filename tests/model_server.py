"""An OpenAI-compatible model server (``transformers serve``, ``vllm serve``) run by the tests on a free loopback port:
started in a session of its own, healthy before it is used, killed (a server gone mid-run) or stopped at the end;
:meth:`ModelServer.posts` counts the requests of one endpoint it answered, from its access log. Starting one belongs to
the engine tier (:mod:`tiers`)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from lm_eval_runner import free_port
from tiers import starting

#: clock ticks per second of ``/proc/<pid>/stat``'s times
TICKS = os.sysconf("SC_CLK_TCK")
#: CPU-seconds of the processes of stopped servers that this process did not reap (see :func:`end_session`)
_unreaped = [0.0]
#: the sessions (their leaders' pids) of the servers running now: their CPU-seconds so far are read from ``/proc``
_live: set[int] = set()


def servers_cpu() -> float:
    """CPU-seconds of the servers' processes that ``RUSAGE_CHILDREN`` does not see (:mod:`cpu_report`): those of the
    running servers so far, and those of stopped servers that this process did not reap."""
    return _unreaped[0] + sum(session_cpu(session) for session in _live)


def started(process: subprocess.Popen) -> None:
    """A server started in a session of its own (``start_new_session=True``): counted by :func:`servers_cpu`."""
    _live.add(process.pid)


def end_session(process: subprocess.Popen, how: signal.Signals | None) -> None:
    """Send ``how`` to the whole session of ``process`` (None: it was asked to end otherwise) and reap it (SIGKILL
    after 60 s). The CPU-seconds of its processes that it did not reap itself (its engine processes orphaned by
    SIGKILL) stay in :func:`servers_cpu`: what ``/proc`` showed of the session before the signal, less what reaping
    it added to ``RUSAGE_CHILDREN``."""
    import resource

    if process.poll() is not None:
        _live.discard(process.pid)
        return
    before = session_cpu(process.pid)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    if how is not None:
        os.killpg(process.pid, how)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    _live.discard(process.pid)
    _unreaped[0] += max(0.0, before - (after.ru_utime + after.ru_stime - reaped.ru_utime - reaped.ru_stime))


def session_cpu(session: int) -> float:
    """CPU-seconds (user + system, with reaped children) of the live processes of one session, from ``/proc``."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[3]) == session:  # fields after the command: state, ppid, pgrp, session, ..., utime at 11
            total += sum(int(value) for value in fields[11:15])
    return total / TICKS


class ModelServer:
    """One server process of ``model``; a subclass gives its :meth:`command` and ``name``."""

    name = "server"

    def __init__(self, model: Path, log: Path, *, env: dict[str, str], marker: str, health_timeout: float) -> None:
        self.model, self.log, self.env, self.marker, self.health_timeout = model, log, env, marker, health_timeout
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    #: the path whose answer 200 means the server is ready
    health_path = "/health"

    def start(self) -> None:
        starting(self.name)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=log, env={**os.environ, **self.env}, start_new_session=True
            )
        started(self.process)
        deadline = time.monotonic() + self.health_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} ended ({self.process.returncode}):\n{self.log.read_text()[-5000:]}")
            try:
                with urllib.request.urlopen(f"{self.base}{self.health_path}", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        self.kill()
        raise AssertionError(f"{self.name} not healthy after {self.health_timeout} s:\n{self.log.read_text()[-5000:]}")

    def kill(self) -> None:
        self.end(signal.SIGKILL)

    def stop(self) -> None:
        self.end(signal.SIGTERM)

    def end(self, how: signal.Signals) -> None:
        """Send ``how`` to the server's whole session and reap it (:func:`end_session`)."""
        if self.process is not None:
            end_session(self.process, how)

    def posts(self) -> int:
        """The answered requests of the endpoint that :attr:`marker` (an access-log fragment) names."""
        return self.log.read_text(errors="replace").count(self.marker)
