"""Run every ``bench/bench_*.py`` module and write ``bench/results.md`` and ``bench/results.json``.

``python -m bench.run [--quick] [--only PART[,PART]] [NAME ...]``: NAME selects modules (e.g. ``mbbq``; the other
benchmarks' last results are kept, each with the time and machine it was measured on) or parts of a module that has
parts (``bench_engines``: ``hf``, ``vllm``, ``vllm-serve``, ``replicas``; ``chat``: the served chat row, ``bench_served``);
``--only`` selects parts alone. ``--quick`` uses smaller inputs and writes ``bench/out/results-quick.md`` and
``.json`` instead (a smoke run's numbers are never the committed results).
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import signal
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
#: part -> the module that measures it (``bench_<module>.run(parts=...)``, or the whole module where it has no parts)
PARTS = {"hf": "engines", "vllm": "engines", "vllm-serve": "engines", "replicas": "engines", "chat": "served"}


def results_paths(quick: bool) -> tuple[Path, Path]:
    """(results.md, results.json): the committed ones, or ``bench/out``'s for a quick run."""
    folder = HERE / "out" if quick else HERE
    stem = "results-quick" if quick else "results"
    return folder / f"{stem}.md", folder / f"{stem}.json"


def write_results(benchmarks: dict, quick: bool = False) -> Path:
    """``results.md`` (every benchmark's section with its measurement line) and ``results.json``."""
    markdown, data = results_paths(quick)
    markdown.parent.mkdir(parents=True, exist_ok=True)
    sections = ["# lm-eval-stereo benchmarks\n\nWritten by `make bench` (`python -m bench.run`).\n"]
    sections += [f"{entry['markdown']}\n{entry['measured']}\n" for _, entry in sorted(benchmarks.items())]
    markdown.write_text("\n".join(sections))
    data.write_text(json.dumps({"benchmarks": benchmarks}, indent=2) + "\n")
    return markdown


def read_results(quick: bool = False) -> dict:
    """The benchmarks of the last ``results.json`` (``{}`` where there is none)."""
    data = results_paths(quick)[1]
    return json.loads(data.read_text()).get("benchmarks", {}) if data.exists() else {}


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, torch {torch.__version__}"


def selection(names: list[str], only: list[str], available: list[str]) -> dict[str, list[str] | None]:
    """module -> the parts to run (None: all of it), from NAMEs (modules or parts) and ``--only`` (parts)."""
    chosen: dict[str, list[str] | None] = {}
    for name in [*names, *only] or available:
        module = PARTS.get(name, name)
        if module == name or not hasattr(importlib.import_module(f"bench.bench_{module}"), "PARTS"):
            chosen[module] = None
        elif chosen.get(module, []) is not None:
            chosen[module] = [*chosen.get(module, []), name]
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help="benchmark modules or parts to run (default: all)")
    parser.add_argument("--only", default="", help=f"comma-separated parts: {', '.join(PARTS)}")
    parser.add_argument("--quick", action="store_true", help="smaller inputs, for a smoke run (bench/out)")
    args = parser.parse_args()
    # a SIGTERM ends the bench as an exception does: every worker, engine and server it started is stopped by PID
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    available = sorted(p.stem[len("bench_") :] for p in HERE.glob("bench_*.py"))
    only = [part.strip() for part in args.only.split(",") if part.strip()]
    unknown = sorted({*args.names} - {*available, *PARTS}) + sorted({*only} - {*PARTS})
    if unknown:
        parser.error(f"unknown benchmark(s) or part(s) {', '.join(unknown)}; modules: {', '.join(available)}; "
                     f"parts: {', '.join(PARTS)}")  # fmt: skip
    benchmarks = read_results(args.quick)
    for name, parts in selection(args.names, only, available).items():
        print(f"== bench_{name}" + (f" ({', '.join(parts)})" if parts else ""), flush=True)
        module = importlib.import_module(f"bench.bench_{name}")
        if hasattr(module, "PARTS"):
            previous = benchmarks.get(name, {}).get("json")
            result = module.run(quick=args.quick, parts=parts, previous=previous)
        else:
            result = module.run(quick=args.quick)
        measured = f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {machine()}{' (quick)' if args.quick else ''}."
        benchmarks[name] = {"measured": measured, "markdown": result["markdown"], "json": result["json"]}
    print(write_results(benchmarks, args.quick).read_text())
    if not args.quick:
        from bench import choice_table

        choice_table.main([])
        print(f"docs/RUNNING.md: the choice table written from these results ({choice_table.BEGIN})")


if __name__ == "__main__":
    main()
