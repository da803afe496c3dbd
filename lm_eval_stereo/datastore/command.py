"""The ``lm-eval-stereo data`` command line.

- ``data list [--benchmarks B,...] [--json]``: per file its source, repository, commit, path, pin, licence, size and
  whether the cache holds it;
- ``data fetch [--benchmarks B,...]``: every pinned file into the cache, verified, with a progress bar on a terminal;
  copied from the offline mirror when ``LM_EVAL_STEREO_DATA_DIR`` is set, else downloaded;
- ``data mirror DIR [--benchmarks B,...]``: the mirror layout from the cache, for machines without network, with
  each source's licence;
- ``data verify DIR [--benchmarks B,...]``: every pinned file of a mirror present and matching its pin.

``B`` is a benchmark folder name (:func:`~lm_eval_stereo.datastore.catalogue.benchmark_names`). Exit status 0 when
everything is in place; 1 when a file is missing, cannot be had or differs from its pin (one line per problem on
stderr, naming the file; a fetch without any network stops at the first file, in one line that says how to get the
data, and a cache or mirror that cannot hold a file stops at that file, in one line naming it and the reason); 2 for
a bad argument (one line, before anything is read or written).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from lm_eval_stereo.cli_args import Parser, input_folder, output_folder
from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import CacheWriteError, DataError, NoNetworkError
from lm_eval_stereo.core.upstream import Source
from lm_eval_stereo.datastore.catalogue import (
    Cached,
    PinnedFile,
    benchmark_names,
    pinned_files,
    selected_sources,
    users,
)
from lm_eval_stereo.datastore.mirror import verify_mirror, write_mirror

PROG = "lm-eval-stereo data"


def benchmark_list(text: str) -> tuple[str, ...]:
    """Comma-separated benchmark folder names, each known."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(
            f"expected benchmark names separated by commas, from {', '.join(benchmark_names())}"
        )
    unknown = [name for name in names if name not in benchmark_names()]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(benchmark_names())}"
        )
    return tuple(dict.fromkeys(names))


def licence_line(source: Source) -> str:
    """The source's licence, with what it allows a mirror where it allows no re-hosting."""
    return source.licence if source.rehost else f"{source.licence}: for your own use, never re-host"


def megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _size(entry: PinnedFile) -> str:
    return "unknown" if entry.pin.size is None else f"{entry.pin.size:,}"


def _record(entry: PinnedFile, cached: Cached) -> dict[str, object]:
    return {
        "source": entry.source.name,
        "repository": entry.source.repo,
        "commit": entry.source.commit,
        "path": entry.path,
        "pin": str(entry.pin),
        "licence": licence_line(entry.source),
        "size": entry.pin.size,
        "cached": cached.value,
        "url": entry.source.url(entry.path),
        "benchmarks": users(entry.source),
    }


def list_files(args: argparse.Namespace) -> int:
    selected = selected_sources(args.benchmarks)
    files = pinned_files(selected)
    states = {entry: entry.cached() for entry in files}
    if args.json:
        print(json.dumps([_record(entry, states[entry]) for entry in files], indent=2))
        return 0
    for source in selected:
        print(f"{source.name}: {source.repo} @ {source.commit} (benchmarks: {', '.join(users(source))})")
        print(f"  licence: {licence_line(source)}")
        print(f"  {'cached':<8}  {'bytes':>11}  {'pin':<22}  path")
        for entry in (entry for entry in files if entry.source is source):
            pin = f"{entry.pin.kind}:{entry.pin.digest[:12]}"
            print(f"  {states[entry].value:<8}  {_size(entry):>11}  {pin:<22}  {entry.path}")
    known = [entry.pin.size for entry in files if entry.pin.size is not None]
    unknown = f" ({len(files) - len(known)} of unknown size)" if len(known) < len(files) else ""
    cached = sum(state is Cached.YES for state in states.values())
    print(f"{len(files)} files, {megabytes(sum(known))}{unknown}; {cached} cached in {sources.cache_dir()}")
    if (root := sources.mirror_dir()) is not None:
        print(f"the data layer reads the offline mirror {sources.DATA_DIR_ENV}={root}, not the cache")
    return 0


def fetch_files(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    files = pinned_files(selected_sources(args.benchmarks))
    root = sources.mirror_dir()
    problems = 0
    total = sum(entry.pin.size or 0 for entry in files)
    with tqdm(total=total, unit="B", unit_scale=True, desc="data fetch", file=sys.stderr, disable=None) as bar:
        for entry in files:
            try:
                sources.cache_file(entry.source.name, entry.path, progress=bar.update)
            except (NoNetworkError, CacheWriteError) as exc:  # every other file would fail the same way
                bar.close()
                print(f"{PROG} fetch: {exc}", file=sys.stderr)
                return 1
            except DataError as exc:
                problems += 1
                bar.write(f"{PROG} fetch: {entry.name}: {exc}", file=sys.stderr)
    origin = f", copied from the offline mirror {root}" if root is not None else ""
    print(f"{len(files) - problems} of {len(files)} files verified in the cache {sources.cache_dir()}{origin}")
    return 1 if problems else 0


def mirror_files(args: argparse.Namespace) -> int:
    selected = selected_sources(args.benchmarks)
    outcome = write_mirror(args.directory, pinned_files(selected))
    for source in selected:
        print(f"{source.name}: {licence_line(source)}")
    for problem in outcome.problems:
        print(f"{PROG} mirror: {problem}", file=sys.stderr)
    print(
        f"{outcome.files} files ({megabytes(outcome.size)}) in {args.directory}; on the offline machines: "
        f"export {sources.DATA_DIR_ENV}={args.directory.resolve()}"
    )
    return 1 if outcome.problems else 0


def verify_files(args: argparse.Namespace) -> int:
    outcome = verify_mirror(args.directory, selected_sources(args.benchmarks))
    for problem in outcome.problems:
        print(f"{PROG} verify: {problem}", file=sys.stderr)
    wrong = f"; {len(outcome.problems)} problem(s)" if outcome.problems else ""
    print(f"{args.directory}: {outcome.files} files match their pins{wrong}")
    return 1 if outcome.problems else 0


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description="List, fetch, mirror and verify the pinned upstream data files.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    subcommands = {
        "list": (list_files, "every pinned file: source, repository, commit, path, pin, licence, size, cached"),
        "fetch": (fetch_files, "every pinned file into the cache, verified (from the mirror when one is set)"),
        "mirror": (mirror_files, "write the offline mirror layout DIR/<source>/<path> from the cache"),
        "verify": (verify_files, "check that the mirror DIR holds every pinned file with its pinned bytes"),
    }
    for name, (function, summary) in subcommands.items():
        command = commands.add_parser(name, help=summary, description=summary)
        command.set_defaults(run=function)
        if name == "mirror":
            command.add_argument("directory", type=output_folder, metavar="DIR", help="a new or existing folder")
        if name == "verify":
            command.add_argument("directory", type=input_folder, metavar="DIR", help="an offline mirror")
        command.add_argument(
            "--benchmarks",
            type=benchmark_list,
            metavar="B,...",
            help=f"only these benchmarks (default: all of {', '.join(benchmark_names())})",
        )
        if name == "list":
            command.add_argument("--json", action="store_true", help="one JSON record per file")
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    return args.run(args)
