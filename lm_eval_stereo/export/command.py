"""``lm-eval-stereo export PATH... --format eee|model-card [--output DIR] [--all-runs] [--relationship R]
[--organization NAME]``: publish the runs below the paths, with the report's run selection (the newest run per model
and task; every run with ``--all-runs``).

Everything left out (a NaN, a headline without an interval, a distance without items, an unreadable samples file) is
counted on stderr with its reason; a problem that stops the export is one line and exit status 2."""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import TYPE_CHECKING

from lm_eval_stereo.cli_args import Parser, input_path, output_folder

if TYPE_CHECKING:
    from lm_eval_stereo.export.collect import RunExport
    from lm_eval_stereo.export.headlines import Omission

#: EEE's ``evaluator_relationship``: the evaluator's relation to the model's developer
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
PROG = "lm-eval-stereo export"


def _parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Publish lm_eval runs as Every Eval Ever records or a model-card table, with 95%% CIs.",
    )
    parser.add_argument(
        "paths", nargs="+", type=input_path, metavar="PATH", help="results_*.json files or folders holding them"
    )
    parser.add_argument("--format", choices=("eee", "model-card"), required=True, help="what to write")
    parser.add_argument("--output", type=output_folder, metavar="DIR", help="folder of the records (--format eee)")
    parser.add_argument("--all-runs", action="store_true", help="every run instead of the newest per model and task")
    parser.add_argument(
        "--relationship", choices=RELATIONSHIPS, default="third_party", help="evaluator to model developer"
    )
    parser.add_argument(
        "--organization", default="unknown", metavar="NAME", help="the organisation publishing the records"
    )
    return parser


def _say_omissions(omissions: list[Omission]) -> None:
    """One stderr line per reason, counting what it concerns."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for omission in omissions:
        by_reason[omission.reason].append(f"{omission.task}/{omission.metric}" if omission.metric else omission.task)
    for reason, names in by_reason.items():
        print(f"{PROG}: {len(names)} x {reason}: {', '.join(names)}", file=sys.stderr)


def _no_bias_benchmark(exports: list[RunExport]) -> str:
    tasks = sorted({task for export in exports for task in export.run.tasks})
    return (
        f"no bias benchmark of lm-eval-stereo in these {len(exports)} run(s): they hold only lm_eval's own tasks "
        f"({', '.join(tasks) or 'none'}); nothing exported"
    )


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.format == "eee" and args.output is None:
        parser.error("argument --output: --format eee needs --output DIR")
    # imported once the arguments are known to be good: the declarations import every benchmark (and torch)
    from lm_eval_stereo.export.collect import collect
    from lm_eval_stereo.export.model_card import table
    from lm_eval_stereo.export.write import write_run
    from lm_eval_stereo.results.run import ReportError, load_runs, newest_runs

    try:
        runs, skipped = load_runs(args.paths)
    except ReportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    for finding in skipped:
        print(f"{PROG}: warning: {finding.message}", file=sys.stderr)
    exports = [collect(run, tasks) for run, tasks in newest_runs(runs, args.all_runs)]
    if not any(export.has_plugin_task for export in exports):
        print(f"{PROG}: error: {_no_bias_benchmark(exports)}", file=sys.stderr)
        return 2
    omissions = [omission for export in exports for omission in export.omissions]
    if args.format == "model-card":
        print("\n\n".join(table(export) for export in exports if export.has_plugin_task))
    else:
        for export in exports:
            try:
                written, omitted = write_run(
                    export, args.output, relationship=args.relationship, organization=args.organization
                )
            except OSError as exc:
                parser.fail("--output", f"{args.output}: cannot be written ({exc.strerror or exc})")
            omissions += omitted
            for path in written:
                print(path)
    _say_omissions(omissions)
    results = sum(len(export.headlines) for export in exports)
    print(
        f"{PROG}: {len(exports)} run(s), {results} result(s), {len(omissions)} not published in full (counted above)",
        file=sys.stderr,
    )
    return 0
