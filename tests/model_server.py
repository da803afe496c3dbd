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
#: CPU-seconds of the processes of stopped servers that this process did not reap (see :meth:`ModelServer.end`)
_unreaped = [0.0]


def unreaped_cpu() -> float:
    """CPU-seconds of stopped servers' processes that ``RUSAGE_CHILDREN`` does not see (:mod:`cpu_report`)."""
    return _unreaped[0]


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
        """Send ``how`` to the server's whole session and reap it (SIGKILL after 60 s of SIGTERM). The CPU-seconds of
        its processes that the server itself did not reap (its engine processes orphaned by SIGKILL) are added to
        :func:`unreaped_cpu`: what ``/proc`` showed of the session before the signal, less what reaping the server
        added to ``RUSAGE_CHILDREN``."""
        import resource

        if self.process is None or self.process.poll() is not None:
            return
        before = session_cpu(self.process.pid)
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        os.killpg(self.process.pid, how)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(60)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        _unreaped[0] += max(0.0, before - (after.ru_utime + after.ru_stime - reaped.ru_utime - reaped.ru_stime))

    def posts(self) -> int:
        """The answered requests of the endpoint that :attr:`marker` (an access-log fragment) names."""
        return self.log.read_text(errors="replace").count(self.marker)
