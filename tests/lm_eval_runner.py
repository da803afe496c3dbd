"""Run the real ``lm_eval`` console script in a subprocess and read back its results and samples."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lm_eval_stereo._autoload import ONLY_PLUGIN_TASKS_ENV

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port no process listens on now (``accelerate launch`` runs of parallel test workers must not share one)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def shared_data_dir() -> Path:
    """The offline mirror: ``$LM_EVAL_STEREO_DATA_DIR`` if set, else ``../shared/data`` beside the repository."""
    configured = os.environ.get("LM_EVAL_STEREO_DATA_DIR")
    return Path(configured) if configured else REPO.parent / "shared" / "data"


@dataclass
class LmEvalRun:
    returncode: int
    stdout: str
    stderr: str
    results: dict
    samples: dict[str, list[dict]]
    output_dir: Path

    def metric(self, task: str, name: str, filter_key: str = "none"):
        return self.results["results"][task][f"{name},{filter_key}"]


def lm_eval_command(
    args: list[str],
    output_dir: Path,
    *,
    executable: str = "lm_eval",
    launcher: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of ``executable args... --output_path output_dir`` (``launcher`` instead of
    the executable when given, e.g. a Python script that wraps lm_eval's command line).

    lm_eval indexes only the plugin's tasks and ``--include_path`` (``LM_EVAL_STEREO_ONLY_PLUGIN_TASKS=1``, about 10 s
    less start-up per run) unless ``env`` sets that variable: the discovery tests run the full index."""
    program = list(launcher) or [str(Path(sys.executable).parent / executable)]
    output_dir.mkdir(parents=True, exist_ok=True)
    return [*program, *args, "--output_path", str(output_dir)], {
        **os.environ,
        ONLY_PLUGIN_TASKS_ENV: "1",
        **(env or {}),
    }


def read_outputs(output_dir: Path) -> tuple[dict, dict[str, list[dict]]]:
    """The newest results file below ``output_dir`` and the samples beside it ({} when there is none)."""
    results: dict = {}
    samples: dict[str, list[dict]] = {}
    result_files = sorted(output_dir.rglob("results_*.json"), key=lambda p: p.stat().st_mtime)
    if result_files:
        results = json.loads(result_files[-1].read_text())
        for sample_file in result_files[-1].parent.glob("samples_*.jsonl"):
            task = sample_file.name[len("samples_") :].rsplit("_", 1)[0]
            samples[task] = [json.loads(line) for line in sample_file.read_text().splitlines() if line.strip()]
    return results, samples


class ForkServer:
    """One :mod:`lm_eval_forkserver` process: ``lm_eval`` runs of one environment, forked after the imports."""

    def __init__(self, env: dict[str, str]) -> None:
        import tempfile

        self.folder = Path(tempfile.mkdtemp(prefix="lm_eval_forkserver_"))
        bin_dir = str(Path(sys.executable).parent)
        with open(self.folder / "server.log", "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("lm_eval_forkserver.py")), bin_dir],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=self.folder,
            )
        self.unread = b""
        ready = self.answer(600)
        self.ready = ready.get("ready", False)
        self.runs = 0
        #: one run at a time (a test may start runs from threads): the server serves them in turn
        self.lock = threading.Lock()
        #: CPU seconds (user + system) of the server's imports and of its children, which the caller's
        #: ``RUSAGE_CHILDREN`` sees only once the server has ended
        self.cpu = ready.get("cpu", 0.0)

    def answer(self, timeout: float) -> dict:
        """The server's next line (read from the pipe itself: two lines may arrive in one read)."""
        import select

        deadline = time.monotonic() + timeout
        while b"\n" not in self.unread:
            left = deadline - time.monotonic()
            ready = left > 0 and select.select([self.process.stdout], [], [], left)[0]
            chunk = os.read(self.process.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                raise RuntimeError(f"no answer from the lm_eval fork server (see {self.folder / 'server.log'})")
            self.unread += chunk
        line, self.unread = self.unread.split(b"\n", 1)
        return json.loads(line)

    def run(self, command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
        """``command`` (``lm_eval ...`` or ``python script.py ...``) in ``cwd`` as :func:`subprocess.run` with
        ``capture_output=True, text=True`` would run it."""
        with self.lock:
            return self._run(command, cwd, env, timeout)

    def _run(self, command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
        self.runs += 1
        out, err = self.folder / f"{self.runs}.out", self.folder / f"{self.runs}.err"
        script = command[1] if command[0] == sys.executable else None
        argv = command[2:] if script else command[1:]
        request = {"argv": argv, "cwd": str(cwd), "stdout": str(out), "stderr": str(err), "env": env, "script": script}
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        pid = self.answer(60)["pid"]
        try:
            ended = self.answer(timeout)
        except RuntimeError:
            if self.process.poll() is None:
                os.kill(pid, 9)
                self.answer(60)
                raise subprocess.TimeoutExpired(command, timeout) from None
            raise
        self.cpu += ended["cpu"]
        stdout, stderr = (path.read_text(errors="replace") for path in (out, err))
        out.unlink()
        err.unlink()
        return subprocess.CompletedProcess(command, ended["status"], stdout, stderr)

    def close(self) -> None:
        import shutil

        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)


#: the fork servers of this process, one per environment (see :func:`run_lm_eval`)
_servers: dict[frozenset, ForkServer] = {}
#: fork servers alive at once in one test process
MAX_SERVERS = 2
#: ``0``: every ``lm_eval`` run is a fresh subprocess (no fork server)
FORK_ENV = "LM_EVAL_TESTS_FORK"


#: variables that differ from one test to the next and that no import reads (pytest's current test name)
UNREAD_AT_IMPORT = frozenset({"PYTEST_CURRENT_TEST"})


def fork_server(env: dict[str, str]) -> ForkServer | None:
    """The server for ``env``, started at its first run: the imports see what a fresh process would see. None when
    its imports failed (then each run is a fresh process, which shows the error)."""
    key = frozenset((name, value) for name, value in env.items() if name not in UNREAD_AT_IMPORT)
    if key not in _servers:
        if not _servers:
            import atexit

            atexit.register(lambda: [server.close() for server in _servers.values()])
        if len(_servers) >= MAX_SERVERS:  # the oldest goes (each holds torch and transformers in memory)
            _servers.pop(next(iter(_servers))).close()
        _servers[key] = ForkServer(env)
    return _servers[key] if _servers[key].ready else None


def run_lm_eval(
    args: list[str],
    output_dir: Path,
    *,
    executable: str = "lm_eval",
    launcher: Sequence[str] = (),
    env: dict[str, str] | None = None,
    check: bool = True,
    timeout: int = 900,
) -> LmEvalRun:
    """Run lm_eval (see :func:`lm_eval_command`) and parse the newest results/samples files.

    The ``lm_eval`` console script (no other ``executable``), or a ``launcher`` that is a Python script run by this
    interpreter, runs as a child forked from a :mod:`lm_eval_forkserver` started with the same environment, after the
    imports that take most of a small run's CPU time; ``LM_EVAL_TESTS_FORK=0`` runs it as a fresh subprocess."""
    command, full_env = lm_eval_command(args, output_dir, executable=executable, launcher=launcher, env=env)
    if launcher:
        forkable = len(launcher) >= 2 and launcher[0] == sys.executable and launcher[1].endswith(".py")
    else:
        forkable = executable == "lm_eval"
    forkable = forkable and os.environ.get(FORK_ENV, "1") != "0"
    server = fork_server(full_env) if forkable else None
    if server is not None:
        proc = server.run(command, output_dir, full_env, timeout)
    else:
        proc = subprocess.run(command, capture_output=True, text=True, env=full_env, timeout=timeout, cwd=output_dir)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
        )
    results, samples = read_outputs(output_dir)
    return LmEvalRun(proc.returncode, proc.stdout, proc.stderr, results, samples, output_dir)


def assert_same_metrics(one: dict, two: dict, *, tolerance: float = 1e-6) -> int:
    """Two results' metrics of one task agree: the same keys, finite floats within ``tolerance``, NaN where NaN, every
    other value equal (the alias aside). Returns how many finite floats were compared."""
    assert one.keys() == two.keys()
    compared = 0
    for key, value in one.items():
        if isinstance(value, float) and math.isfinite(value):
            assert two[key] == value or abs(two[key] - value) <= tolerance, (key, value, two[key])
            compared += 1
        elif key != "alias":
            assert two[key] == value or (value != value and two[key] != two[key]), (key, value, two[key])
    return compared
