"""Which backend to use where, from the committed bench results: ``python -m bench.choice_table`` writes the table
into ``docs/RUNNING.md`` between :data:`BEGIN` and :data:`END`; ``--check`` only says whether the block there is
the one the results give (exit status 1 where not); ``--print`` prints it.

For each situation (one CPU, one GPU, a served model, several replicas) and kind of task (log-likelihood,
generation): the backend the bench measured fastest among those that gave ``hf``'s numbers, its speed against ``hf``
on each row, and, served, the ``num_concurrent`` it was fastest at with how the others compared. A situation the
bench has no row for says so (the GPU rows until ``make bench-gpu`` has run on a GPU); nothing is filled in by hand.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import textwrap
from pathlib import Path

from bench.engine_rows import find, label, measured, ratio_to_hf
from bench.run import read_results

REPO = Path(__file__).resolve().parents[1]
RUNNING = REPO / "docs" / "RUNNING.md"
BEGIN, END = "<!-- choice-table:begin -->", "<!-- choice-table:end -->"
NOT_ON_GPU = "not measured on a GPU (`make bench-gpu` measures it on one)"
#: no bench row times generation on a GPU
GENERATION_ON_GPU = "not measured on a GPU (no bench row times generation there)"


def ratios(row: dict, rows: list[dict]) -> dict[str, float]:
    """row name -> speed against hf of the same setup on every row it was measured on."""
    same = [r for r in rows if label(r) == label(row)]
    return {r["row"]: ratio_to_hf(r, rows) for r in same if ratio_to_hf(r, rows) is not None}


def pick(candidates: list[dict], rows: list[dict]) -> dict | None:
    """Among ``candidates`` (rows of one setup per row name), the setup with hf's numbers on every row and the highest
    mean speed against hf; None where none qualifies."""
    setups: dict[str, list[dict]] = {}
    for row in candidates:
        setups.setdefault(label(row), []).append(row)
    good = {name: these for name, these in setups.items() if all(r["metrics_equal"] for r in these)}
    if not good:
        return None
    best = max(good, key=lambda name: statistics.mean(ratios(good[name][0], rows).values()))
    return good[best][0]


def speed(row: dict, rows: list[dict]) -> str:
    found = ratios(row, rows)
    worst = max(r["worst_vs_hf"] for r in rows if label(r) == label(row))
    return ", ".join(f"{value:.2f}x ({name})" for name, value in found.items()) + f"; max \\|Δ\\| {worst:.0e}"


def concurrency_advice(best: dict, rows: list[dict]) -> str:
    """The num_concurrent ``best`` ran at, and the others' speed against it (mbbq_en, the same backend and
    replicas)."""
    same = [r for r in rows if r["row"] == best["row"] and r["backend"] == best["backend"]
            and r.get("replicas") == best.get("replicas")]  # fmt: skip
    others = [
        f"at {r['num_concurrent']}: {best['ll_seconds']['median'] / r['ll_seconds']['median']:.2f}x"
        for r in sorted(same, key=lambda r: r["num_concurrent"])
        if r is not best
    ]
    return f"{best['num_concurrent']}" + (f" ({', '.join(others)} of its speed)" if others else "")


def served_choice(rows: list[dict], replicas: int) -> list[str]:
    """The served log-likelihood row (one server, or ``replicas`` behind HAProxy): the fastest client and
    num_concurrent on mbbq_en with hf's numbers."""
    candidates = [r for r in rows if r.get("num_concurrent") and r.get("replicas", 0) == replicas]
    # a -prefix client that read nothing from the cache scored every request uncached, as the plain client does: not
    # a reason to install the plugin beside vLLM (through round-robin replicas its probe finds no cache)
    uncached = {r["backend"] for r in candidates if r["backend"].endswith("-prefix") and not r["cached"]}
    chosen = [r for r in candidates if r["backend"] not in uncached] or candidates
    best = pick(chosen, rows)
    situation = "several replicas" if replicas else "a served model (`vllm serve`)"
    if best is None:
        return [f"| {situation} | log-likelihood | not measured | | |"]
    use = f"`{best['backend']}`" + (" through HAProxy" if replicas else "")
    if uncached and best["backend"] not in uncached:
        use += f" (`{'`, `'.join(sorted(uncached))}` read nothing from the cache here)"
    if best["backend"].endswith("-prefix"):
        use += ", the plugin installed beside vLLM"
    against = speed(best, rows)
    if replicas:
        one = find(rows, best["backend"], replicas=0, row=best["row"], num_concurrent=best["num_concurrent"])
        if one:
            against += f"; {one[0]['ll_seconds']['median'] / best['ll_seconds']['median']:.2f}x one replica"
    return [f"| {situation} | log-likelihood | {use} | {against} | {concurrency_advice(best, rows)} |"]


def chat_choice(benchmarks: dict) -> list[str]:
    """Generation: in process (``hf``, the only in-process generation row) and served (the chat row)."""
    chat = benchmarks.get("served", {})
    rows = chat.get("json", {}).get("served", [])
    quick = "(quick)" in chat.get("measured", "")
    note = f" ({rows[0]['requests']} requests{', a --quick run' if quick else ''})" if rows else ""
    lines = ["| one CPU | generation | `hf --apply_chat_template` (vLLM's generation is not timed by the bench) | "
             "1.00x | |"]  # fmt: skip
    served = [r for r in rows if r["setup"].startswith("served") and r["differing"] == 0]
    if served:
        best = max(served, key=lambda r: r["ratio"])
        concurrent = best["setup"].rsplit("num_concurrent=", 1)[-1]
        server = (
            "`transformers serve --continuous-batching`" if "continuous" in best["setup"] else "`transformers serve`"
        )
        lines.append(f"| a served model | generation | `local-chat-completions` against {server} | "
                     f"{best['ratio']:.2f}x end to end{note}, the same texts | {concurrent} |")  # fmt: skip
    else:
        lines.append("| a served model | generation | not measured | | |")
    lines.append("| several replicas | generation | not measured (the chat row runs one server) | | |")
    return lines


def gpu_choice(benchmarks: dict) -> list[str]:
    """The one-GPU rows from ``make bench-gpu``'s results where it has run on a GPU."""
    measured = [m for m in benchmarks.get("gpu", {}).get("json", {}).get("rows", []) if not m.get("served")]
    if not measured:
        return [
            f"| one GPU | log-likelihood | {NOT_ON_GPU} | | |",
            f"| one GPU | generation | {GENERATION_ON_GPU} | | |",
        ]
    dtype = "bfloat16" if any(m["dtype"] == "bfloat16" for m in measured) else measured[0]["dtype"]
    these = [m for m in measured if m["dtype"] == dtype]
    hf = {m["row"]: m["seconds"] for m in these if m["backend"] == "hf"}
    backends = dict.fromkeys(m["backend"] for m in these)
    mean = {b: statistics.mean(hf[m["row"]] / m["seconds"] for m in these if m["backend"] == b) for b in backends}
    best = max(mean, key=mean.get)
    against = ", ".join(f"{hf[m['row']] / m['seconds']:.2f}x ({m['row']})" for m in these if m["backend"] == best)
    device = benchmarks["gpu"]["json"].get("device", "a GPU")
    return [f"| one GPU | log-likelihood | `{best}` ({dtype}, {device}) | {against} end to end | |",
            f"| one GPU | generation | {GENERATION_ON_GPU} | | |"]  # fmt: skip


def table(benchmarks: dict) -> str:
    """The block between the markers."""
    engines = benchmarks.get("engines", {})
    rows = measured([row for part in engines.get("json", {}).get("parts", {}).values() for row in part["rows"]])
    # lm_eval's order is the bench's check of vllm-prefix's dispatch order, not a setup a user chooses
    in_process = pick([r for r in rows if not r.get("num_concurrent") and not r.get("order")], rows)
    cpu = (
        f"| one CPU | log-likelihood | `{in_process['backend']}` | {speed(in_process, rows)} | |"
        if in_process
        else "| one CPU | log-likelihood | not measured (`python -m bench.run --only hf,vllm`) | | |"
    )
    generation = chat_choice(benchmarks)
    intro = (
        "**Which backend, measured.** Generated by `python -m bench.choice_table` from `make bench`'s committed "
        "results ([bench/results.md](../bench/results.md): SmolLM2-135M-Instruct, float32, 2 shared CPU cores; the "
        "rows, the machine's load and the targets are there). Speed against `hf`: hf's log-likelihood-phase seconds "
        "on the same documents / the backend's (generation: end to end); max \\|Δ\\|: the largest difference of a "
        "request's log-likelihood from hf's. Only backends whose metrics equal hf's are picked."
    )
    lines = [
        BEGIN,
        *textwrap.wrap(intro, width=118, break_on_hyphens=False),
        "",
        "| situation | tasks | use | measured against `hf` | num_concurrent |",
        "|---|---|---|---|---|",
        cpu,
        generation[0],
        *gpu_choice(benchmarks),
        *served_choice(rows, 0),
        generation[1],
        *served_choice(rows, 2),
        generation[2],
        END,
    ]
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str) -> str:
    """``text`` with the lines from :data:`BEGIN` to :data:`END` replaced by ``block``."""
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{RUNNING}: the lines {BEGIN} and {END} are missing")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return head + block.rstrip("\n") + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.choice_table", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 where RUNNING.md's block is not the results'")
    parser.add_argument("--print", action="store_true", help="print the block")
    args = parser.parse_args(argv)
    block = table(read_results())
    if args.print:
        print(block, end="")
        return 0
    text = RUNNING.read_text()
    updated = replace_block(text, block)
    if args.check:
        if updated != text:
            print(f"{RUNNING}: the choice table is not the one bench/results.json gives: python -m bench.choice_table")
            return 1
        return 0
    RUNNING.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
