"""Log-likelihood scoring of stereoset_multi + gest_en + gerbbq_mc: ``hf-prefix`` vs ``hf``, and each vs a bare forward.

One model (GPT-2 shape, about 26M parameters, seeded random weights, the tiny models' byte-level BPE) is loaded once
and shared by lm_eval's ``HFLM`` and ``HFPrefixLM`` (loading, and hf-prefix's start-up probe, excluded). The same
documents on both sides: ``--limit`` as a fraction of every task (so the tasks keep the suite's proportions).

- end to end: ``lm_eval.simple_evaluate`` on the loaded model (task building, dataset conversion, request building,
  tokenisation, batching, scoring, metric aggregation with the tasks' bootstrap CIs, ``log_samples``);
- bare forward: ``model(**inputs)`` only, over exactly the inputs that side forwards, prebuilt, in the same batches:
  for ``hf`` its distinct sequences ``(context + continuation)[:-1]`` sorted longest first and right-padded, for
  ``hf-prefix`` its packed rows with their masks and position ids;
- forwarded tokens: the sequences' tokens (``hf``: distinct sequences, as its one-token cache deduplicates;
  ``hf-prefix``: its rows' nodes) and the positions actually computed including padding (counted by a forward hook);
- token ceiling: hf's tokens / hf-prefix's tokens, the speed-up were time proportional to forwarded tokens; the end to
  end speed-up is also given as a share of it.

``loglikelihood`` times the model's ``loglikelihood`` call alone (tokenisation, packing, forwards, log-softmax).
Every figure is the median of ``REPETITIONS`` runs after one warm-up run, the four measurements interleaved in each
repetition so that machine load hits them alike; min and max are shown. Per-request log-likelihoods and greedy flags
of the two sides are compared from ``log_samples``.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from pathlib import Path

import torch

from bench.timing import REPETITIONS, cell, spread
from lm_eval_stereo.local_models.tiny import build_causal_lm
from lm_eval_stereo.models.hf_prefix import HFPrefixLM, batches

TASKS = ["stereoset_multi", "gest_en", "gerbbq_mc"]
BATCH_SIZE = 32
SPEED_TARGET, TOKEN_TARGET, OVERHEAD_TARGET = 2.0, 2.5, 1.3


class PositionCounter:
    """Forward pre-hook adding up ``input_ids.numel()`` (rows x padded width) of every forward."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.positions = 0
        model.register_forward_pre_hook(self, with_kwargs=True)

    def __call__(self, module, args, kwargs) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.positions += int(ids.numel())


def recorded_requests(lm, seconds: list[float]) -> list:
    """Wrap ``lm``: keep the encoded requests of the last loglikelihood call, and its duration in ``seconds[0]``."""
    seen: list = []
    tokens, loglikelihood = lm._loglikelihood_tokens, lm.loglikelihood

    def record(requests, disable_tqdm=False, override_bs=None):
        seen[:] = list(requests)
        return tokens(requests, disable_tqdm=disable_tqdm, override_bs=override_bs)

    def timed(requests, disable_tqdm=False):
        start = time.perf_counter()
        out = loglikelihood(requests, disable_tqdm=disable_tqdm)
        seconds[:] = [time.perf_counter() - start]
        return out

    lm._loglikelihood_tokens, lm.loglikelihood = record, timed
    return seen


def hf_inputs(prefix: HFPrefixLM, requests: list) -> tuple[list[dict], int]:
    """HFLM's distinct input sequences, longest first, right-padded with 0 in batches; their token count."""
    distinct = {r.inputs for r in prefix.token_requests(requests)}
    ordered = sorted(distinct, key=len, reverse=True)
    inputs = []
    for first in range(0, len(ordered), BATCH_SIZE):
        batch = ordered[first : first + BATCH_SIZE]
        ids = torch.zeros((len(batch), len(batch[0])), dtype=torch.long)
        for row, sequence in enumerate(batch):
            ids[row, : len(sequence)] = torch.tensor(sequence)
        inputs.append({"input_ids": ids})
    return inputs, sum(len(s) for s in distinct)


def prefix_inputs(prefix: HFPrefixLM, requests: list) -> tuple[list[dict], int]:
    """hf-prefix's packed rows as model inputs, in its batches; their node count."""
    rows = sorted(prefix.pack(prefix.token_requests(requests)), key=lambda row: -len(row))
    return [prefix.batch_inputs(batch)[0] for batch in batches(rows, BATCH_SIZE)], sum(len(row) for row in rows)


def bare_forward(model: torch.nn.Module, inputs: list[dict]) -> float:
    start = time.perf_counter()
    with torch.inference_mode():
        for kwargs in inputs:
            model(**kwargs)
    return time.perf_counter() - start


def per_request(results: dict) -> dict[tuple[str, int, int], tuple[float, bool]]:
    return {
        (task, sample["doc_id"], n): (float(resp[0][0]), bool(resp[0][1]))
        for task, samples in results["samples"].items()
        for sample in samples
        for n, resp in enumerate(sample["resps"])
    }


def boundary_flagged(results: dict) -> set[tuple[str, int]]:
    """(task, doc_id) of the documents ``hf`` flags for a token boundary (an item's ``boundary_mismatch`` or
    ``boundary_mismatches``): there hf-prefix scores the reference's tokens, so their numbers differ by design."""
    return {
        (task, sample["doc_id"])
        for task, samples in results["samples"].items()
        for sample in samples
        for value in sample.values()
        if isinstance(value, dict) and (value.get("boundary_mismatch") or value.get("boundary_mismatches"))
    }


def same_float(a: float, b: float) -> bool:
    """Equal within 1e-4 (relative above 1), NaN equal to NaN."""
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-4 * max(1.0, abs(a))


def run(quick: bool = False) -> dict:
    """The random GPT-2-shape model (the shape of the first rows of this benchmark)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = build_causal_lm(Path(tmp) / "model", seed=0, shape="bench")
        return measure(path, "Random GPT-2-style model", "", quick)


def measure(
    path: Path,
    description: str,
    title: str,
    quick: bool = False,
    tasks: list[str] | None = None,
    limits: tuple[float, float] = (0.005, 0.0005),
    speed_target: float | None = None,
    ceiling_target: float | None = None,
    overhead_target: float = OVERHEAD_TARGET,
) -> dict:
    """The comparison for the model folder at ``path`` (``description`` names it in the text, ``title`` in the
    heading) on ``tasks`` (default :data:`TASKS`) with ``--limit`` the fraction ``limits`` (full, quick); targets: the
    end to end speed-up ``speed_target`` and (where given) ``ceiling_target`` of the token ceiling, hf-prefix end to
    end within ``overhead_target`` of its bare forward."""
    tasks = list(tasks or TASKS)
    speed_target = speed_target or SPEED_TARGET
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    limit = limits[1] if quick else limits[0]
    load_before = os.getloadavg()
    hf = HFLM(pretrained=str(path), device="cpu", batch_size=BATCH_SIZE, dtype="float32")
    prefix = HFPrefixLM(pretrained=hf.model, tokenizer=hf.tokenizer, device="cpu", batch_size=BATCH_SIZE)
    params = sum(p.numel() for p in hf.model.parameters())
    counter = PositionCounter(hf.model)
    manager = TaskManager(include_defaults=False, metadata={"pretrained": str(path)})
    scoring = {"hf": [0.0], "hf-prefix": [0.0]}
    requests = {name: recorded_requests(lm, scoring[name]) for name, lm in (("hf", hf), ("hf-prefix", prefix))}
    models = {"hf": hf, "hf-prefix": prefix}
    keys = ("hf", "hf-prefix", "bare hf", "bare hf-prefix", "scoring hf", "scoring hf-prefix")
    times: dict[str, list[float]] = {key: [] for key in keys}
    positions: dict[str, int] = {}
    outputs: dict[str, dict] = {}
    for repetition in range(REPETITIONS + 1):
        for name, lm in models.items():
            counter.positions = 0
            start = time.perf_counter()
            outputs[name] = lm_eval.simple_evaluate(
                model=lm, tasks=tasks, limit=limit, task_manager=manager, bootstrap_iters=0, log_samples=True
            )
            elapsed = time.perf_counter() - start
            positions[name] = counter.positions
            if repetition:
                times[name].append(elapsed)
                times[f"scoring {name}"].append(scoring[name][0])
        bare = {"hf": hf_inputs(prefix, requests["hf"]), "hf-prefix": prefix_inputs(prefix, requests["hf-prefix"])}
        for name, (inputs, _) in bare.items():
            elapsed = bare_forward(hf.model, inputs)
            if repetition:
                times[f"bare {name}"].append(elapsed)
    load_after = os.getloadavg()
    tokens = {name: bare[name][1] for name in models}
    expected, actual = per_request(outputs["hf"]), per_request(outputs["hf-prefix"])
    assert expected.keys() == actual.keys()
    flagged = boundary_flagged(outputs["hf"])
    requests = len(expected)
    expected = {key: value for key, value in expected.items() if key[:2] not in flagged}
    max_diff = max(abs(expected[key][0] - actual[key][0]) for key in expected)
    max_rel = max(abs(expected[key][0] - actual[key][0]) / max(1.0, abs(expected[key][0])) for key in expected)
    greedy_mismatches = sum(expected[key][1] != actual[key][1] for key in expected)
    metrics_differing = [
        f"{task}/{key}"
        for task, values in outputs["hf"]["results"].items()
        for key, value in values.items()
        if task not in {task for task, _ in flagged}
        and isinstance(value, float)
        and not same_float(value, outputs["hf-prefix"]["results"][task][key])
    ]
    documents = {task: len({s["doc_id"] for s in samples}) for task, samples in outputs["hf"]["samples"].items()}
    stats = {key: spread(values) for key, values in times.items()}
    speedups = [a / b for a, b in zip(times["hf"], times["hf-prefix"])]
    scoring_speedup = spread([a / b for a, b in zip(times["scoring hf"], times["scoring hf-prefix"])])
    ratios = {name: [a / b for a, b in zip(times[name], times[f"bare {name}"])] for name in ("hf", "hf-prefix")}
    met = lambda ok: "met" if ok else "NOT met"  # noqa: E731
    speedup, token_ratio = spread(speedups), tokens["hf"] / tokens["hf-prefix"]
    of_ceiling = {key: value / token_ratio for key, value in speedup.items()}
    ceiling_line = (
        f"; end to end ≥ {ceiling_target:.0%} of the token ceiling: {met(of_ceiling['median'] >= ceiling_target)}"
        if ceiling_target
        else ""
    )
    overhead = {name: spread(values) for name, values in ratios.items()}
    extra = {name: spread([a - b for a, b in zip(times[name], times[f"bare {name}"])]) for name in models}
    markdown = (
        f"## Log-likelihood scoring{title}: hf-prefix vs hf, and end to end vs bare forward\n\n"
        f"Tasks {', '.join(tasks)} with `--limit {limit}` (that fraction of every task: {sum(documents.values())} "
        f"documents, {requests} requests: "
        + ", ".join(f"{task} {n}" for task, n in sorted(documents.items()))
        + f"). {description}, {params / 1e6:.1f}M parameters, float32, CPU, batch size {BATCH_SIZE} "
        f"(rows for hf-prefix). Median (min–max) of {REPETITIONS} runs after a warm-up; model loading excluded. "
        f"Load average (1, 5, 15 min) on {os.cpu_count()} cores: {', '.join(f'{x:.1f}' for x in load_before)} before, "
        f"{', '.join(f'{x:.1f}' for x in load_after)} after.\n\n"
        "| what | hf | hf-prefix | ratio hf / hf-prefix |\n|---|---:|---:|---:|\n"
        f"| end to end `simple_evaluate` (s) | {cell(stats['hf'])} | {cell(stats['hf-prefix'])} | "
        f"**{cell(speedup)}×** |\n"
        f"| of which `loglikelihood` (tokenisation + scoring, s) | {cell(stats['scoring hf'])} | "
        f"{cell(stats['scoring hf-prefix'])} | **{cell(scoring_speedup)}×** |\n"
        f"| bare forward, same inputs (s) | {cell(stats['bare hf'])} | {cell(stats['bare hf-prefix'])} | |\n"
        f"| end to end / bare forward | {cell(overhead['hf'])}× | {cell(overhead['hf-prefix'])}× | |\n"
        f"| end to end − bare forward (s) | {cell(extra['hf'])} | {cell(extra['hf-prefix'])} | |\n"
        f"| forwarded tokens (sequences; ratio: the token ceiling) | {tokens['hf']:,} | {tokens['hf-prefix']:,} | "
        f"**{token_ratio:.2f}×** |\n"
        f"| forwarded positions incl. padding | {positions['hf']:,} | {positions['hf-prefix']:,} | "
        f"{positions['hf'] / positions['hf-prefix']:.2f}× |\n"
        f"| end to end speed-up / token ceiling | | | **{cell(of_ceiling)}** |\n\n"
        f"Targets: ≥ {speed_target}× faster: end to end {met(speedup['median'] >= speed_target)}, `loglikelihood` "
        f"{met(scoring_speedup['median'] >= speed_target)}; ≥ {TOKEN_TARGET}× fewer "
        f"tokens: {met(token_ratio >= TOKEN_TARGET)}; end to end ≤ {overhead_target}× bare forward: hf "
        f"{met(overhead['hf']['median'] <= overhead_target)}, hf-prefix "
        f"{met(overhead['hf-prefix']['median'] <= overhead_target)}{ceiling_line}.\n"
        f"Same numbers: per-request log-likelihoods max |Δ| {max_diff:.2g} (relative {max_rel:.2g}), greedy flags "
        f"differing: {greedy_mismatches}, float metrics differing by more than 1e-4 (relative): {len(metrics_differing)} {metrics_differing[:5]}; "
        f"left out: the {len(flagged)} documents hf flags for a token boundary, where hf-prefix scores the reference's "
        f"tokens (and the metrics of their tasks).\n"
    )
    return {
        "markdown": markdown,
        "json": {
            "tasks": tasks,
            "limit": limit,
            "documents": documents,
            "requests": requests,
            "boundary_flagged_documents": len(flagged),
            "parameters": params,
            "batch_size": BATCH_SIZE,
            "repetitions": REPETITIONS,
            "load_average_before_after": [load_before, load_after],
            "seconds": stats,
            "speedup_hf_over_prefix": speedup,
            "end_to_end_over_bare": overhead,
            "end_to_end_minus_bare_s": extra,
            "tokens": tokens,
            "token_ratio": token_ratio,
            "speedup_over_token_ceiling": of_ceiling,
            "positions_incl_padding": positions,
            "max_abs_diff": max_diff,
            "max_rel_diff": max_rel,
            "greedy_mismatches": greedy_mismatches,
            "metrics_differing": metrics_differing,
            "speedup_loglikelihood": scoring_speedup,
            "targets": {
                "speedup": speed_target,
                "token_ratio": TOKEN_TARGET,
                "end_to_end_over_bare": overhead_target,
                "speedup_over_token_ceiling": ceiling_target,
            },
        },
    }
