"""Precision drift on SmolLM2-135M-Instruct: the same documents scored in float32 and in bfloat16.

``stereoset_multi_en`` and ``gest_en``, the first ``LIMIT`` documents of each (``BENCH_PRECISION_LIMIT``, default
200; ``--quick``: 20), through ``lm_eval.simple_evaluate`` with ``log_samples``, once per backend
(``BENCH_PRECISION_BACKENDS``, default ``hf-prefix``; ``hf-prefix,hf`` adds ``hf``, about 2.5 times slower on a CPU)
and dtype (the model loaded with ``dtype=float32``, then
``dtype=bfloat16``). Against the float32 run of the same backend:

- per request: the |Δ| of every log-likelihood (max, mean, p95), per task;
- judgements: StereoSet's preferred candidate (the highest of the three normalised scores) and its
  stereotype-over-anti-stereotype judgement (what SS counts) and its related judgements (stereotype and
  anti-stereotype over unrelated, what LMS counts); GEST's sign per item and template (what g_s aggregates);
- headlines: LMS, SS, ICAT (pooled) and g_s (and per template), bfloat16 minus float32.

The drift is deterministic (same weights, same inputs, same kernels): one run per dtype measures it; no repetitions.
The wall time of each run is shown for information (one run, not a timing). On a CPU bfloat16 matmuls are computed by
the CPU's bfloat16 kernels (emulated through float32 where it has no native bfloat16 instructions), so the drift shown
is the rounding of weights and activations to bfloat16, not a GPU's numbers to the last digit.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TASKS = ["stereoset_multi_en", "gest_en"]
LIMIT = int(os.environ.get("BENCH_PRECISION_LIMIT", "200"))
QUICK_LIMIT = 20
BACKENDS = [b for b in os.environ.get("BENCH_PRECISION_BACKENDS", "hf-prefix").split(",") if b]
DTYPES = ("float32", "bfloat16")
BATCH_SIZE = 16
#: StereoSet's candidate labels, GEST's item field of per-template scores
STEREOSET_LABELS = ("stereotype", "anti-stereotype", "unrelated")
#: headline metrics compared, per task family (task name prefix -> metric names, and gs_t* found in the results)
HEADLINES = {"stereoset": ("lms", "ss", "icat"), "gest": ("gs",)}


def evaluate(path: Path | str, backend: str, dtype: str, limit: int, batch_size: int = BATCH_SIZE) -> dict:
    """lm_eval's results (with ``samples``) of ``backend`` on :data:`TASKS`, the model at ``path`` loaded in
    ``dtype``; the run's wall seconds under ``"seconds"``."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from lm_eval_stereo.models.hf_prefix import HFPrefixLM

    model_class = {"hf": HFLM, "hf-prefix": HFPrefixLM}[backend]
    lm = model_class(pretrained=str(path), device="cpu", batch_size=batch_size, dtype=dtype)
    manager = TaskManager(include_defaults=False, metadata={"pretrained": str(path)})
    start = time.perf_counter()
    out = lm_eval.simple_evaluate(
        model=lm, tasks=TASKS, limit=limit, task_manager=manager, bootstrap_iters=0, log_samples=True
    )
    out["seconds"] = time.perf_counter() - start
    return out


def per_request(out: Mapping[str, Any]) -> dict[tuple[str, int, int], float]:
    """(task, doc_id, request number) -> log-likelihood."""
    return {
        (task, sample["doc_id"], n): float(resp[0][0])
        for task, samples in out["samples"].items()
        for sample in samples
        for n, resp in enumerate(sample["resps"])
    }


def _item(sample: Mapping[str, Any]) -> dict[str, Any]:
    """The logged item (under the task's first metric)."""
    return sample[sample["metrics"][0]]


def judgements(out: Mapping[str, Any]) -> dict[tuple[str, str, Any, str], Any]:
    """(task, kind, item, detail) -> the judgement the metrics count: StereoSet's ``preferred`` candidate, ``pro``
    (stereotype over anti-stereotype) and ``related`` (each of the two over unrelated); GEST's ``sign`` per template."""
    found: dict[tuple[str, str, Any, str], Any] = {}
    for task, samples in out["samples"].items():
        for sample in samples:
            item, doc = _item(sample), sample["doc_id"]
            if task.startswith("stereoset"):
                scores = {label: float(item[label]) for label in STEREOSET_LABELS}
                found[(task, "preferred", doc, "")] = max(scores, key=scores.__getitem__)
                found[(task, "pro", doc, "")] = scores["stereotype"] > scores["anti-stereotype"]
                for label in ("stereotype", "anti-stereotype"):
                    found[(task, "related", doc, label)] = scores[label] > scores["unrelated"]
            elif task.startswith("gest"):
                for template, score in item["scores"].items():
                    found[(task, "sign", doc, template)] = math.copysign(1.0, float(score)) if score else 0.0
    return found


def headlines(out: Mapping[str, Any]) -> dict[str, float]:
    """``task/metric`` -> value of the compared headlines (GEST's per-template g_s included)."""
    values = {}
    for task, results in out["results"].items():
        family = next((f for f in HEADLINES if task.startswith(f)), None)
        if family is None:
            continue
        for key, value in results.items():
            metric = key.split(",")[0]
            per_template = family == "gest" and metric.startswith("gs_t") and metric[4:].isdigit()
            if (metric in HEADLINES[family] or per_template) and isinstance(value, (int, float)):
                values[f"{task}/{metric}"] = float(value)
    return values


def drift(reference: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """How ``other`` differs from ``reference`` (two runs of the same documents): per task the |Δ| of the
    per-request log-likelihoods (``requests``, ``max``, ``mean``, ``p95``), the judgements that flip per kind
    (``flips``: kind -> [flipped, compared]) and the headline deltas (``headlines``: name -> [reference, other, Δ])."""
    a, b = per_request(reference), per_request(other)
    if a.keys() != b.keys():
        raise ValueError("the two runs scored different requests")
    tasks: dict[str, Any] = {}
    for task in sorted({key[0] for key in a}):
        diffs = np.array([abs(a[key] - b[key]) for key in a if key[0] == task])
        tasks[task] = {
            "requests": int(diffs.size),
            "max": float(diffs.max()),
            "mean": float(diffs.mean()),
            "p95": float(np.percentile(diffs, 95)),
            "flips": {},
        }
    ja, jb = judgements(reference), judgements(other)
    for key in sorted(ja, key=str):
        flips = tasks[key[0]]["flips"].setdefault(key[1], [0, 0])
        flips[0] += ja[key] != jb[key]
        flips[1] += 1
    ha, hb = headlines(reference), headlines(other)
    heads = {name: [ha[name], hb[name], hb[name] - ha[name]] for name in sorted(ha) if name in hb}
    return {"tasks": tasks, "headlines": heads}


FLIP_WORDS = {
    "preferred": "StereoSet preferred candidate",
    "pro": "StereoSet stereotype > anti-stereotype (SS)",
    "related": "StereoSet candidate > unrelated (LMS)",
    "sign": "GEST sign per item and template (g_s)",
}


def _number(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def markdown(found: dict[str, Any], limit: int, seconds: dict[str, dict[str, float]], params: int) -> str:
    backends = list(found)
    some = found[backends[0]]
    requests = ", ".join(f"{task} {v['requests']} requests" for task, v in some["tasks"].items())
    lines = [
        "## Precision: float32 vs bfloat16 on SmolLM2-135M-Instruct",
        "",
        f"Tasks {', '.join(TASKS)}, the first {limit} documents of each "
        f"({requests}); SmolLM2-135M-Instruct "
        f"({params / 1e6:.1f}M parameters, real weights) loaded with `dtype=float32` and with `dtype=bfloat16`, CPU "
        "(bfloat16 computed by the CPU's kernels), batch size "
        f"{BATCH_SIZE}. One run per backend and dtype: the drift is deterministic, so it is measured once, not timed "
        "(wall seconds of each run: "
        + "; ".join(f"{b} " + ", ".join(f"{d} {s:.0f}" for d, s in seconds[b].items()) for b in backends)
        + ").",
        "",
        "Per-request log-likelihood |Δ| (nats), bfloat16 against float32 of the same backend:",
        "",
        "| backend | task | requests | max | mean | p95 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for backend in backends:
        for task, v in found[backend]["tasks"].items():
            lines.append(
                f"| {backend} | {task} | {v['requests']:,} | {v['max']:.3g} | {v['mean']:.3g} | {v['p95']:.3g} |"
            )
    lines += ["", "Judgements that flip:", "", "| backend | judgement | flipped | of |", "|---|---|---:|---:|"]
    for backend in backends:
        for v in found[backend]["tasks"].values():
            for kind, (flipped, total) in v["flips"].items():
                lines.append(f"| {backend} | {FLIP_WORDS.get(kind, kind)} | {flipped} | {total} |")
    lines += ["", "Headlines:", "", "| backend | headline | float32 | bfloat16 | Δ |", "|---|---|---:|---:|---:|"]
    for backend in backends:
        for name, (before, after, delta) in found[backend]["headlines"].items():
            lines.append(f"| {backend} | {name} | {_number(before)} | {_number(after)} | {delta:+.3g} |")
    return "\n".join(lines) + "\n"


def run(quick: bool = False) -> dict:
    from lm_eval_stereo.local_models.real import SMOLLM2, materialise

    path = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    limit = QUICK_LIMIT if quick else LIMIT
    found, seconds, params = {}, {}, 0
    for backend in BACKENDS:
        outs = {}
        for dtype in DTYPES:
            outs[dtype] = evaluate(path, backend, dtype, limit)
            print(f"bench_precision: {backend} {dtype}: {outs[dtype]['seconds']:.0f} s", flush=True)
        seconds[backend] = {dtype: out["seconds"] for dtype, out in outs.items()}
        found[backend] = drift(outs["float32"], outs["bfloat16"])
        params = outs["float32"]["config"].get("model_num_parameters") or params
    return {
        "markdown": markdown(found, limit, seconds, params),
        "json": {"tasks": TASKS, "limit": limit, "batch_size": BATCH_SIZE, "seconds": seconds, "drift": found},
    }
