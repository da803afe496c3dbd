"""``lm-eval-stereo export PATH... --format eee|model-card [--output DIR] [--model-id [PRETRAINED=]ORG/NAME]
[--availability A] [--all-runs] [--relationship R] [--organization NAME]``: publish the runs below the paths, with the
report's run selection (the newest run per model and task; every run with ``--all-runs``).

A record names its model by the hub id of the weights (:mod:`.identity`): ``pretrained=`` where that is a hub id, else
``--model-id``; a run on a local folder without one stops the export. Everything left out (a NaN, a headline without
an interval, a distance without items, an unreadable samples file, a task with nothing to publish) and every warning
(a field of a results file that cannot be used, a file skipped, runs tied or kept apart) is counted on stderr after
the summary, one line per kind naming its tasks (:func:`grouped_lines`); ``--details`` lists each with its reason. A
problem that stops the export is one line and exit status 2: a record that cannot be written whole inside ``--output``
(a full disk, a read-only folder, a link that leads outside) is named with the reason, and the earlier record at its
path stays as it was."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lm_eval_stereo.cli_args import Parser, input_path, output_folder

if TYPE_CHECKING:
    import argparse

    from lm_eval_stereo.export.collect import RunExport
    from lm_eval_stereo.export.headlines import Omission
    from lm_eval_stereo.export.identity import ModelIdentity
    from lm_eval_stereo.results.selection import RunSelection

#: EEE's ``evaluator_relationship``: the evaluator's relation to the model's developer
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
PROG = "lm-eval-stereo export"
#: the tasks a grouped line names before "N more" (``--details`` lists them all)
NAMED = 12


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
    parser.add_argument(
        "--model-id",
        action="append",
        default=[],
        metavar="[PRETRAINED=]ORG/NAME",
        help="the hub id of the weights of a run on a local folder (several models: PRETRAINED=ORG/NAME each); "
        "a hub id in pretrained= is used as it is",
    )
    parser.add_argument(
        "--details", action="store_true", help="list every omission and warning with its reason after the summary"
    )
    parser.add_argument(
        "--availability",
        choices=("open_weights", "closed_weights", "unknown"),
        default="unknown",
        help="the model's weights: model_info.additional_details.model_availability",
    )
    return parser


@dataclass(frozen=True)
class Said:
    """One thing the export says after its summary: its ``kind``, the ``task`` (or file) it concerns and ``why``."""

    kind: str
    task: str
    why: str


def _warnings(selection: RunSelection, exports: list[RunExport]) -> list[Said]:
    """The runs tied or kept apart, and each field of a results file the reader could not use (once per run:
    :mod:`lm_eval_stereo.results.fields`)."""
    said = [Said(finding.kind, finding.message.partition(": ")[0], finding.message) for finding in selection.warnings]
    for export in exports:
        problems = {p.message(export.run.path): p for task in export.run.tasks for p in export.run.problems(task)}
        for message, problem in problems.items():  # a file's own problems are every task's: said once
            kind = "unknown metric set" if problem.field == "metric_set" else "malformed field"
            said.append(Said(kind, problem.task or export.run.path.name, message))
    return said


def grouped_lines(omissions: list[Omission], warnings: list[Said]) -> list[str]:
    """One line per kind of omission or warning, in order of first appearance: how many, what the kind means, the
    tasks (or files) it concerns."""
    from lm_eval_stereo.export.headlines import OMISSION_KINDS

    said = [Said(o.kind, o.task, "") for o in omissions] + warnings
    kinds: dict[str, dict[str, None]] = {}
    counts: dict[str, int] = {}
    for entry in said:
        kinds.setdefault(entry.kind, {})[entry.task] = None
        counts[entry.kind] = counts.get(entry.kind, 0) + 1
    lines = []
    for kind, tasks in kinds.items():
        named = list(tasks)[:NAMED] + ([f"{len(tasks) - NAMED} more"] if len(tasks) > NAMED else [])
        where = f", in {len(tasks)} task{'s' if len(tasks) > 1 else ''}" if counts[kind] != len(tasks) else ""
        lines.append(f"  {kind}: {counts[kind]} {OMISSION_KINDS.get(kind, 'warning(s)')}{where}: {', '.join(named)}")
    return lines


def _detail_lines(omissions: list[Omission], warnings: list[Said]) -> list[str]:
    """Every omission and warning with its reason (``--details``)."""
    lines = [f"  {o.kind}: {o.task}/{o.metric}: {o.reason}" if o.metric else f"  {o.kind}: {o.task}: {o.reason}"
             for o in omissions]  # fmt: skip
    return lines + [f"  {w.kind}: {w.why}" for w in warnings]


def _no_bias_benchmark(exports: list[RunExport]) -> str:
    """The line of an export with nothing of a bias benchmark to publish: the benchmark tasks whose headlines were
    all left out, else what the runs hold instead of one (:func:`undeclared_held`)."""
    from lm_eval_stereo.results.declarations import undeclared_held

    declared = sorted(
        {task for e in exports for task in e.run.tasks if e.run.declaration(task) and not e.run.members(task)}
    )
    if declared:
        why = "; ".join(f"{o.task}/{o.metric}: {o.reason}" for e in exports for o in e.omissions if o.metric)
        return (
            f"nothing of a bias benchmark to publish in these {len(exports)} run(s): every headline of "
            f"{', '.join(declared)} was left out ({why or 'none could be read'}); nothing exported"
        )
    held = undeclared_held((export.run, task) for export in exports for task in export.run.tasks)
    return f"no bias benchmark of lm-eval-stereo in these {len(exports)} run(s): they hold {held}; nothing exported"


def _identities(exports: list[RunExport], entries: list[str], availability: str) -> list[ModelIdentity]:
    """The model of each run (:func:`~lm_eval_stereo.export.identity.identify`); IdentityError when one has none,
    when one plain ``--model-id`` would name several local models, or a ``PRETRAINED=`` names no run."""
    from lm_eval_stereo.export.identity import IdentityError, identify, needs_model_id, parse_model_ids

    plain, by_pretrained = parse_model_ids(entries)
    pretrained = {export.run.model_args.get("pretrained", "") for export in exports}
    unknown = sorted(set(by_pretrained) - pretrained)
    if unknown:
        raise IdentityError(f"{unknown[0]}=...: no run has pretrained={unknown[0]}")
    local = {
        export.run.model_args.get("pretrained", export.run.model)
        for export in exports
        if needs_model_id(export.run) and export.run.model_args.get("pretrained", "") not in by_pretrained
    }
    if plain is not None and len(local) > 1:
        raise IdentityError(
            f"{plain} would name {len(local)} models ({', '.join(sorted(local))}): give PRETRAINED=ORG/NAME for each"
        )
    return [identify(export.run, plain, by_pretrained, availability=availability) for export in exports]


def _publish(
    exports: list[RunExport], args: argparse.Namespace, parser: Parser, plain: str | None, by_pretrained: dict
) -> list[Omission]:
    """The model-card tables printed, or each run's Every Eval Ever files written (their paths printed); what was
    not published of them."""
    from lm_eval_stereo.core.whole_files import WriteError
    from lm_eval_stereo.export.headlines import Omission
    from lm_eval_stereo.export.identity import IdentityError, display_name
    from lm_eval_stereo.export.model_card import table
    from lm_eval_stereo.export.write import write_run

    if args.format == "model-card":
        names = [display_name(export.run, plain, by_pretrained) for export in exports]
        print("\n\n".join(table(export, name) for export, name in zip(exports, names) if export.has_plugin_task))
        return []
    try:
        identities = _identities(exports, args.model_id, args.availability)
    except IdentityError as exc:
        parser.fail("--model-id", str(exc))
    omissions = []
    for export, identity in zip(exports, identities):
        if not export.headlines:
            why = "no record: nothing of the run to publish (its tasks are counted)"
            omissions.append(Omission(export.run.path.name, "", why, "nothing to publish"))
            continue
        try:
            written, omitted = write_run(
                export, args.output, identity, relationship=args.relationship, organization=args.organization
            )
        except WriteError as exc:  # a full disk, a read-only folder, a link leading outside --output
            parser.exit(2, f"{PROG}: error: {exc}\n")
        omissions += omitted
        for path in written:
            print(path)
    return omissions


def _summary(exports: list[RunExport], omissions: list[Omission], warnings: list[Said], details: bool) -> list[str]:
    """What the export says when it is done: runs and results published, then its omissions and warnings grouped by
    kind (each with its reason under ``--details``)."""
    results = sum(len(export.headlines) for export in exports)
    summary = f"{PROG}: {len(exports)} run(s), {results} result(s) published"
    if omissions or warnings:
        summary += f"; {len(omissions)} not published in full, {len(warnings)} warning(s):"
    lines = [summary, *grouped_lines(omissions, warnings)]
    if details:
        lines += [f"{PROG}: every omission and warning:", *_detail_lines(omissions, warnings)]
    elif omissions or warnings:
        lines.append(f"{PROG}: each with its reason: --details")
    return lines


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.format == "eee" and args.output is None:
        parser.error("argument --output: --format eee needs --output DIR")
    from lm_eval_stereo.export.identity import IdentityError, parse_model_ids

    try:  # a --model-id that is no hub id ends the command before any run is read
        plain, by_pretrained = parse_model_ids(args.model_id)
    except IdentityError as exc:
        parser.fail("--model-id", str(exc))
    # imported once the arguments are known to be good: the declarations import every benchmark (and torch)
    from lm_eval_stereo.export.collect import collect
    from lm_eval_stereo.results.run import ReportError, load_runs
    from lm_eval_stereo.results.selection import select_runs

    try:
        runs, skipped = load_runs(args.paths)
    except ReportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    selection = select_runs(runs, args.all_runs)
    exports = [collect(run, tasks) for run, tasks in selection.chosen]
    warnings = [Said(f.kind, f.message.partition(": ")[0], f.message) for f in skipped]
    warnings += _warnings(selection, exports)
    if not any(export.has_plugin_task for export in exports):
        for warning in warnings:
            print(f"{PROG}: warning: {warning.why}", file=sys.stderr)
        print(f"{PROG}: error: {_no_bias_benchmark(exports)}", file=sys.stderr)
        return 2
    omissions = [omission for export in exports for omission in export.omissions]
    omissions += _publish(exports, args, parser, plain, by_pretrained)
    print("\n".join(_summary(exports, omissions, warnings, args.details)), file=sys.stderr)
    return 0
