"""One ``vllm serve`` replica against two behind HAProxy, on ``mbbq_en`` (``python -m bench.run replicas``; needs
``make vllm-venv`` and ``apt-get install haproxy``).

SmolLM2-135M-Instruct, float32, vLLM's CPU build: the replicas and the balancer are the vLLM tier's
(``tests/vllm_replicas.py``: the same flags, the same HAProxy configuration), started once and not timed.
``local-completions`` at ``num_concurrent`` :data:`CONCURRENT` sends ``mbbq_en``'s first :data:`LIMIT` items (three
requests each) to one replica directly, then to the balancer; each setup is one ``lm_eval`` process timed end to end,
median (min–max) of the repetitions after a warm-up, and requests per second over that time. ``worst``: the largest
difference of a request's log-likelihood from the one replica's.

Each replica is one engine process with one thread (``OMP_NUM_THREADS=1``); on a machine with C cores the two replicas
and lm_eval share them, so the ratio is bounded by the cores the engines get: at most 2 where two cores are free for
two engines, less where lm_eval's own work and other processes take a share. On two GPUs (one replica each) the
engines do not share a device; the ratio is then bounded by how well ``num_concurrent`` keeps both busy and by
lm_eval's client side (tokenising, HTTP), not by the cores.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench.bench_vllm import lm_eval
from bench.timing import REPETITIONS, cell, spread, timed
from lm_eval_stereo.local_models.real import SMOLLM2, materialise

REPO = Path(__file__).resolve().parents[1]
LIMIT, QUICK_LIMIT = 50, 5
CONCURRENT = 8


def measure(model: Path, limit: int, repetitions: int) -> list[dict]:
    sys.path.insert(0, str(REPO / "tests"))  # the tier's replicas and balancer, one definition for tests and bench
    from vllm_replicas import ENV, MAX_MODEL_LEN, Replicas

    dev_lm_eval = Path(sys.executable).parent / "lm_eval"
    os.environ.update(ENV)
    with tempfile.TemporaryDirectory() as folder:
        pair = Replicas(model, Path(folder))
        try:
            pair.start()
            bases = {"one replica": pair.servers[0].base, "two replicas behind HAProxy": pair.base}
            measured = {}
            for setup, base in bases.items():
                model_args = f"model={model},base_url={base}/v1/completions,tokenizer={model},"
                model_args += f"tokenizer_backend=huggingface,num_concurrent={CONCURRENT},max_length={MAX_MODEL_LEN}"
                args = ["--model", "local-completions", "--model_args", model_args, "--tasks", "mbbq_en"]
                args += ["--limit", str(limit)]
                before = pair.answered()
                measured[setup] = timed(lambda a=args: lm_eval(dev_lm_eval, a), repetitions)
                measured[setup] += ([after - was for after, was in zip(pair.answered(), before)],)
        finally:
            pair.stop()
    one_seconds, (_, one_values), _ = measured["one replica"]
    rows = []
    for setup, (seconds, (_, values), answered) in measured.items():
        rows.append({"setup": setup, "requests": len(values), "seconds": spread(seconds),
                     "requests_per_s": spread([len(values) / s for s in seconds]),
                     "ratio": statistics.median(one_seconds) / statistics.median(seconds),
                     "worst": max(abs(values[key] - value) for key, value in one_values.items()),
                     "answered_per_replica": answered})  # fmt: skip
    return rows


def run(quick: bool = False) -> dict:
    model = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    repetitions = 1 if quick else REPETITIONS
    rows = measure(model, QUICK_LIMIT if quick else LIMIT, repetitions)
    lines = [
        "## vLLM replicas: one `vllm serve` against two behind HAProxy",
        "",
        f"SmolLM2-135M-Instruct, float32, vLLM's CPU build, one thread per engine; `mbbq_en`, --limit "
        f"{QUICK_LIMIT if quick else LIMIT}, `local-completions` num_concurrent={CONCURRENT}. One `lm_eval` process per "
        f"setup, end to end, median (min–max) of {repetitions} runs after a warm-up; ratio: the one replica's seconds / "
        "these; worst: largest |log-likelihood - the one replica's|; answered: each replica's completions requests "
        "over all runs of the setup (its /metrics). The ratio is bounded by the cores the two engines get (at most 2); "
        "bench/bench_replicas.py says what it projects to on two GPUs.",
        "",
        "| setup | requests | seconds | requests/s | ratio | worst | answered per replica |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['setup']} | {r['requests']} | {cell(r['seconds'])} | {cell(r['requests_per_s'])} | {r['ratio']:.2f}x | "
        f"{r['worst']:.1e} | {' / '.join(map(str, r['answered_per_replica']))} |"
        for r in rows
    ]
    return {"markdown": "\n".join(lines) + "\n", "json": {"replicas": rows}}


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
