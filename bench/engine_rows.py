"""The rows of :mod:`bench.bench_engines` from its measured runs, their ratio to ``hf``, "same numbers", the issue's
targets on this CPU and the markdown table: pure functions of what was measured, so that a part re-run alone
(``python -m bench.run --only vllm-serve``) is shown beside the others' last rows."""

from __future__ import annotations

import math
import statistics
from typing import Any

from bench.timing import cell, spread

#: per-request and per-metric tolerance of "same numbers" against hf (the vLLM tier's: the engines sum in other orders)
TOLERANCE = 1e-3
#: the parts, in the order they are measured and shown
PARTS = ("hf", "vllm", "vllm-serve", "replicas")
#: the issue's targets on this CPU (mbbq_en)
TARGET_VLLM_PREFIX_SPEED = 2.0
TARGET_VLLM_PREFIX_TOKENS = 1.5
TARGET_SERVED_PREFIX_SPEED = 1.5
#: the row the targets are read on
TARGET_ROW = "mbbq_en"


def worst_difference(values: dict[str, float], reference: dict[str, float], flagged: set[str]) -> float:
    """The largest |log-likelihood - hf's| of a request (``task|doc|n``), the documents ``hf`` flags for a token
    boundary (``task|doc``) left out; NaN where both are NaN counts as equal, a missing request as infinite."""
    worst = 0.0
    for key, expected in reference.items():
        if key.rsplit("|", 1)[0] in flagged:
            continue
        value = values.get(key, math.inf)
        if math.isnan(expected) and math.isnan(value):
            continue
        difference = abs(value - expected)
        worst = max(worst, difference if not math.isnan(difference) else math.inf)
    return worst


def differing_metrics(
    metrics: dict[str, dict], reference: dict[str, dict], flagged: set[str], groups: dict[str, list[str]]
) -> list[str]:
    """``task/metric`` of every float metric not within :data:`TOLERANCE` of hf's (NaN equal to NaN), but those of
    the tasks with a document hf flags for a token boundary and of the groups (``groups``: lm_eval's
    ``group_subtasks``) that hold such a task, and the re-sent counts (hf has none)."""
    skipped = {key.split("|", 1)[0] for key in flagged}
    while grown := {group for group, tasks in groups.items() if skipped & set(tasks)} - skipped:
        skipped |= grown
    differing = []
    for task, values in reference.items():
        if task in skipped:
            continue
        for name, expected in values.items():
            if name.startswith("requests_resent"):
                continue
            value = metrics.get(task, {}).get(name, math.nan)
            if not (abs(value - expected) <= TOLERANCE or (math.isnan(value) and math.isnan(expected))):
                differing.append(f"{task}/{name}")
    return differing


def summarise(setup: dict, runs: list[dict], reference: dict) -> dict:
    """One row: ``setup`` (its labels), its timed ``runs`` (:func:`bench.engine_worker.run_once`, with ``tokens`` and
    ``cpu`` filled in), against ``reference`` (hf's ``values``, ``metrics`` and ``flagged`` of the same row)."""
    requests = len(runs[-1]["values"])
    flagged = set(reference["flagged"])
    tokens = [run["tokens"] for run in runs]
    row = {
        **setup,
        "requests": requests,
        "seconds": spread([run["seconds"] for run in runs]),
        "ll_seconds": spread([run["ll_seconds"] for run in runs]),
        "requests_per_s": spread([requests / run["ll_seconds"] for run in runs]),
        "computed": int(statistics.median(t[0] for t in tokens)),
        "cached": int(statistics.median(t[1] for t in tokens)),
        "resent": max(run["resent"] for run in runs),
        "worst_vs_hf": max(worst_difference(run["values"], reference["values"], flagged) for run in runs),
        "metrics_differing": sorted(
            {
                name
                for run in runs
                for name in differing_metrics(run["metrics"], reference["metrics"], flagged, run.get("groups", {}))
            }
        ),  # fmt: skip
        "flagged_left_out": len(flagged),
        "cores": {
            side: statistics.median(run["cpu"][side] / run["seconds"] for run in runs) for side in runs[0]["cpu"]
        },
        **({"answered": runs[-1]["answered"]} if "answered" in runs[-1] else {}),
    }
    return {**row, "metrics_equal": not row["metrics_differing"]}


def ratio_to_hf(row: dict, rows: list[dict]) -> float | None:
    """hf's median log-likelihood-phase seconds on the same row / this row's (above 1: faster than hf)."""
    hf = [r for r in measured(rows) if r["row"] == row["row"] and r["backend"] == "hf"]
    return hf[0]["ll_seconds"]["median"] / row["ll_seconds"]["median"] if hf else None


def measured(rows: list[dict]) -> list[dict]:
    """The rows that were measured (a setup whose worker ended has a row that says why, and no numbers)."""
    return [r for r in rows if "failed" not in r]


def find(rows: list[dict], backend: str, replicas: int = 0, row: str = TARGET_ROW, **labels: Any) -> list[dict]:
    return [r for r in measured(rows) if r["row"] == row and r["backend"] == backend
            and r.get("replicas", 0) == replicas and all(r.get(k) == v for k, v in labels.items())]  # fmt: skip


def fastest(rows: list[dict]) -> dict | None:
    """The row with the shortest median log-likelihood phase."""
    return min(rows, key=lambda r: r["ll_seconds"]["median"]) if rows else None


def met(value: float, target: float, at_least: bool = True) -> str:
    ok = value >= target if at_least else value <= target
    if ok:
        return "met"
    short = (target - value) / target if at_least else (value - target) / target
    return f"NOT met (by {short:.0%})"


def targets(rows: list[dict]) -> list[str]:
    """The issue's targets on :data:`TARGET_ROW`, each with its figure, met or missed by how much, and why where
    missed; a target whose rows were not measured says so."""
    lines = []
    plain, cached = fastest(find(rows, "vllm")), fastest(find(rows, "vllm-prefix", order=None))
    hf_prefix = fastest(find(rows, "hf-prefix"))
    if plain and cached:
        speed = plain["ll_seconds"]["median"] / cached["ll_seconds"]["median"]
        ceiling = plain["computed"] / max(cached["computed"], 1)
        line = (f"- `vllm-prefix` {speed:.2f}x `vllm` in {TARGET_ROW}'s log-likelihood phase (target: at least "
                f"{TARGET_VLLM_PREFIX_SPEED:g}x): {met(speed, TARGET_VLLM_PREFIX_SPEED)}. Token ceiling (vllm's "
                f"computed tokens / vllm-prefix's): {ceiling:.2f}x; the speed-up is {speed / ceiling:.0%} of it.")  # fmt: skip
        if speed < TARGET_VLLM_PREFIX_SPEED:
            line += (" Why: " + ("the tokens saved bound it: " if ceiling < TARGET_VLLM_PREFIX_SPEED else "")
                     + "what a request costs beside its computed tokens (scheduling, the prompt log-probabilities of "
                     "every computed position, the Python around each request) does not shrink with the cache.")  # fmt: skip
        lines.append(line)
    else:
        lines.append("- `vllm-prefix` against `vllm`: not measured (run `--only vllm`).")
    if cached and hf_prefix:
        tokens = cached["computed"] / max(hf_prefix["computed"], 1)
        line = (f"- `vllm-prefix` computes {tokens:.2f}x the tokens `hf-prefix` forwards ({cached['computed']:,} "
                f"against {hf_prefix['computed']:,}; target: at most {TARGET_VLLM_PREFIX_TOKENS:g}x): "
                f"{met(tokens, TARGET_VLLM_PREFIX_TOKENS, at_least=False)}.")  # fmt: skip
        if tokens > TARGET_VLLM_PREFIX_TOKENS:
            line += (" Why: vLLM shares whole KV-cache blocks only (32 tokens on the CPU build), so each request "
                     "computes its context's last partial block again, where hf-prefix forwards a shared prefix "
                     f"once whatever its length; {cached['resent']} request(s) were re-sent uncached.")  # fmt: skip
        lines.append(line)
    served_plain, served_cached = (
        fastest(find(rows, "local-completions")),
        fastest(find(rows, "local-completions-prefix")),
    )
    if served_plain and served_cached:
        lines.append(served_target(served_plain, served_cached))
    else:
        lines.append("- served `-prefix` against served plain: not measured (run `--only vllm-serve`).")
    lines.append(replicas_line(rows))
    return lines


def served_target(plain: dict, cached: dict) -> str:
    speed = plain["ll_seconds"]["median"] / cached["ll_seconds"]["median"]
    ceiling = plain["computed"] / max(cached["computed"], 1)
    line = (f"- served: `local-completions-prefix` {speed:.2f}x `local-completions`, each at its best num_concurrent "
            f"({cached['num_concurrent']} and {plain['num_concurrent']}), one `vllm serve` (target: at least "
            f"{TARGET_SERVED_PREFIX_SPEED:g}x): {met(speed, TARGET_SERVED_PREFIX_SPEED)}. Token ceiling (the server's "
            f"computed tokens): {ceiling:.2f}x.")  # fmt: skip
    if speed < TARGET_SERVED_PREFIX_SPEED:
        client = cached["cores"].get("client", 0.0)
        line += (f" Why: a served request also costs HTTP, JSON and the client's tokenising, which the cache does not "
                 f"shorten (the lm_eval client used {client:.2f} of the 2 cores)"
                 + ("; and the tokens saved bound it" if ceiling < TARGET_SERVED_PREFIX_SPEED else "") + ".")  # fmt: skip
    return line


def replicas_line(rows: list[dict]) -> str:
    """Two replicas against one, at each's best num_concurrent, for both clients, with the bound 2 shared cores set."""
    parts = []
    for name in ("local-completions", "local-completions-prefix"):
        one, two = fastest(find(rows, name, replicas=0)), fastest(find(rows, name, replicas=2))
        if one and two:
            ratio = one["ll_seconds"]["median"] / two["ll_seconds"]["median"]
            parts.append(f"`{name}` {ratio:.2f}x (num_concurrent {two['num_concurrent']} against "
                         f"{one['num_concurrent']}; engines used {two['cores'].get('servers', 0):.2f} cores against "
                         f"{one['cores'].get('servers', 0):.2f}, lm_eval's client {two['cores'].get('client', 0):.2f})")  # fmt: skip
    if not parts:
        return "- two replicas against one: not measured (run `--only vllm-serve,replicas`)."
    behind = find(rows, "local-completions-prefix", replicas=2)
    if behind and not any(r["cached"] for r in behind):
        parts.append(
            "`local-completions-prefix` read nothing from the replicas' caches: HAProxy's round robin sends the "
            "client's probe (one prompt sent twice) to the two replicas in turn, the second finds nothing cached, and "
            "the client scores every request uncached, as `local-completions` does"
        )
    return ("- two replicas behind HAProxy against one `vllm serve`: " + "; ".join(parts) + ". The bound here is the "
            "2 shared cores, not the replicas: each engine runs one thread bound to a core of its own, and the two "
            "engines, their API servers, HAProxy and lm_eval's client share the 2 cores (with whatever else runs on "
            "the machine), so two replicas can be at most 2x one, less the cores the rest takes; on one GPU per "
            "replica the engines share nothing and the bound is num_concurrent and the client.")  # fmt: skip


def label(row: dict) -> str:
    """The setup as a reader names it."""
    name = row["backend"] + (", lm_eval's order" if row.get("order") else "")
    if row.get("num_concurrent"):
        where = "2 replicas behind HAProxy" if row.get("replicas") else "one vllm serve"
        name += f", {where}, num_concurrent={row['num_concurrent']}"
    return name


def markdown(rows: list[dict], parts: dict[str, dict], described: str, repetitions: int) -> str:
    """The section of ``bench/results.md``: how it was measured, one table per row, the targets, each part's
    measurement time and load."""
    lines = [
        "## Every engine on the same documents: hf, hf-prefix, vLLM in process, `vllm serve` and two replicas",
        "",
        f"SmolLM2-135M-Instruct (real weights), float32, CPU; vLLM's CPU build 0.32 (`make vllm-venv`), one engine "
        f"thread bound to a core (vLLM's default on this CPU: core 0, core 1 left to the rest; two replicas: one core "
        f"each). Rows: {described}. Per setup: median (min–max) of {repetitions} runs after a warm-up, the setups "
        "interleaved in every repetition, every vLLM prefix cache emptied before each run; models, engines and "
        "servers started once, not timed. `vllm` is lm_eval's backend as a user gets it (vLLM's prefix caching on, "
        "but never read for a request that asks for prompt log-probabilities; lm_eval's order, longest first). end to end: `simple_evaluate`; LL: its log-likelihood phase; requests/s: "
        "of that phase; computed / cached: prompt tokens forwarded and read from vLLM's prefix cache (hf and vllm: "
        "every request's tokens; hf-prefix: its packed rows; vllm-prefix: its own counts; served: the servers' "
        "`/metrics`); ratio: hf's LL seconds / these; same numbers: the largest |log-likelihood - hf's| of a request "
        f"and whether every metric is within {TOLERANCE:g} of hf's (the documents hf flags for a token boundary left "
        "out: there hf-prefix scores the reference's tokens); cores: CPU-seconds per second of the lm_eval process "
        "(with its engine, in process) and of the servers.",
    ]
    for row_name in dict.fromkeys(r["row"] for r in rows):
        these = [r for r in rows if r["row"] == row_name]
        first = measured(these)[0]  # hf's: the bench stops where hf failed
        flagged = first["flagged_left_out"]
        lines += [
            "",
            f"**{row_name}** ({first['requests']} requests"
            + (f"; {flagged} document(s) flagged by hf left out of same numbers" if flagged else "")
            + ")",
            "",
            "| setup | end to end s | LL s | requests/s | computed | cached | ratio to hf | same numbers | cores |",
            "|---|---|---|---|---:|---:|---:|---|---|",
        ]
        for r in these:
            if "failed" in r:
                lines.append(f"| {label(r)} | FAILED in the {r['failed']} | | | | | | | |")
                continue
            ratio = ratio_to_hf(r, rows)
            differing = r.get("metrics_differing") or []
            same = f"{r['worst_vs_hf']:.1e}, metrics " + (
                "equal" if r["metrics_equal"] else f"DIFFER ({', '.join(differing)})"
            )
            cores = " / ".join(f"{side} {value:.2f}" for side, value in r["cores"].items())
            answered = f", answered {' / '.join(str(n) for n in r['answered'])}" if r.get("answered") and len(r["answered"]) > 1 else ""  # fmt: skip
            lines.append(
                f"| {label(r)} | {cell(r['seconds'])} | {cell(r['ll_seconds'])} | {cell(r['requests_per_s'], 1)} | "
                f"{r['computed']:,} | {r['cached']:,} | {'' if ratio is None else f'{ratio:.2f}x'} | {same} | "
                f"{cores}{answered} |"
            )
    lines += ["", f"Targets on this CPU ({TARGET_ROW}):", "", *targets(rows), ""]
    for part in PARTS:
        if part in parts:
            load = parts[part]["load"]
            lines.append(f"Part `{part}`: {parts[part]['measured']}; load average (1, 5, 15 min) on 2 cores: "
                         f"{', '.join(f'{x:.1f}' for x in load[0])} before, {', '.join(f'{x:.1f}' for x in load[1])} after.")  # fmt: skip
    return "\n".join(lines) + "\n"
