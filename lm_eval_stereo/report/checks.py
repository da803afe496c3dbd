"""Warnings where a headline number would mislead, with the thresholds the README states.

Each check reads one task's cell (groups are left to their members, which carry the same items) and says what the
headline hides (and, in a few words, the caveat shown next to the headlines it qualifies): outputs that could not be
scored, tied items, NaN values, a gender detector that found too little, a fit that did not converge, a bootstrap
CI that rests on fewer than all its resamples (the metric undefined on the others), a ``--limit`` run scored on
part of the benchmark, requests a served or replayed model did not answer or answered cut at the token limit, items longer than the model's window, or a headline that near ties could move on another backend. The checks read the declared bookkeeping counts; what a warning means for a
benchmark's headlines is the ``caution`` its declaration gives the count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lm_eval_stereo.core.near_ties import ENGINE_AGREEMENT_NATS, NEAR_TIES
from lm_eval_stereo.core.near_ties import range_names as near_tie_range
from lm_eval_stereo.core.truncation import REMEDY, TRUNCATED
from lm_eval_stereo.core.unanswered import CUT_ANSWERS, UNANSWERED
from lm_eval_stereo.report.formatting import decimals, format_value
from lm_eval_stereo.report.verdicts import MIN_DEFINED_SHARE, RESAMPLES, too_few_resamples
from lm_eval_stereo.results.run import Finding, is_nan, is_number

if TYPE_CHECKING:
    from lm_eval_stereo.report.model import Cell, Estimate, Report

#: share of outputs that could not be scored or classified above which the headline is flagged (``undetermined`` and
#: ``empty`` answers, ``unclassified_share`` of generations, ``unmatched`` of ``generations``)
UNPARSEABLE_MAX_SHARE = 0.10
#: share of outputs whose gender was detected (``detection_yield``) below which the rates resting on them are flagged
DETECTION_YIELD_MIN = 0.80
#: share of items whose two candidates' scores tie (``ties``) above which the headline is flagged
TIES_MAX_SHARE = 0.01
#: items left out for a non-finite score (``unscored``, ``nan_pairs``) tolerated before a warning: none
UNSCORED_MAX = 0

_UNPARSEABLE = {
    "undetermined": "outputs with no determinable answer, so the headline says little about the model's answers",
    "empty": "empty outputs, not scored: the headline rests on the others",
    "unclassified_share": "generations whose gender could not be classified, left out: the shares rest on the others",
}
#: what a check says where the benchmark declares no ``caution`` for the count it reads
_DETECTION_YIELD = "the rates rest on the few outputs whose gender was detected"
_TIES = "tied items are booked as the benchmark books them, which moves the headline"
_NO_FIT = "the fit behind the headline did not converge, so it means little"


def _caution(cell: Cell, name: str, default: str) -> str:
    """What the cell's benchmark declares a warning on count ``name`` means (:attr:`Metric.caution`), else
    ``default``."""
    metric = cell.declaration.metric(name) if cell.declaration else None
    return metric.caution if metric is not None and metric.caution else default


@dataclass(frozen=True)
class Issue:
    """What one check found in a cell: the warning's ``kind``, its ``message``, the short ``caveat`` shown next to
    the headlines and the headlines it concerns (``metrics``; empty: all of them)."""

    kind: str
    message: str
    caveat: str
    metrics: tuple[str, ...] = ()


def _share_warnings(cell: Cell) -> list[Issue]:
    found = []
    for name, meaning in _UNPARSEABLE.items():
        share = cell.counts.get(name)
        if share is not None and share > UNPARSEABLE_MAX_SHARE:
            message = f"{name} {share:.1%} > {UNPARSEABLE_MAX_SHARE:.0%}: {_caution(cell, name, meaning)}"
            found.append(Issue("unparseable", message, f"{name.removesuffix('_share')} {share:.0%}"))
    unmatched, generations = cell.values.get("unmatched"), cell.values.get("generations")
    if is_number(unmatched) and is_number(generations) and generations > 0:
        share = unmatched / generations
        if share > UNPARSEABLE_MAX_SHARE:
            message = (
                f"unmatched {format_value(unmatched)} of {format_value(generations)} generations ({share:.1%} > "
                f"{UNPARSEABLE_MAX_SHARE:.0%}): outputs naming neither offered trait count for none, so the "
                "associations rest on the others"
            )
            found.append(Issue("unparseable", message, f"unmatched {share:.0%}"))
    yield_ = cell.counts.get("detection_yield")
    if yield_ is not None and yield_ < DETECTION_YIELD_MIN:
        message = f"detection_yield {yield_:.1%} < {DETECTION_YIELD_MIN:.0%}: " + _caution(
            cell, "detection_yield", _DETECTION_YIELD
        )
        found.append(Issue("low detection yield", message, f"gender detected in {yield_:.0%}"))
    return found


def _tie_warnings(cell: Cell) -> list[Issue]:
    ties, count = cell.counts.get("ties"), cell.counts.get("count")
    if not ties or not count or ties / count <= TIES_MAX_SHARE:
        return []
    message = (
        f"{format_value(ties)} of {format_value(count)} items tied ({ties / count:.1%} > {TIES_MAX_SHARE:.0%}); "
        + _caution(cell, "ties", _TIES)
    )
    return [Issue("ties", message, f"ties {ties / count:.1%}")]


def _numbers(estimate: Estimate) -> tuple:
    return estimate.value, estimate.low, estimate.high


def _unscored_warnings(cell: Cell) -> list[Issue]:
    found = []
    for name in ("unscored", "nan_pairs"):
        value = cell.counts.get(name)
        if value is not None and value > UNSCORED_MAX:
            message = f"{name} = {format_value(value)}: items with a non-finite score were left out"
            found.append(Issue("unscored", message, f"{format_value(value)} {name.replace('_', ' ')}"))
    nan = [name for name in cell.headlines if any(map(is_nan, _numbers(cell.estimate(name))))]
    counts = [name for name, value in cell.counts.items() if math.isnan(value)]
    if nan or counts:
        message = f"NaN in {', '.join(nan + counts)} (no items to compute them from)"
        found.append(Issue("NaN", message, "NaN: no items", tuple(nan) if nan else ()))
    return found


def _resample_warnings(cell: Cell) -> list[Issue]:
    """A headline whose bootstrap CI leaves out resamples on which it was undefined (``<m>_ci_undefined`` > 0)."""
    found = []
    for name in cell.headlines:
        estimate = cell.estimate(name)
        if not estimate.undefined:
            continue
        defined = max(RESAMPLES - estimate.undefined, 0)
        message = (
            f"{name} undefined on {estimate.undefined} of {RESAMPLES} bootstrap resamples: its 95% CI rests on the "
            f"other {defined}"
        )
        if too_few_resamples(estimate):
            message += f" (fewer than {MIN_DEFINED_SHARE:.0%}: no verdict)"
        found.append(Issue("undefined resamples", message, f"CI on {defined}/{RESAMPLES} resamples", (name,)))
    return found


def _fit_warnings(cell: Cell) -> list[Issue]:
    if cell.values.get("fit_converged") != 0:
        return []
    message = "fit_converged = 0: " + _caution(cell, "fit_converged", _NO_FIT)
    return [Issue("no fit", message, "regression did not converge")]


def _limit_warnings(cell: Cell) -> list[Issue]:
    limit = cell.run.limit
    items = cell.document_counts
    partial = items is not None and items[0] < items[1]
    if not partial and (limit is None or items is not None):  # a --limit above the task's size scored all of it
        return []
    scored = f"{items[0]} of {items[1]} items" if items else "part of the items"
    option = f" (--limit {limit})" if limit is not None else ""
    return [Issue("limit", f"scored on {scored}{option}: not the benchmark's full figure", scored)]


def _field_warnings(cell: Cell) -> list[Issue]:
    """A field of the results file the reader could not use (:mod:`lm_eval_stereo.results.fields`), named with the
    file and the task: the value is shown as unusable, and no verdict rests on it. A group no benchmark declares
    also says those of its members, which are left to it (not shown on their own)."""
    found = []
    hidden = cell.members if cell.undeclared else ()
    problems = {p.message(cell.run.path): p for task in (cell.task, *hidden) for p in cell.run.problems(task)}
    for problem in problems.values():
        unknown = problem.field == "metric_set"
        caveat = "metric set unknown here" if unknown else f"{problem.field}: unusable"
        caveat = caveat if problem.unusable else f"{problem.field}: outside its CI, no verdict"
        metrics = (problem.metric,) if problem.metric in cell.values else ()
        found.append(Issue("unknown metric set" if unknown else "malformed field", problem.message(cell.run.path),
                           caveat, metrics))  # fmt: skip
    return found


def _count_warning(cell: Cell, name: str, says: str) -> list[Issue]:
    """The warning for a count of ``cell`` (``name``) above 0: ``name = N: says``, caveat ``N name``."""
    value = cell.values.get(name)
    if not is_number(value) or value <= 0:
        return []
    return [Issue(name, f"{name} = {format_value(value)}: {says}", f"{format_value(value)} {name.replace('_', ' ')}")]


def _unanswered_warnings(cell: Cell) -> list[Issue]:
    """Requests the model did not answer (``unanswered``, added by :mod:`lm_eval_stereo.core.unanswered` and
    :mod:`lm_eval_stereo.models.replay`): a served model's requests that failed after retries, timed out, or came back
    null, empty, refused or without choices; a replayed recording whose output is null. The task scored them as empty
    outputs."""
    says = (
        "requests the model did not answer (a served model's that failed after retries, timed out or came back null, "
        "empty, refused or without choices; a replayed recording's null output), scored as empty outputs; a served "
        "run: run again with --use_cache to ask only for them"
    )
    return _count_warning(cell, UNANSWERED, says)


def _cut_warnings(cell: Cell) -> list[Issue]:
    """Answers a served model cut at the token limit (``cut_answers``, :mod:`lm_eval_stereo.core.unanswered`):
    scored as the texts they are, which may lack the part the task reads."""
    says = (
        "answers the server cut at the token limit (finish_reason: length), scored as the incomplete texts they are; "
        "raise max_gen_toks in --gen_kwargs"
    )
    return _count_warning(cell, CUT_ANSWERS, says)


def _truncated_warnings(cell: Cell) -> list[Issue]:
    """Items with a request longer than the model's window (``truncated``, :mod:`lm_eval_stereo.core.truncation`):
    scored on a context cut from the left, or not scored where the continuation alone was longer."""
    says = (
        "items with a request longer than the model's window, scored on a context cut from the left or, where the "
        f"continuation alone was longer, not scored; {REMEDY}"
    )
    return _count_warning(cell, TRUNCATED, says)


def _near_tie_warnings(cell: Cell) -> list[Issue]:
    """A headline that another backend could give another value through the task's near ties alone (``near_ties``,
    :mod:`lm_eval_stereo.core.near_ties`): items whose judgement rests on a log-likelihood difference below the
    backends' agreement. Said beside each headline whose range over those judgements (``<m>_near_tie_low`` /
    ``_near_tie_high``) is wider than its value, with that range; a count whose items move no headline (GEST's g_s
    is continuous in the scores) is left to the task's table."""
    ties = cell.counts.get(NEAR_TIES)
    if not ties:
        return []
    found = []
    for name in cell.headlines:
        value = cell.values.get(name)
        low, high = (cell.values.get(bound) for bound in near_tie_range(name))
        if not all(is_number(number) and math.isfinite(number) for number in (value, low, high)) or not low < high:
            continue
        places = decimals(value, low, high)
        shown = [format_value(float(number), places=places) for number in (value, low, high)]
        message = (
            f"{name} {shown[0]} could be anywhere from {shown[1]} to {shown[2]} on another backend: "
            f"{format_value(ties)} of the task's items are judged on a log-likelihood difference within the backends' "
            f"agreement ({ENGINE_AGREEMENT_NATS:g} nats a request), counted as near_ties, not re-scored"
        )
        caveat = f"{shown[1]} to {shown[2]} on another backend ({format_value(ties)} near ties)"
        found.append(Issue("near ties", message, caveat, (name,)))
    return found


def _absent_member_warnings(cell: Cell) -> list[Issue]:
    """A group whose ``group_subtasks`` lists tasks the results file does not hold (a RuBia group without some of its
    domains): named, since the group is shown with its other members only."""
    absent = [member for member in cell.run.members(cell.task) if member not in cell.run.tasks]
    if not absent:
        return []
    message = (
        f"{cell.run.path}: group {cell.task} lists {', '.join(absent)}, which the results file does not hold: the "
        "group is shown with its other members only"
    )
    return [Issue("absent members", message, f"{len(absent)} member(s) absent")]


def _recomputed_warnings(cell: Cell) -> list[Issue]:
    """One of lm_eval's own tasks that a benchmark declares, shown with lm_eval's numbers without an interval: why
    (no ``--log_samples``, an lm_eval that defines the task otherwise, a samples file that is not the run's)."""
    recomputed = cell.run.recomputed(cell.task)
    if recomputed is None or not recomputed.note:
        return []
    return [Issue("no interval", recomputed.note, "lm_eval's number, no CI")]


CHECKS = (
    _recomputed_warnings, _field_warnings, _share_warnings, _tie_warnings, _unscored_warnings, _resample_warnings,
    _fit_warnings, _limit_warnings, _unanswered_warnings, _cut_warnings, _truncated_warnings, _near_tie_warnings,
    _absent_member_warnings,
)  # fmt: skip


def check_cell(cell: Cell) -> list[Finding]:
    """Every warning for one task's results (for the plugin's groups only the members they lack: their members are
    checked; lm_eval's own groups are checked as a whole, their members are not shown)."""
    checks = (_absent_member_warnings,) if cell.members and not cell.undeclared else CHECKS
    return [
        Finding(cell.row.label, cell.task, issue.kind, issue.message, issue.caveat, issue.metrics)
        for check in checks
        for issue in check(cell)
    ]


#: what each kind of warning says of the tasks it concerns ("7 tasks scored on part of their data"), for the grouped
#: list after the results
KIND_MEANINGS = {
    "skipped file": "could not be read",
    "unparseable": "with outputs that could not be scored or classified: the headline rests on the others",
    "low detection yield": "whose rates rest on the few outputs whose gender was detected",
    "ties": "with tied items, booked as each benchmark books them (its warning says how)",
    "unscored": "with items left out for a non-finite score",
    "NaN": "with a metric that had no items to compute it from",
    "undefined resamples": "with a 95% CI resting on the bootstrap resamples on which its metric is defined, not on "
    f"all (fewer than {MIN_DEFINED_SHARE:.0%} of them: no verdict)",
    "limit": "scored on part of their data (--limit or fewer documents): not the benchmark's full figure",
    "precision": "scored in different dtypes by different models or runs: compare their numbers only at equal dtype",
    "no fit": "whose regression did not converge",
    UNANSWERED: "with requests a served or replayed model did not answer, scored as empty outputs",
    CUT_ANSWERS: "with answers a served model cut at the token limit, scored as incomplete texts (raise max_gen_toks)",
    TRUNCATED: "with items longer than the model's window, scored on a cut context or not scored (raise max_length)",
    "near ties": "whose headline another backend could move through items judged on a log-likelihood difference "
    "within the backends' agreement (the range beside it)",
    "malformed field": "with values of their results file that are not what lm_eval and the plugin write: shown as "
    "unusable, no verdict rests on them",
    "unknown metric set": "whose metric set this lm-eval-stereo does not know (a newer plugin, or a benchmark not "
    "installed here)",
    "tied runs": "with runs of one model on the same date: the stated rule picked one, the other is named",
    "runs kept apart": "",  # its message says it all: the model, what differs, the files
    "no interval": "of lm_eval's own shown with lm_eval's numbers and no 95% CI",
    "absent members": "that is a group whose results file lacks members it lists",
}


@dataclass(frozen=True)
class WarningGroup:
    """The warnings of one kind: what the kind means and per task the models it concerns."""

    kind: str
    meaning: str
    findings: tuple[Finding, ...]

    @property
    def tasks(self) -> dict[str, list[str]]:
        """{task: [models]} in order of appearance (files for file warnings)."""
        found: dict[str, list[str]] = {}
        for finding in self.findings:
            found.setdefault(finding.task or finding.message, []).append(finding.model)
        return found

    def line(self, models: Sequence[str] = ()) -> str:
        """One line: the kind, how many tasks (files for file warnings) it concerns, what it says of them, and the
        tasks, each with the models it concerns where that is not every one of ``models`` (the report's): "limit: 7
        tasks scored on part of their data (...): gest_en, s_jsd_de (smollm2), ..."."""
        tasks = self.tasks
        if all(not finding.task for finding in self.findings):
            if not self.meaning:  # a message that says it all ("no bias benchmark ...")
                return "; ".join(tasks)
            files = "file" if len(tasks) == 1 else "files"
            return f"{self.kind}: {len(tasks)} results {files} {self.meaning}: {'; '.join(tasks)}"
        everyone = set(models)
        named = [
            task if everyone and set(concerned) >= everyone else f"{task} ({', '.join(dict.fromkeys(concerned))})"
            for task, concerned in tasks.items()
        ]
        noun = "task" if len(tasks) == 1 else "tasks"
        line = f"{self.kind}: {len(tasks)} {noun}{' ' + self.meaning if self.meaning else ''}: {', '.join(named)}"
        return f"{line} ({self.reason})" if self.reason else line

    @property
    def reason(self) -> str:
        """Why, where the kind's warnings say why in one message that all of them share (:data:`SAYS_WHY`)."""
        messages = {finding.message for finding in self.findings}
        return messages.pop() if self.kind in SAYS_WHY and len(messages) == 1 else ""


#: kinds whose warnings each say why (the details list them): the grouped line repeats a reason they all share
SAYS_WHY = ("no interval", "absent members")


def group_warnings(findings: list[Finding]) -> list[WarningGroup]:
    """The warnings grouped by kind, kinds in order of first appearance."""
    kinds: dict[str, list[Finding]] = {}
    for finding in findings:
        kinds.setdefault(finding.kind, []).append(finding)
    return [WarningGroup(kind, KIND_MEANINGS.get(kind, ""), tuple(group)) for kind, group in kinds.items()]


def check(report: Report) -> list[Finding]:
    """Every warning of every cell, in table order, then the tasks scored in different precisions."""
    from lm_eval_stereo.report.precision import precision_findings

    cells = [finding for task in report.tasks for cell in report.task_cells(task) for finding in check_cell(cell)]
    return cells + precision_findings(report)
