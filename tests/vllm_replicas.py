"""``vllm serve`` on vLLM's CPU build (the vLLM venv, ``make vllm-venv``) and the served vLLM tests' pair of replicas
behind a real load balancer, HAProxy from Debian, all on loopback ports and stopped at the end of the session.

HAProxy rather than vLLM's own router (``vllm-router`` on PyPI): it is what a cluster puts in front of OpenAI-compatible
servers (NeMo Evaluator ships it before vLLM replicas), it comes from the distribution as chromium does for the report
tests (``.ci/run`` installs both), and its health checks, ``retries``, ``option redispatch`` and ``retry-on`` are the
fault handling the tests exercise: a replica that stops answering is taken out within a second, and a request that
met a dead replica is sent again to the other one, so lm_eval sees one answer per request.

:class:`Replicas` is one pair for every served test of the vLLM tier: ``vllm_tier.vllm_replicas`` (a session fixture)
starts it once per xdist worker, and ``conftest.py`` schedules every ``test_vllm*.py`` file on one worker, so
every served test, ``local-completions-prefix``'s among them, uses the same engines. :data:`SERVE_FLAGS` is the one
list of ``vllm serve`` flags they run with: a test that needs another flag on every replica adds it there. Every
replica loads the plugin's vLLM plugin (:func:`plugin_path`), which changes nothing until a request opts in.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

from lm_eval_runner import REPO
from model_server import ModelServer
from suite_tools import which

VLLM_BIN = REPO / ".cache" / "vllm-venv" / "bin"
#: the engine's CPU KV cache (GiB: the default takes a share of the machine's memory) and one thread per process
ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1", "OPENAI_API_KEY": "sk-vllm-tier"}
MAX_MODEL_LEN = 1024
#: every replica's flags besides the model, host and port: float32, eager, the tier's window; the CPU's smallest block
#: size and the cached-token counts in every answer's usage (``local-completions-prefix``'s tests)
SERVE_FLAGS = ("--dtype", "float32", "--enforce-eager", "--max-model-len", str(MAX_MODEL_LEN), "--block-size", "32",
               "--enable-prompt-tokens-details")  # fmt: skip
HEALTH_TIMEOUT = 600
COMPLETIONS_POST = '"POST /v1/completions HTTP/1.1" 200'
#: HAProxy from Debian (``make test-tools``); None where it is not installed
HAPROXY = which("haproxy")
#: the plugin's vLLM plugin, as ``pip install`` writes its entry point into a distribution's metadata
ENTRY_POINT = "[vllm.general_plugins]\nlm_eval_stereo = lm_eval_stereo.vllm_plugin:register\n"


def installed_entry_point() -> bool:
    """Whether the vLLM venv's installed lm-eval-stereo declares the plugin (a venv installed from a tree with it)."""
    found = VLLM_BIN.parent.glob("lib/python3*/site-packages/lm_eval_stereo-*.dist-info/entry_points.txt")
    return any("vllm.general_plugins" in path.read_text() for path in found)


def plugin_path(folder: Path) -> str:
    """A server's ``PYTHONPATH``: this tree first, and, where the vLLM venv was installed from a tree without the
    plugin's entry point, a distribution's metadata in ``folder`` that declares it (vLLM finds plugins by entry point
    only)."""
    if not installed_entry_point():
        metadata = folder / "lm_eval_stereo_vllm_plugin-0.dist-info"
        metadata.mkdir(exist_ok=True)
        (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: lm-eval-stereo-vllm-plugin\nVersion: 0\n")
        (metadata / "entry_points.txt").write_text(ENTRY_POINT)
    return f"{folder}:{REPO}"


class VllmServer(ModelServer):
    """``vllm serve`` of one model folder; :meth:`posts` counts the completions requests it answered (its access
    log), :meth:`answered` the requests of an endpoint its ``/metrics`` counts. ``served_names``: vLLM's
    ``--served-model-name`` (the first is the ``model`` of every answer)."""

    name = "vllm serve"

    def __init__(self, model: Path, log: Path, served_names: tuple[str, ...] = ()) -> None:
        env = {**ENV, "PYTHONPATH": plugin_path(log.parent)}
        super().__init__(model, log, env=env, marker=COMPLETIONS_POST, health_timeout=HEALTH_TIMEOUT)
        self.served_names = served_names

    def command(self) -> list[str]:
        command = [str(VLLM_BIN / "vllm"), "serve", str(self.model), "--host", "127.0.0.1", "--port", str(self.port)]
        names = ["--served-model-name", *self.served_names] if self.served_names else []
        return [*command, *SERVE_FLAGS, *names]

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def metrics(self) -> str:
        """The server's Prometheus ``/metrics``."""
        with urllib.request.urlopen(f"{self.base}/metrics", timeout=30) as response:
            return response.read().decode()

    def hits(self) -> float:
        """The prefix-cache hits so far (tokens read from the cache: ``vllm:prefix_cache_hits_total``)."""
        lines = self.metrics().splitlines()
        return sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("vllm:prefix_cache_hits_total"))

    def answered(self, handler: str = "/v1/completions") -> int:
        """Successful requests of ``handler`` so far, from the server's Prometheus ``/metrics``
        (``http_requests_total``)."""
        text = self.metrics()
        pattern = (
            rf'^http_requests_total\{{(?=[^}}]*handler="{re.escape(handler)}")(?=[^}}]*status="2xx")[^}}]*\}} (\S+)$'
        )
        return int(sum(float(value) for value in re.findall(pattern, text, re.MULTILINE)))


class Balancer(ModelServer):
    """HAProxy in front of ``replicas``: round robin, health checks on ``/health`` every second (a replica is out after
    two failed checks, each allowed 5 s: a loaded machine answers slowly, a dead replica refuses at once), a request
    that met a dead replica sent again (``retry-on``) to another one (``option redispatch``), its own liveness at
    :attr:`health_path` (answered by HAProxy itself)."""

    name = "haproxy"
    health_path = "/balancer-health"

    def __init__(self, replicas: list[VllmServer], folder: Path) -> None:
        super().__init__(folder, folder / "haproxy.log", env={}, marker="", health_timeout=30)
        self.replicas = replicas

    def config(self) -> str:
        servers = "".join(f"    server replica{n} 127.0.0.1:{r.port}\n" for n, r in enumerate(self.replicas))
        return f"""global
    maxconn 256
    # a request is replayed only while it is held whole in one buffer: a log-likelihood request of {MAX_MODEL_LEN}
    # token ids is a few kB
    tune.bufsize 262144
defaults
    mode http
    timeout connect 2s
    timeout check 5s
    timeout client 10m
    timeout server 10m
    retries 3
    option redispatch 1
    option http-buffer-request
    retry-on conn-failure empty-response response-timeout 502 503 504
frontend replicas_front
    bind 127.0.0.1:{self.port}
    monitor-uri {self.health_path}
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /health
    http-check expect status 200
    default-server check inter 1s fall 2 rise 2
{servers}"""

    def command(self) -> list[str]:
        path = self.model / "haproxy.cfg"
        path.write_text(self.config())
        return [HAPROXY, "-db", "-f", str(path)]


class Replicas:
    """Two ``vllm serve`` replicas of one model behind a :class:`Balancer`."""

    def __init__(self, model: Path, folder: Path) -> None:
        self.model, self.folder = model, folder
        self.servers = [VllmServer(model, folder / f"replica{n}.log") for n in range(2)]
        self.balancer = Balancer(self.servers, folder)

    @property
    def base(self) -> str:
        return self.balancer.base

    def start(self) -> None:
        for server in self.servers:
            server.start()
        self.balancer.start()

    def ready(self, both: bool = True) -> Replicas:
        """Both replicas (or, ``both=False``, at least one) serving the model under its own name and the balancer
        up: whatever a test before killed or restarted as another model is started again, nothing else."""
        for server in self.servers:
            if server.served_names:
                self.restart(server)
        if not any(server.alive() for server in self.servers) or both:
            for server in self.servers:
                if not server.alive():
                    self.restart(server)
        if self.balancer.process is None or self.balancer.process.poll() is not None:
            self.balancer.start()
        return self

    def restart(self, server: VllmServer, served_names: tuple[str, ...] = ()) -> None:
        """``server`` stopped and started again on its port, as ``served_names`` (the model's folder by default)."""
        server.stop()
        server.served_names = served_names
        server.start()

    def answered(self, handler: str = "/v1/completions") -> list[int]:
        """Each replica's count of ``handler``'s successful requests (0 for one that is not running)."""
        return [server.answered(handler) if server.alive() else 0 for server in self.servers]

    def stop(self) -> None:
        self.balancer.stop()
        for server in self.servers:
            server.stop()
