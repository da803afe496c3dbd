"""The task list of one run of ``make demo``, from the benchmarks' declarations (``Benchmark.demo_tasks``):
``python scripts/demo_tasks.py tiny`` prints ``stereoset_multi,gest,...`` in the registry's order. The Makefile reads
its task lists here, so a new benchmark joins the demo from its own declaration."""

from __future__ import annotations

import argparse
import sys

import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
from lm_eval_stereo.core.registry import DEMO_RUNS, benchmarks


def demo_tasks(run: str) -> list[str]:
    """The tasks and groups of ``run`` (one of :data:`DEMO_RUNS`), benchmark by benchmark, each once."""
    return list(dict.fromkeys(task for bench in benchmarks() for task in bench.demo_tasks.get(run, ())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", choices=DEMO_RUNS)
    print(",".join(demo_tasks(parser.parse_args(argv).run)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
