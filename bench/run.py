"""Run every ``bench/bench_*.py`` module and write ``bench/results.md`` and ``bench/results.json``.

``python -m bench.run [--quick] [NAME ...]``: NAME selects modules (e.g. ``stereoset``; the other benchmarks' last
results are kept, each with the time and machine it was measured on); ``--quick`` uses smaller inputs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help="benchmark modules to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="smaller inputs, for a smoke run")
    args = parser.parse_args()
    available = sorted(p.stem[len("bench_") :] for p in HERE.glob("bench_*.py"))
    names = args.names or available
    unknown = sorted(set(names) - set(available))
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available)}")
    machine = f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, torch {torch.__version__}"
    previous = HERE / "results.json"
    benchmarks: dict = json.loads(previous.read_text()).get("benchmarks", {}) if previous.exists() else {}
    for name in names:
        print(f"== bench_{name}", flush=True)
        result = importlib.import_module(f"bench.bench_{name}").run(quick=args.quick)
        measured = f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {machine}{' (quick)' if args.quick else ''}."
        benchmarks[name] = {"measured": measured, "markdown": result["markdown"], "json": result["json"]}
    sections = ["# lm-eval-stereo benchmarks\n\nWritten by `make bench` (`python -m bench.run`).\n"]
    sections += [f"{entry['markdown']}\n{entry['measured']}\n" for _, entry in sorted(benchmarks.items())]
    (HERE / "results.md").write_text("\n".join(sections))
    previous.write_text(json.dumps({"benchmarks": benchmarks}, indent=2) + "\n")
    print((HERE / "results.md").read_text())


if __name__ == "__main__":
    main()
