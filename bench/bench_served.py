"""The generative suite through a served model against in-process ``hf`` (``make bench``; served models).

SmolLM2-135M-Instruct (real weights) served by ``transformers serve`` on a free loopback port, with and without its
``--continuous-batching``, reached by lm_eval's ``local-chat-completions`` with ``num_concurrent`` 1, 4 and 16, against
in-process ``hf --apply_chat_template`` (batch size 8): the greedy generative protocols (GEST-MT, KoBBQ and MBBQ
generation) on their first documents, ``max_gen_toks`` 16. Figures: requests per second and end-to-end seconds (task
building included) of one ``simple_evaluate``, median (min–max) of the repetitions after a warm-up; the ratio of
in-process seconds to served seconds (above 1: the served run is faster); and how many requests gave a text other than
the in-process run's.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.timing import REPETITIONS, cell, spread, timed
from lm_eval_stereo.local_models.real import SMOLLM2, materialise

REPO = Path(__file__).resolve().parents[1]
#: documents per task (--quick: fewer)
DOCUMENTS = {"gest_mt_cs": 8, "kobbq_gen": 4, "mbbq_gen_en": 4}
QUICK_DOCUMENTS = {"gest_mt_cs": 2, "kobbq_gen": 1, "mbbq_gen_en": 1}
MAX_GEN_TOKS = 16
CONCURRENCY = (1, 4, 16)
HEALTH_TIMEOUT = 600


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """A server process on a free loopback port (``command`` gives its command line for that port), healthy on
    entry, stopped on exit."""

    def __init__(self, command: Callable[[int], list[str]], name: str, env: dict[str, str] | None = None) -> None:
        self.port, self.name = free_port(), name
        self.process = subprocess.Popen(
            command(self.port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True
        )

    def __enter__(self) -> Served:
        deadline = time.monotonic() + HEALTH_TIMEOUT
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2):
                    return self
            except OSError:
                time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"{self.name} did not become healthy")

    def __exit__(self, *exc: Any) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(60)


def transformers_serve(model: Path, continuous_batching: bool) -> Served:
    """``transformers serve`` of ``model``, with or without its continuous batching."""

    def command(port: int) -> list[str]:
        command = [str(Path(sys.executable).parent / "transformers"), "serve", "--host", "127.0.0.1"]
        command += ["--port", str(port), "--device", "cpu", "--dtype", "float32"]
        return [*command, *(["--continuous-batching"] if continuous_batching else []), str(model)]

    return Served(command, "transformers serve")


def evaluate(model: str, model_args: str, documents: dict[str, int]) -> dict[tuple[str, int], str]:
    """``{(task, document): generated text}`` of one ``simple_evaluate`` run of the greedy tasks."""
    from lm_eval import simple_evaluate

    results = simple_evaluate(
        model=model,
        model_args=model_args,
        tasks=list(documents),
        samples={task: list(range(n)) for task, n in documents.items()},
        apply_chat_template=True,
        gen_kwargs=f"max_gen_toks={MAX_GEN_TOKS}",
        batch_size=8 if model == "hf" else 1,
        device="cpu",
        log_samples=True,
        bootstrap_iters=0,
    )
    return {
        (task, sample["doc_id"]): sample["resps"][0][0]
        for task, samples in results["samples"].items()
        for sample in samples
    }


def measure(model: Path, documents: dict[str, int], repetitions: int) -> list[dict]:
    requests = sum(documents.values())
    rows = []

    def row(label: str, seconds: list[float], texts: dict, reference: dict) -> dict:
        differing = sum(texts[key] != reference[key] for key in reference)
        return {"setup": label, "requests": requests, "seconds": spread(seconds),
                "requests_per_s": spread([requests / s for s in seconds]), "differing": differing}  # fmt: skip

    local_s, local = timed(lambda: evaluate("hf", f"pretrained={model},dtype=float32", documents), repetitions)
    rows.append(row("in-process hf (batch 8)", local_s, local, local))
    for continuous in (False, True):
        with transformers_serve(model, continuous) as server:
            url = f"http://127.0.0.1:{server.port}/v1/chat/completions"
            for concurrent in CONCURRENCY:
                args = f"model={model},base_url={url},tokenizer_backend=none,num_concurrent={concurrent}"
                served_s, texts = timed(lambda a=args: evaluate("local-chat-completions", a, documents), repetitions)
                label = f"served{', continuous batching' if continuous else ''}, num_concurrent={concurrent}"
                rows.append(row(label, served_s, texts, local))
    base = statistics.median(local_s)
    for entry in rows:
        entry["ratio"] = base / entry["seconds"]["median"]
    return rows


def run(quick: bool = False) -> dict:
    os.environ.setdefault("LM_EVAL_STEREO_ONLY_PLUGIN_TASKS", "1")
    model = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    documents = QUICK_DOCUMENTS if quick else DOCUMENTS
    repetitions = 1 if quick else REPETITIONS
    rows = measure(model, documents, repetitions)
    lines = [
        "## Served models: the generative suite through `transformers serve` vs in-process `hf`",
        "",
        f"SmolLM2-135M-Instruct (real weights), CPU; {', '.join(f'{t} {n}' for t, n in documents.items())} documents "
        f"(greedy protocols), max_gen_toks {MAX_GEN_TOKS}, `--apply_chat_template`. End-to-end seconds of one "
        f"`simple_evaluate` and requests per second, median (min–max) of {repetitions} runs after a warm-up; ratio: "
        "in-process seconds / these seconds (above 1: faster than in-process); differing: requests whose text is "
        "not the in-process run's.",
        "",
        "| setup | requests | seconds | requests/s | ratio | differing |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['setup']} | {r['requests']} | {cell(r['seconds'])} | {cell(r['requests_per_s'])} | "
        f"{r['ratio']:.2f}x | {r['differing']} |"
        for r in rows
    ]
    return {"markdown": "\n".join(lines) + "\n", "json": {"served": rows}}


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
