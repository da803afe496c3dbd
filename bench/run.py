"""Run every ``bench/bench_*.py`` module and write ``bench/results.md`` and ``bench/results.json``.

``python -m bench.run [--quick] [NAME ...]``: NAME selects modules (e.g. ``stereoset``); ``--quick`` uses smaller inputs.
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
    sections = [f"# lm-eval-stereo benchmarks\n\nMeasured {time.strftime('%Y-%m-%d %H:%M')} on {machine}.\n"]
    payload: dict = {"machine": machine, "quick": args.quick, "benchmarks": {}}
    for name in names:
        print(f"== bench_{name}", flush=True)
        result = importlib.import_module(f"bench.bench_{name}").run(quick=args.quick)
        sections.append(result["markdown"])
        payload["benchmarks"][name] = result["json"]
    (HERE / "results.md").write_text("\n".join(sections))
    (HERE / "results.json").write_text(json.dumps(payload, indent=2) + "\n")
    print((HERE / "results.md").read_text())


if __name__ == "__main__":
    main()
