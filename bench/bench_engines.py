"""Every engine on the same documents (``make bench``; ``python -m bench.run --only PART[,PART]`` for some of them):
which backend is fastest here, and whether it gives hf's numbers.

SmolLM2-135M-Instruct (real weights), float32, CPU. Rows (:data:`ROWS`): the demo's log-likelihood mix (StereoSet,
GEST, GerBBQ+ MC, 0.2% of every task) and ``mbbq_en`` (its first 40 items, three requests each that share a context);
the served parts run ``mbbq_en`` alone (:data:`SERVED_ROWS`), so that the whole bench fits in about 45 minutes here.
Parts (:data:`~bench.engine_rows.PARTS`):

- ``hf``: ``hf`` and ``hf-prefix`` (batch size 16, one process sharing the weights);
- ``vllm``: in-process ``vllm`` and ``vllm-prefix`` (vLLM's CPU build, ``batch_size auto``), ``vllm-prefix`` also in
  lm_eval's order (longest request first) on the same engine, to see whether the dispatch order matters;
- ``vllm-serve``: ``local-completions`` and ``local-completions-prefix`` against one ``vllm serve`` that loads the plugin's
  vLLM plugin (block size 32, prompt-token details), at ``num_concurrent`` :data:`CONCURRENCY`;
- ``replicas``: the same through two such replicas behind HAProxy (the vLLM tier's balancer), one engine core each.

Each setup's model is built once (not timed) in a worker process (:mod:`bench.engine_worker`; vLLM lives in a venv
of its own); the in-process parts are measured together, and so are the served ones (``vllm-serve`` then talks to
the first replica directly), every setup's run interleaved with the others' in each repetition so that the machine's load
hits them alike. Per row: a warm-up, then :data:`~bench.timing.REPETITIONS` timed runs, every vLLM prefix cache
emptied before each. What a row gives, and the targets: :mod:`bench.engine_rows`. Every worker, engine, server and
balancer is stopped by its PID when the part ends, however it ends. ``hf``'s per-request numbers are kept in
``bench/out/`` (git-ignored), so that a part re-run alone is compared with them; without them ``hf`` runs first.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from bench import engine_rows
from bench.engine_rows import PARTS
from bench.servers import Serving, serving
from bench.timing import REPETITIONS
from bench.workers import REPO, Worker, WorkerFailed, session_cpu
from lm_eval_stereo.local_models.real import SMOLLM2, materialise

VLLM_BIN = REPO / ".cache" / "vllm-venv" / "bin"
OUT = REPO / "bench" / "out"
#: row -> (tasks, --limit); --quick: QUICK_ROWS
ROWS = {"demo mix": (["stereoset_multi", "gest_en", "gerbbq_mc"], 0.002), "mbbq_en": (["mbbq_en"], 40)}
QUICK_ROWS = {"demo mix": (["stereoset_multi_en", "gest_en"], 3), "mbbq_en": (["mbbq_en"], 5)}
CONCURRENCY = (1, 4, 16)
#: times a worker whose engine died is restarted (its run made again) before its setups are shown failed
RESTARTS = 1
CLIENTS = ("local-completions", "local-completions-prefix")
#: the rows the served parts run (12 setups each: the whole bench fits in about 45 minutes on 2 cores)
SERVED_ROWS = ("mbbq_en",)
#: the bench servers' flags beside the model: the CPU's smallest block size, the cached tokens in every answer
SERVER_FLAGS = ["--dtype", "float32", "--enforce-eager", "--max-model-len", "1024", "--block-size", "32",
                "--enable-prompt-tokens-details"]  # fmt: skip
#: each replica's engine on a core of its own (vLLM's default binds every engine to core 0 on this 2-core machine)
CPU_REPLICAS = [{"VLLM_CPU_OMP_THREADS_BIND": "0"}, {"VLLM_CPU_OMP_THREADS_BIND": "1"}]


class Setup:
    """One measured setup: its labels (``backend``, ``order``, ``num_concurrent``, ``replicas``), the worker that runs
    it, and the servers it talks to (none in process)."""

    def __init__(self, worker: Worker, labels: dict, served: Serving | None = None) -> None:
        self.worker, self.labels, self.served = worker, labels, served

    @property
    def name(self) -> str:
        return engine_rows.label(self.labels)

    def run(self, row: str, tasks: list[str], limit: float) -> dict:
        """One run (:meth:`Worker.run`) with the CPU-seconds of the client (and servers) and, served, the servers'
        counts of prompt tokens computed and read from the cache and each replica's answered requests."""
        if self.served:
            self.served.reset_prefix_cache()
            before, servers_cpu = self.served.counters(), sum(map(session_cpu, self.served.sessions))
        client_cpu = self.worker.cpu()
        run = self.worker.run(self.name, row, tasks, limit)
        run["cpu"] = {"client": self.worker.cpu() - client_cpu}
        if self.served:
            after = self.served.counters()
            run["cpu"]["servers"] = sum(map(session_cpu, self.served.sessions)) - servers_cpu
            prompt = sum(a["prompt"] - b["prompt"] for a, b in zip(after, before))
            cached = sum(a["cached"] - b["cached"] for a, b in zip(after, before))
            run["tokens"] = [int(prompt - cached), int(cached)]
            run["answered"] = [int(a["answered"] - b["answered"]) for a, b in zip(after, before)]
        return run


def interleaved(setups: list[Setup], rows: dict, repetitions: int) -> tuple[dict[tuple[str, str], list[dict]], dict]:
    """(setup, row) -> its timed runs: a warm-up, then ``repetitions`` rounds, each setup's run after the other's;
    and setup -> why it failed. A setup whose worker ends (an engine that died, a process the machine killed) gets
    its worker restarted once (:data:`RESTARTS`) and the run again; where it ends again, the setups of that worker are
    shown as failed and the others go on."""
    runs: dict[tuple[str, str], list[dict]] = {}
    failed: dict[str, str] = {}
    for repetition in range(repetitions + 1):
        for row, (tasks, limit) in rows.items():
            for setup in [s for s in setups if s.name not in failed]:
                when = "warm-up" if not repetition else f"run {repetition}"
                run = run_restarting(setup, row, tasks, limit, when)
                if isinstance(run, str):
                    failed.update({s.name: run for s in setups if s.worker is setup.worker})
                    continue
                print(f"   {time.strftime('%H:%M:%S')} {when}: {row}, {setup.name}: {run['seconds']:.1f} s "
                      f"(log-likelihood {run['ll_seconds']:.1f} s)", flush=True)  # fmt: skip
                if repetition:
                    runs.setdefault((setup.name, row), []).append(run)
    return runs, failed


def run_restarting(setup: Setup, row: str, tasks: list[str], limit: float, when: str) -> dict | str:
    """``setup``'s run of ``row``, its worker restarted and the run made again where the worker ended (at most
    :data:`RESTARTS` times a worker); else why it failed."""
    while True:
        try:
            return setup.run(row, tasks, limit)
        except WorkerFailed as ended:
            reason = f"{when} of {row}: {failure(str(ended))} (log: {setup.worker.log.name})"
            if setup.worker.restarts >= RESTARTS:
                print(f"   {time.strftime('%H:%M:%S')} {setup.name}: FAILED in the {reason}", flush=True)
                return reason
            print(f"   {time.strftime('%H:%M:%S')} {setup.name}: its worker ended in the {reason}; restarted, "
                  "the run made again", flush=True)  # fmt: skip
            try:
                setup.worker.restart()
            except WorkerFailed as again:
                reason = f"{when} of {row}: restarted, {failure(str(again))} (log: {setup.worker.log.name})"
                print(f"   {time.strftime('%H:%M:%S')} {setup.name}: FAILED in the {reason}", flush=True)
                return reason


def failure(message: str) -> str:
    """The exception a worker's log ends with (the last ``...Error: ...`` line), else the message's first line."""
    errors = [line for line in message.splitlines() if re.match(r"^[\w.]*(Error|Exception|Killed)\b", line)]
    return errors[-1][:300] if errors else message.splitlines()[0]


def in_process_setups(parts: Iterable[str], model: Path, logs: Path, stack: contextlib.ExitStack) -> list[Setup]:
    """The workers of the in-process parts, their models built side by side."""
    workers: list[tuple[Worker, list[dict]]] = []

    def start(python: Path, labels: list[dict], log: str) -> None:
        setups = [{**labels_, "name": engine_rows.label(labels_), "model": labels_["backend"]} for labels_ in labels]
        workers.append((stack.enter_context(Worker(python, setups, model, logs / log, {})), labels))

    if "hf" in parts:
        start(Path(sys.executable), [{"backend": "hf"}, {"backend": "hf-prefix"}], "hf.log")
    if "vllm" in parts:
        start(VLLM_BIN / "python", [{"backend": "vllm"}], "vllm.log")
        prefix = [{"backend": "vllm-prefix"}, {"backend": "vllm-prefix", "order": "by length"}]
        start(VLLM_BIN / "python", prefix, "vllm-prefix.log")
    for worker, _ in workers:
        worker.ready()
    return [Setup(worker, labels_) for worker, labels in workers for labels_ in labels]


def served_setups(parts: Iterable[str], model: Path, served: Serving, logs: Path, stack: contextlib.ExitStack,
                  python: Path, concurrency: tuple[int, ...] = CONCURRENCY) -> list[Setup]:  # fmt: skip
    """One client worker for every served setup: each client at each num_concurrent of ``concurrency``, against the
    first replica (``vllm-serve``) and through the balancer (``replicas``)."""
    labels = [
        {"backend": client, "num_concurrent": concurrent, "replicas": replicas}
        for replicas, part in ((0, "vllm-serve"), (2, "replicas"))
        if part in parts
        for client in CLIENTS
        for concurrent in concurrency
    ]
    setups = [{**these, "name": engine_rows.label(these), "model": these["backend"],
               "url": served.url(bool(these["replicas"])), "concurrency": these["num_concurrent"]}
              for these in labels]  # fmt: skip
    worker = stack.enter_context(Worker(python, setups, model, logs / "clients.log", {})).ready()
    return [Setup(worker, these, served) for these in labels]


def measure_parts(parts: list[str], model: Path, rows: dict, repetitions: int, logs: Path) -> dict[str, dict]:
    """part -> {measured, load, runs}: the in-process parts together, then the served ones together."""
    measured: dict[str, dict] = {}
    groups = [[p for p in parts if p in ("hf", "vllm")], [p for p in parts if p in ("vllm-serve", "replicas")]]
    for group in filter(None, groups):
        print(f"== engines: {', '.join(group)}", flush=True)
        load_before, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M")
        with contextlib.ExitStack() as stack:
            if group[0] in ("hf", "vllm"):
                setups = in_process_setups(group, model, logs, stack)
            else:
                replicas = CPU_REPLICAS if "replicas" in group else CPU_REPLICAS[:1]
                served = stack.enter_context(serving(model, logs, VLLM_BIN / "vllm", SERVER_FLAGS, replicas,
                                                     balancer="replicas" in group))  # fmt: skip
                setups = served_setups(group, model, served, logs, stack, Path(sys.executable))
            these_rows = rows if group[0] in ("hf", "vllm") else {r: v for r, v in rows.items() if r in SERVED_ROWS}
            runs, failed = interleaved(setups, these_rows, repetitions)
        load = [list(load_before), list(os.getloadavg())]
        for part in group:
            mine = [s for s in setups if part_of(s.labels) == part]
            measured[part] = {"measured": f"measured {started}", "load": load,
                              "runs": [(s.labels, row, runs.get((s.name, row), [])) for s in mine for row in these_rows],
                              "failed": {s.name: failed[s.name] for s in mine if s.name in failed}}  # fmt: skip
    return measured


def part_of(labels: dict) -> str:
    if labels.get("num_concurrent"):
        return "replicas" if labels.get("replicas") else "vllm-serve"
    return "hf" if labels["backend"].startswith("hf") else "vllm"


def reference_file(quick: bool) -> Path:
    return OUT / f"engines{'-quick' if quick else ''}-hf.json"


def hf_reference(measured: dict[str, dict], rows: dict, quick: bool) -> dict[str, dict]:
    """row -> hf's values, metrics and flagged documents: this run's, else those kept in ``bench/out`` for the same
    rows; written there when measured now."""
    path = reference_file(quick)
    if "hf" in measured:
        if "hf" in measured["hf"]["failed"]:
            raise RuntimeError(f"hf failed, nothing to compare with: {measured['hf']['failed']['hf']}")
        reference = {row: {key: runs[-1][key] for key in ("values", "metrics", "flagged")}
                     for labels, row, runs in measured["hf"]["runs"] if labels["backend"] == "hf"}  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"rows": rows, "reference": reference}))
        return reference
    kept = json.loads(path.read_text())
    return kept["reference"]


def needs_hf(parts: list[str], rows: dict, quick: bool) -> bool:
    """Whether ``hf`` must run for the other parts' comparison: no kept reference for these rows."""
    path = reference_file(quick)
    if not path.exists():
        return True
    return json.loads(path.read_text()).get("rows") != json.loads(json.dumps(rows))


def run(quick: bool = False, parts: list[str] | None = None, previous: dict | None = None) -> dict:
    """The selected ``parts`` (default: all) measured; their rows replace those of ``previous`` (this bench's last
    results), the others are kept."""
    if not (VLLM_BIN / "vllm").exists():
        return {"markdown": "## Every engine\n\nNot measured: no vLLM venv (`make vllm-venv`).\n", "json": {}}
    model = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    rows, repetitions = (QUICK_ROWS, 1) if quick else (ROWS, REPETITIONS)
    wanted = [p for p in PARTS if p in (parts or PARTS)]
    if "hf" not in wanted and needs_hf(wanted, rows, quick):
        print("== engines: no hf numbers kept for these rows (bench/out): hf runs first", flush=True)
        wanted.insert(0, "hf")
    kept = {part: value for part, value in (previous or {}).get("parts", {}).items() if part not in wanted}
    if previous and previous.get("rows") != json.loads(json.dumps(rows)):
        kept = {}  # other documents: not comparable
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as folder:
        logs = Path(folder)
        try:
            measured = measure_parts(wanted, model, rows, repetitions, logs)
        finally:
            keep_logs(logs, quick)
    keep_runs(measured, quick)
    reference = hf_reference(measured, rows, quick)
    fresh = {part: {"measured": value["measured"], "load": value["load"],
                    "rows": [engine_rows.summarise({"row": row, **labels}, runs, reference[row])
                             if runs else {"row": row, **labels, "failed": value["failed"][engine_rows.label(labels)]}
                             for labels, row, runs in value["runs"]]}
             for part, value in measured.items()}  # fmt: skip
    every = {**kept, **fresh}
    all_rows = [row for part in PARTS if part in every for row in every[part]["rows"]]
    all_rows.sort(key=lambda r: list(rows).index(r["row"]))
    described = "; ".join(f"{row} ({', '.join(tasks)}, --limit {limit})" for row, (tasks, limit) in rows.items())
    described += f"; the served setups on {', '.join(r for r in rows if r in SERVED_ROWS)} only"
    text = engine_rows.markdown(all_rows, every, described, repetitions)
    return {"markdown": text, "json": {"rows": rows, "repetitions": repetitions, "parts": every}}


def keep_runs(measured: dict[str, dict], quick: bool) -> None:
    """Every timed run of this invocation (its seconds, tokens, cores and answers per replica; not the per-request
    numbers) in ``bench/out/engines[-quick]-runs.json``, beside the rows they were summarised into."""
    runs = {part: {**value, "runs": [(labels, row, [{k: v for k, v in run.items() if k not in ("values", "metrics")}
                                                    for run in these]) for labels, row, these in value["runs"]]}
            for part, value in measured.items()}  # fmt: skip
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"engines{'-quick' if quick else ''}-runs.json").write_text(json.dumps(runs, indent=1) + "\n")


def keep_logs(logs: Path, quick: bool) -> None:
    """The workers' and servers' logs of this run copied to ``bench/out/engines[-quick]-logs``."""
    import shutil

    target = OUT / f"engines{'-quick' if quick else ''}-logs"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(logs, target, ignore=shutil.ignore_patterns("*.dist-info"))


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
