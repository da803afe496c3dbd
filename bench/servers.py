"""The bench's ``vllm serve`` replicas (one, or two behind HAProxy): the vLLM tier's servers and balancer
(``tests/vllm_replicas.py``: the same HAProxy configuration, started and stopped by PID the same way), with the
flags the prefix cache needs (a small block size, the cached tokens in every answer), the plugin's vLLM plugin on
their path, ``/reset_prefix_cache`` open (``VLLM_SERVER_DEV_MODE=1``), and each replica's own environment (on the CPU
build: the core its engine is bound to; on GPUs: the GPU it sees)."""

from __future__ import annotations

import contextlib
import re
import sys
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.workers import REPO, WorkerFailed, kill_session

sys.path.insert(0, str(REPO / "tests"))  # the tier's servers and balancer: one definition for tests and bench
from vllm_replicas import Balancer, VllmServer  # noqa: E402

#: the plugin's entry point, as ``pip install`` writes it into a distribution's metadata
ENTRY_POINT = "[vllm.general_plugins]\nlm_eval_stereo = lm_eval_stereo.vllm_plugin:register\n"
#: vLLM's Prometheus counters that the bench reads: prompt tokens, those read from the prefix cache
COUNTERS = {"vllm:prompt_tokens_total": "prompt", "vllm:prefix_cache_hits_total": "cached"}


def installed_entry_point(vllm_binary: Path) -> bool:
    """Whether the lm-eval-stereo installed beside ``vllm_binary`` declares the plugin's vLLM plugin."""
    found = vllm_binary.parent.parent.glob("lib/python3*/site-packages/lm_eval_stereo-*.dist-info/entry_points.txt")
    return any("vllm.general_plugins" in path.read_text() for path in found)


def plugin_python_path(folder: Path, vllm_binary: Path) -> str:
    """A ``PYTHONPATH`` on which vLLM finds this tree's plugin: the tree first and, where the venv of
    ``vllm_binary`` was installed from a tree without the entry point, a distribution's metadata in ``folder`` that
    declares it (vLLM finds plugins by entry point only)."""
    if not installed_entry_point(vllm_binary):
        metadata = folder / "lm_eval_stereo_vllm_plugin-0.dist-info"
        metadata.mkdir(parents=True, exist_ok=True)
        (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: lm-eval-stereo-vllm-plugin\nVersion: 0\n")
        (metadata / "entry_points.txt").write_text(ENTRY_POINT)
    return f"{folder}:{REPO}"


class BenchServer(VllmServer):
    """``vllm serve`` of the bench: ``binary``, ``flags`` besides the model, host and port, ``env`` over the tier's."""

    name = "vllm serve (bench)"

    def __init__(self, model: Path, log: Path, binary: Path, flags: list[str], env: dict[str, str]) -> None:
        super().__init__(model, log)
        self.binary, self.flags = binary, flags
        self.env = {**self.env, **env}

    def command(self) -> list[str]:
        return [str(self.binary), "serve", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
                *self.flags]  # fmt: skip

    def counters(self) -> dict[str, float]:
        """Prompt tokens so far (``prompt``), those read from the prefix cache (``cached``), answered completions
        requests (``answered``)."""
        with urllib.request.urlopen(f"{self.base}/metrics", timeout=30) as response:
            text = response.read().decode()
        found = {"prompt": 0.0, "cached": 0.0}
        for name, value in re.findall(r"^([a-z_:]+)(?:\{[^}]*\})? (\S+)$", text, re.MULTILINE):
            if name in COUNTERS:
                found[COUNTERS[name]] += float(value)
        found["answered"] = float(self.answered())
        return found

    def reset_prefix_cache(self) -> None:
        request = urllib.request.Request(f"{self.base}/reset_prefix_cache", method="POST")
        urllib.request.urlopen(request, timeout=60).close()


@dataclass
class Serving:
    """The running replicas and, where there are several, their balancer; :attr:`url` is where a client sends."""

    replicas: list[BenchServer]
    balancer: Balancer | None = None

    @property
    def sessions(self) -> list[int]:
        """The process sessions of the replicas and the balancer (each started in a session of its own)."""
        servers = [*self.replicas, *([self.balancer] if self.balancer else [])]
        return [server.process.pid for server in servers if server.process is not None]

    def url(self, through_balancer: bool) -> str:
        base = self.balancer.base if through_balancer and self.balancer else self.replicas[0].base
        return f"{base}/v1/completions"

    def reset_prefix_cache(self) -> None:
        for replica in self.replicas:
            answering(replica, replica.reset_prefix_cache)

    def counters(self) -> list[dict[str, float]]:
        return [answering(replica, replica.counters) for replica in self.replicas]


def answering(replica: BenchServer, call: Callable[[], Any]) -> Any:
    """``call()`` to ``replica``; where it does not answer (it died: the OOM killer takes the largest process, a
    replica's engine among them), :class:`~bench.workers.WorkerFailed` naming it, its exit status and its log's last
    lines, so that the setups served by it are shown FAILED and the bench goes on."""
    try:
        return call()
    except OSError as error:
        status = replica.process.poll() if replica.process is not None else None
        tail = replica.log.read_text(errors="replace")[-2000:] if replica.log.exists() else ""
        raise WorkerFailed(f"vllm serve at {replica.base} not answering (exit status {status}):\n{tail}\n"
                           f"{type(error).__name__}: {error}") from error  # fmt: skip


@contextlib.contextmanager
def serving(
    model: Path, folder: Path, binary: Path, flags: list[str], replica_env: list[dict[str, str]], balancer: bool
) -> Iterator[Serving]:
    """One replica per entry of ``replica_env`` (its environment beside the plugin's path and dev mode), HAProxy in
    front where ``balancer``; all stopped by PID when the block ends, however it ends."""
    python_path = plugin_python_path(folder, binary)
    replicas = [
        BenchServer(
            model,
            folder / f"replica{n}.log",
            binary,
            flags,
            {"VLLM_SERVER_DEV_MODE": "1", "PYTHONPATH": python_path, **env},
        )  # fmt: skip
        for n, env in enumerate(replica_env)
    ]
    serving = Serving(replicas, Balancer(replicas, folder) if balancer else None)
    try:
        with ThreadPoolExecutor(len(replicas)) as starting:  # the replicas start side by side
            list(starting.map(BenchServer.start, replicas))
        if serving.balancer:
            serving.balancer.start()
        yield serving
    finally:
        for server in [*([serving.balancer] if serving.balancer else []), *replicas]:
            server.stop()
            if server.process is not None:
                kill_session(server.process.pid)  # whatever of its session outlived it
