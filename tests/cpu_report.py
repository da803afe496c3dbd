"""CPU-seconds per test file, printed at the end of a run (a pytest plugin, loaded by ``conftest.py``).

A file's figure is the user + system time its tests took in the test process and in every process they started:
the process's own ``RUSAGE_SELF`` and ``RUSAGE_CHILDREN`` (children once reaped: ``lm_eval`` subprocesses,
``accelerate launch``, a server stopped), the children of the live :mod:`lm_eval_forkserver` servers (reaped by the
server, reported by it: :func:`lm_eval_runner.fork_servers_cpu`), the processes of the servers and engines running
now, read from ``/proc``, and those of a killed server that no one reaps (:func:`model_server.servers_cpu`). A test
is counted with what its fixtures did while it ran: a module fixture in its file, a session fixture (the SmolLM2
``hf`` runs, the vLLM engine's start) in the first file that asked for it, and a running server's work in the test
it served.

With xdist each worker measures its own files and sends them to the controller (``workeroutput``), which prints one
table: files by CPU-seconds, the tier of each (``engine``: :mod:`tiers`), the totals per tier, and each worker's
CPU-seconds outside any test (start-up, collection). On the idle 2-core machine ``make test`` (2 workers) takes about
the larger of (total ÷ 2) and the busiest worker's sum, in seconds. With ``LM_EVAL_TESTS_CPU_BUDGET=1`` (``make test``,
``make test-quick``) a file that took more than its share of its tier's budget by half fails the run, named after the
table (:mod:`cpu_budget`).

The controller also times a fixed Python loop (:func:`loop_seconds`, the CPU-seconds of its own thread) as the run
starts, every :data:`SPEED_INTERVAL` seconds while xdist's workers run the tests, and as it ends, and prints the
fastest, median and slowest time under the table: the machine's speed during the run. A shared host's speed varies
(on the 2-core machine a loop like it has taken from 1.0 to 2.0 times its fastest time from one minute to the next),
and every figure of the run with it, so two runs' figures compare only at like speeds.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass

import pytest
from cpu_budget import ENV as BUDGET_ENV
from cpu_budget import TIER_BUDGETS, over_budget
from lm_eval_runner import fork_servers_cpu
from model_server import servers_cpu
from tiers import ENGINE

#: the key under which a worker sends its figures to the controller
WORKER_OUTPUT = "cpu_per_file"
#: the steps of the fixed loop that gives the machine's speed (about 0.1 CPU-seconds on the 2-core machine)
SPEED_LOOP_STEPS = 3_000_000
#: seconds between two timings of the loop on an xdist controller
SPEED_INTERVAL = 20.0


def loop_seconds(steps: int = SPEED_LOOP_STEPS) -> float:
    """CPU-seconds this thread takes for a fixed loop of ``steps`` additions: the machine's speed now."""
    start, total = time.thread_time(), 0
    for step in range(steps):
        total += step
    return time.thread_time() - start


class SpeedSamples(threading.Thread):
    """:func:`loop_seconds` now, every :data:`SPEED_INTERVAL` seconds where ``repeat`` (an xdist controller, which
    runs no test: elsewhere the timings would count in the tests' CPU-seconds), and once more at :meth:`stop`."""

    def __init__(self, repeat: bool) -> None:
        super().__init__(name="cpu_report speed", daemon=True)
        self.seconds = [loop_seconds()]
        self.stopped = threading.Event()
        if repeat:
            self.start()

    def run(self) -> None:
        while not self.stopped.wait(SPEED_INTERVAL):
            self.seconds.append(loop_seconds())

    def stop(self) -> list[float]:
        """Every timing, the last one taken now."""
        self.stopped.set()
        if self.is_alive():
            self.join()
        return [*self.seconds, loop_seconds()]


def cpu_now() -> float:
    """CPU-seconds so far of this process and of every process it started (see the module docstring)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + fork_servers_cpu() + servers_cpu()


@dataclass
class FileCost:
    cpu: float = 0.0
    wall: float = 0.0
    tests: int = 0
    engine: bool = False

    def add(self, other: FileCost) -> None:
        self.cpu, self.wall, self.tests = self.cpu + other.cpu, self.wall + other.wall, self.tests + other.tests
        self.engine = self.engine or other.engine


class CpuReport:
    """The figures of one process (a worker, or a run without xdist) and, on the controller, the workers'."""

    def __init__(self) -> None:
        self.files: dict[str, FileCost] = defaultdict(FileCost)
        self.outside: dict[str, float] = {}  # worker id -> CPU-seconds outside any test
        self.over: list[str] = []  # the files over their share (cpu_budget), once judged
        self.speed: SpeedSamples | None = None  # on the controller
        self.loop_times: list[float] = []  # the speed loop's timings, once the run ended

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        start_cpu, start_wall = cpu_now(), time.monotonic()
        try:
            return (yield)
        finally:
            cost = self.files[item.nodeid.split("::", 1)[0]]
            cost.cpu += cpu_now() - start_cpu
            cost.wall += time.monotonic() - start_wall
            cost.tests += 1
            cost.engine = cost.engine or item.get_closest_marker(ENGINE) is not None

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.speed is not None:
            self.loop_times = self.speed.stop()
        if self.outside:  # the xdist controller, holding the workers' files: its own CPU, not its reaped workers'
            own = resource.getrusage(resource.RUSAGE_SELF)
            outside = own.ru_utime + own.ru_stime
        else:
            outside = cpu_now() - sum(cost.cpu for cost in self.files.values())
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: its figures go to the controller
            files = {name: asdict(cost) for name, cost in self.files.items()}
            workeroutput[WORKER_OUTPUT] = json.dumps({"files": files, "outside": outside})
            return
        self.outside.setdefault("this process", outside)
        if os.environ.get(BUDGET_ENV, "0") != "0":
            tiers = {name: (cost.cpu, ENGINE if cost.engine else "quick") for name, cost in self.files.items()}
            self.over = over_budget(tiers, loop_median=statistics.median(self.loop_times))
            if self.over and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        """On the xdist controller: a worker's figures (none where it crashed before sending them)."""
        sent = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if sent:
            figures = json.loads(sent)
            for name, cost in figures["files"].items():
                self.files[name].add(FileCost(**cost))
            self.outside[node.gateway.id] = figures["outside"]

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.files:
            return
        write = terminalreporter.write_line
        terminalreporter.section("CPU-seconds per test file (user + system, with the processes each started)")
        write(f"{'CPU s':>8} {'wall s':>8} {'tests':>5}  tier    file")
        for name, cost in sorted(self.files.items(), key=lambda entry: -entry[1].cpu):
            tier = ENGINE if cost.engine else "quick"
            write(f"{cost.cpu:8.1f} {cost.wall:8.1f} {cost.tests:5d}  {tier:<6}  {name}")
        for tier, engine in (("quick", False), (ENGINE, True)):
            total = sum(cost.cpu for cost in self.files.values() if cost.engine == engine)
            write(f"{total:8.1f} CPU-seconds: the {tier} tier's files (its budget: {TIER_BUDGETS[tier]:g})")
        for worker, seconds in sorted(self.outside.items()):
            write(f"{seconds:8.1f} CPU-seconds outside any test ({worker}: start-up, collection)")
        if self.loop_times:
            seconds = self.loop_times
            write(f"{min(seconds):8.2f} s fastest, {statistics.median(seconds):.2f} s median, {max(seconds):.2f} s "
                  f"slowest: a fixed Python loop of {SPEED_LOOP_STEPS:,} steps, timed {len(seconds)} times during the "
                  "run (the machine's speed: compare runs only at like speeds)")  # fmt: skip
        if self.over:
            terminalreporter.section("over their share of the tier's CPU budget (tests/cpu_budget.py)", red=True)
            for line in self.over:
                write(line)


def pytest_configure(config: pytest.Config) -> None:
    report = CpuReport()
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        report.speed = SpeedSamples(repeat=bool(getattr(config.option, "numprocesses", None)))
    config.pluginmanager.register(report, "cpu_report_figures")
