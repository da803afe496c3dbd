"""Run the real ``lm_eval`` console script in a process of its own and read back its results and samples.

The process is a child forked from a :mod:`lm_eval_forkserver` that has imported torch, transformers and lm_eval once
for the run's environment (:func:`run_lm_eval`, :func:`start_lm_eval`; the plugin's own command the same way:
:func:`run_command`; ``accelerate`` too, whose ranks are fresh processes all the same); ``LM_EVAL_TESTS_FORK=0`` runs a
fresh subprocess instead. Any other command (another venv's ``lm_eval``, say) always runs as a fresh subprocess."""

from __future__ import annotations

import contextlib
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

from tiers import starting

from lm_eval_stereo.hooks.tasks import ONLY_PLUGIN_TASKS_ENV

REPO = Path(__file__).resolve().parents[1]
#: the tests' folder: its helper modules, scripts and fixtures (the test files sit in folders below it)
TESTS = Path(__file__).resolve().parent
#: a model folder whose weights are larger than this is a real pretrained model (the seeded tiny models weigh KB)
REAL_MODEL_BYTES = 20_000_000


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
    program = list(launcher) or console_command(executable)
    engine = started_engine(args)
    if engine:
        starting(engine)
    output_dir.mkdir(parents=True, exist_ok=True)
    return [*program, *args, "--output_path", str(output_dir)], {
        **os.environ,
        ONLY_PLUGIN_TASKS_ENV: "1",
        **(env or {}),
    }


def started_engine(args: Sequence[str]) -> str | None:
    """What an ``lm_eval`` command line starts of the engine tier (:mod:`tiers`): a vLLM engine (``--model vllm...``)
    or a real pretrained model loaded in process (a ``pretrained=`` folder with more than :data:`REAL_MODEL_BYTES` of
    weights; an API model's ``model=`` folder gives only its name and tokenizer); None for the rest."""
    for flag, value in zip(args, args[1:]):
        if flag == "--model" and value.startswith("vllm"):
            return f"a vLLM engine (--model {value})"
    for arg in args:
        for part in arg.split(","):
            name, _, folder = part.partition("=")
            if name == "pretrained" and folder and Path(folder).is_dir():
                weights = sum(f.stat().st_size for f in Path(folder).iterdir() if f.suffix in (".safetensors", ".bin"))
                if weights > REAL_MODEL_BYTES:
                    return f"lm_eval on a real pretrained model ({folder})"
    return None


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
    """One :mod:`lm_eval_forkserver` process: ``lm_eval`` runs of one environment, forked after the imports;
    ``launcher``: the command that starts the server (and so every child) in the given way (:data:`UNPRIVILEGED`)."""

    def __init__(self, env: dict[str, str], launcher: Sequence[str] = ()) -> None:
        import tempfile

        self.folder = Path(tempfile.mkdtemp(prefix="lm_eval_forkserver_"))
        bin_dir = str(Path(sys.executable).parent)
        with open(self.folder / "server.log", "wb") as log:
            self.process = subprocess.Popen(
                [*launcher, sys.executable, str(Path(__file__).with_name("lm_eval_forkserver.py")), bin_dir],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=self.folder,
            )
        self.unread = b""
        try:
            ready = self.answer(600) or {}
        except RuntimeError:  # it ended before it was ready: every run is then a fresh process
            ready = {}
        self.ready = ready.get("ready", False)
        self.runs = 0
        #: one run at a time (a test may start runs from threads): the server serves them in turn
        self.lock = threading.Lock()
        #: CPU seconds (user + system) of the server's imports and of its children, which the caller's
        #: ``RUSAGE_CHILDREN`` sees only once the server has ended
        self.cpu = ready.get("cpu", 0.0)

    def answer(self, timeout: float) -> dict | None:
        """The server's next line within ``timeout`` seconds, else None (read from the pipe itself: two lines may
        arrive in one read)."""
        import select

        deadline = time.monotonic() + timeout
        while b"\n" not in self.unread:
            left = max(0.0, deadline - time.monotonic())
            if not select.select([self.process.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError(f"the lm_eval fork server ended (see {self.folder / 'server.log'})")
            self.unread += chunk
        line, self.unread = self.unread.split(b"\n", 1)
        return json.loads(line)

    def start(
        self, command: list[str], cwd: Path, env: dict[str, str], out: Path, err: Path, *, new_session: bool = False
    ) -> ForkedProcess:
        """``command`` (``lm_eval ...`` or ``python script.py ...``) in ``cwd``, its output in ``out`` and ``err``
        (in a session of its own with ``new_session``, as ``subprocess.Popen(start_new_session=True)``): the running
        child. The server serves one child at a time; the next start waits until this one has ended."""
        self.lock.acquire()
        try:
            self.runs += 1
            script = command[1] if command[0] == sys.executable else None
            request = {"argv": command[2:] if script else command[1:], "cwd": str(cwd), "env": env}
            request.update({"stdout": str(out), "stderr": str(err), "script": script, "new_session": new_session})
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
            started = self.answer(60)
            if started is None:
                raise RuntimeError(f"the lm_eval fork server did not start {command}")
        except BaseException:
            self.lock.release()
            raise
        return ForkedProcess(self, command, started["pid"])

    def run(self, command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
        """``command`` in ``cwd`` as :func:`subprocess.run` with ``capture_output=True, text=True`` would run it."""
        out, err = self.folder / "run.out", self.folder / "run.err"
        child = self.start(command, cwd, env, out, err)
        try:
            status = child.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):  # it may have ended this instant
                os.kill(child.pid, 9)
            child.wait(60)
            raise
        stdout, stderr = (path.read_text(errors="replace") for path in (out, err))
        return subprocess.CompletedProcess(command, status, stdout, stderr)

    def close(self) -> None:
        import shutil

        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)


class ForkedProcess:
    """A child of a :class:`ForkServer`, with what ``subprocess.Popen`` offers of it: ``pid``, ``poll``, ``wait``."""

    def __init__(self, server: ForkServer, command: list[str], pid: int) -> None:
        self.server, self.command, self.pid = server, command, pid
        self.returncode: int | None = None

    def _ended(self, timeout: float) -> int | None:
        if self.returncode is None:
            ended = self.server.answer(timeout)
            if ended is not None:
                self.server.cpu += ended["cpu"]
                self.returncode = ended["status"]
                self.server.lock.release()
        return self.returncode

    def poll(self) -> int | None:
        return self._ended(0)

    def wait(self, timeout: float = 3600) -> int:
        status = self._ended(timeout)
        if status is None:
            raise subprocess.TimeoutExpired(self.command, timeout)
        return status


#: the fork servers of this process, one per environment and launcher (see :func:`run_lm_eval`)
_servers: dict[tuple[frozenset, tuple[str, ...]], ForkServer] = {}
#: fork servers alive at once in one test process
MAX_SERVERS = 2
#: ``0``: every ``lm_eval`` run is a fresh subprocess (no fork server)
FORK_ENV = "LM_EVAL_TESTS_FORK"


#: variables that differ from one test to the next and that no import reads: pytest's current test name, the
#: plugin-only index's switch (read when lm_eval builds its TaskManager, in the child), and inductor's cache folder
#: (which torch writes into this process's environment, as its default, the first time anything asks for it, and reads
#: only when it compiles: without it here, every worker started a second server for the runs after that)
UNREAD_AT_IMPORT = frozenset({"PYTEST_CURRENT_TEST", ONLY_PLUGIN_TASKS_ENV, "TORCHINDUCTOR_CACHE_DIR"})


def read_at_import(name: str) -> bool:
    """Whether an import may read the variable ``name``, so that a run with another value needs a server of its own:
    not :data:`UNREAD_AT_IMPORT`, nor an API key (``*_API_KEY``: read when an API model is built, in the child, which
    gets the run's environment)."""
    return name not in UNREAD_AT_IMPORT and not name.endswith("_API_KEY")


def fork_server(env: dict[str, str], launcher: Sequence[str] = ()) -> ForkServer | None:
    """The server for ``env`` (started by ``launcher``), started at its first run: the imports see what a fresh
    process would see. None when its imports failed (then each run is a fresh process, which shows the error)."""
    key = (frozenset((name, value) for name, value in env.items() if read_at_import(name)), tuple(launcher))
    if key in _servers:  # the most recently used last: the one used longest ago goes first
        _servers[key] = _servers.pop(key)
    else:
        if not _servers:
            import atexit

            atexit.register(lambda: [server.close() for server in _servers.values()])
        if len(_servers) >= MAX_SERVERS:  # the one used longest ago goes (each holds torch and transformers in memory)
            _servers.pop(next(iter(_servers))).close()
        _servers[key] = ForkServer(env, launcher)
    return _servers[key] if _servers[key].ready else None


def fork_servers_cpu() -> float:
    """CPU-seconds of the live fork servers and of the children they reaped (:mod:`cpu_report`: a server that ends
    leaves :data:`_servers` as its figure enters this process's ``RUSAGE_CHILDREN``)."""
    return sum(server.cpu for server in _servers.values())


def server_for(command: list[str], env: dict[str, str], launcher: Sequence[str] = ()) -> ForkServer | None:
    """The fork server that runs ``command`` (the ``lm_eval`` console script, or a Python script run by this
    interpreter) with ``env`` (started by ``launcher``); None for any other command, with ``LM_EVAL_TESTS_FORK=0``, or
    when the server's imports failed."""
    lm_eval = command[0] == str(Path(sys.executable).parent / "lm_eval")
    script = len(command) >= 2 and command[0] == sys.executable and command[1].endswith((".py", *FORKED_SCRIPTS))
    if not (lm_eval or script) or os.environ.get(FORK_ENV, "1") == "0":
        return None
    return fork_server(env, launcher)


def start_lm_eval(command: list[str], env: dict[str, str], cwd: Path, log: Path) -> ForkedProcess | subprocess.Popen:
    """Start ``command`` (from :func:`lm_eval_command`) in a session of its own, stdout and stderr into ``log``: a
    child of the fork server where :func:`server_for` gives one, else a fresh process."""
    server = server_for(command, env)
    if server is not None:
        return server.start(command, cwd, env, log, log, new_session=True)
    with open(log, "wb") as out:
        return subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=out, start_new_session=True)


#: the plugin's own console script (``bin/lm-eval-stereo``: a Python script the fork server runs as one)
LM_EVAL_STEREO = "lm-eval-stereo"
#: console scripts of this environment run as Python scripts by the fork server: the plugin's own command, and
#: ``accelerate`` (its ``launch`` starts each rank as a fresh ``python -m lm_eval``, as it does when started fresh; the
#: launcher itself no longer imports torch again: 2 CPU-seconds a launch)
FORKED_SCRIPTS = (LM_EVAL_STEREO, "accelerate")
#: a launcher for a user without the right to bypass file permissions: where the tests run as root, without the
#: capabilities CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (``setpriv``, util-linux), so that a mode-000 file is
#: unreadable
UNPRIVILEGED = ("setpriv", "--bounding-set=-dac_override,-dac_read_search") if os.geteuid() == 0 else ()


def console_command(executable: str) -> list[str]:
    """The command line that starts this environment's console script ``executable``: its path, or ``python path``
    for one the fork server runs as a Python script (:data:`FORKED_SCRIPTS`)."""
    path = str(Path(sys.executable).parent / executable)
    return [sys.executable, path] if executable in FORKED_SCRIPTS else [path]


def run_command(
    *args: str | Path,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    launcher: Sequence[str] = (),
    script: Path | None = None,
    executable: str = LM_EVAL_STEREO,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """``lm-eval-stereo ARGS...`` (another console script: ``executable``; or ``python script ARGS...``) as
    :func:`subprocess.run` with ``capture_output=True, text=True`` would run it, in a child of a fork server started by
    ``launcher`` (e.g. :data:`UNPRIVILEGED`) with the environment of the ``lm_eval`` runs (:func:`lm_eval_command`,
    ``env`` added), which has imported what the command's ``lm_eval`` runs import."""
    program = [sys.executable, str(script)] if script else console_command(executable)
    command = [*program, *map(str, args)]
    full_env = {**os.environ, ONLY_PLUGIN_TASKS_ENV: "1", **(env or {})}
    folder = cwd or Path.cwd()
    server = server_for(command, full_env, launcher)
    if server is not None:
        return server.run(command, folder, full_env, timeout)
    # a script as ``python script``; a console script by its #! line
    fresh = command[1:] if not script and executable in FORKED_SCRIPTS else command
    return subprocess.run(
        [*launcher, *fresh], capture_output=True, text=True, env=full_env, cwd=folder, timeout=timeout
    )


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
    server = server_for(command, full_env)
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
