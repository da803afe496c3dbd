"""The ``lm-eval-stereo`` console script.

``lm-eval-stereo tasks-path`` prints the installed task folder; ``lm-eval-stereo build-tiny-model DIR`` writes the
seeded tiny models used by the demo and the tests; ``lm-eval-stereo report OUTPUT_PATH`` prints the headline metrics
with their confidence intervals from an lm_eval results file or output folder; ``lm-eval-stereo inventory --tokenizer
NAME`` prints the requests and tokens per task (:mod:`lm_eval_stereo.inventory`); anything else is passed unchanged to lm_eval's own command line,
with the plugin's tasks and models registered whatever ``LM_EVAL_STEREO_AUTOLOAD`` says. ``--tasks list`` (which
lm_eval 0.4.13 replaced by ``lm_eval ls tasks``) works as before (see :mod:`lm_eval_stereo._autoload`).
"""

from __future__ import annotations

import argparse
import sys

from lm_eval_stereo import tasks_path


def _build_tiny_model(argv: list[str]) -> int:
    from lm_eval_stereo.testing.tiny_models import BUILDERS

    parser = argparse.ArgumentParser(prog="lm-eval-stereo build-tiny-model")
    parser.add_argument("directory")
    parser.add_argument("--kind", choices=sorted(BUILDERS), default="causal")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = BUILDERS[args.kind](args.directory, seed=args.seed)
    print(path)
    return 0


def _report(argv: list[str]) -> int:
    from lm_eval_stereo.report import load_results, render

    parser = argparse.ArgumentParser(prog="lm-eval-stereo report")
    parser.add_argument("path", help="a results_*.json file or an lm_eval --output_path folder (newest results)")
    args = parser.parse_args(argv)
    print(render(load_results(args.path)))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["tasks-path"]:
        print(tasks_path())
        return 0
    if argv[:1] == ["build-tiny-model"]:
        return _build_tiny_model(argv[1:])
    if argv[:1] == ["report"]:
        return _report(argv[1:])
    if argv[:1] == ["inventory"]:
        from lm_eval_stereo.inventory import main as inventory

        return inventory(argv[1:])
    from lm_eval_stereo._autoload import activate

    activate()
    from lm_eval.__main__ import cli_evaluate

    sys.argv = ["lm-eval-stereo", *argv]
    cli_evaluate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
