"""An OpenAI-compatible model server (``transformers serve``, ``vllm serve``) run by the tests on a free loopback port:
started in a session of its own, healthy before it is used, killed (a server gone mid-run) or stopped at the end;
:meth:`ModelServer.posts` counts the requests of one endpoint it answered, from its access log."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from lm_eval_runner import free_port


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

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=log, env={**os.environ, **self.env}, start_new_session=True
            )
        deadline = time.monotonic() + self.health_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} ended ({self.process.returncode}):\n{self.log.read_text()[-5000:]}")
            try:
                with urllib.request.urlopen(f"{self.base}/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        self.kill()
        raise AssertionError(f"{self.name} not healthy after {self.health_timeout} s:\n{self.log.read_text()[-5000:]}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(60)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()

    def posts(self) -> int:
        """The answered requests of the endpoint that :attr:`marker` (an access-log fragment) names."""
        return self.log.read_text(errors="replace").count(self.marker)
