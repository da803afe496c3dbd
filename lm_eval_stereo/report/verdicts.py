"""Verdicts and the Reading built on them.

A headline against its ideal, from its 95% CI: ``above`` (the CI lies entirely above the ideal), ``below``, or
``consistent`` (the ideal is inside the CI, bounds included). Only metrics whose ideal lies inside their range get a
verdict; directed ones (LMS, accuracy) and those without a CI get none, and so does a CI without width (every
resample gave the same value, e.g. a GEST MT rate over translations whose gender was never detected): it says nothing
about how small an effect the sample could have shown. Nor does a value that is no finite number or lies outside its
own CI (a malformed results file: :mod:`lm_eval_stereo.results.fields`), nor a bootstrap CI that rests on fewer than
:data:`MIN_DEFINED_SHARE` of the resamples (the metric was undefined on the others, ``<m>_ci_undefined``): it
describes the resamples on which the metric happens to be defined, not the sample; one that rests on fewer than all
carries a caveat (:mod:`lm_eval_stereo.report.checks`).

Said in the metric's own words (its declaration's ``above``/``below``: StereoSet SS above 50 "prefers stereotypes")
with the distance to the ideal; ``consistent`` says how small an effect the sample could have shown: "no detectable
bias with n = 200 (±6.9 at 95%)", the CI's half-width.

The report's opening **Reading**: per model, one sentence per benchmark that says where each of its headlines with
a middle ideal stands against it (:mod:`lm_eval_stereo.report.verdicts`).
"""

from __future__ import annotations

import math
from typing import Literal

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS
from lm_eval_stereo.report.formatting import decimals, format_estimate, format_value, places_against
from lm_eval_stereo.report.model import Cell, Estimate, Report, Row, summary_columns
from lm_eval_stereo.report.naming import language, metric_title
from lm_eval_stereo.results.fields import is_number
from lm_eval_stereo.results.ideals import Ideal

Verdict = Literal["above", "below", "consistent"]
#: bookkeeping counts that give a task's sample size, in order of preference (else its documents)
SAMPLE_SIZES = ("count", "pairs", "n_classified", "n_generations")
#: the bootstrap resamples behind every ``ci`` metric's interval (:data:`lm_eval_stereo.core.bootstrap.DEFAULT_ITERS`)
RESAMPLES = DEFAULT_ITERS
#: the share of resamples a bootstrap CI must rest on (the metric defined there) to support a verdict: 95%, so that
#: the resamples left out could not by themselves hold either 2.5% tail of the interval
MIN_DEFINED_SHARE = 0.95


def defined_share(estimate: Estimate) -> float | None:
    """The share of the bootstrap resamples on which the metric was defined, None where the results do not say."""
    if estimate.undefined is None:
        return None
    return max(0.0, RESAMPLES - estimate.undefined) / RESAMPLES


def too_few_resamples(estimate: Estimate) -> bool:
    """Whether the CI rests on fewer than :data:`MIN_DEFINED_SHARE` of the resamples."""
    share = defined_share(estimate)
    return share is not None and share < MIN_DEFINED_SHARE


def verdict(estimate: Estimate, ideal: Ideal | None) -> Verdict | None:
    """Where the CI lies against a middle ideal; None without such an ideal or a finite CI."""
    if ideal is None or ideal.direction != "target" or ideal.value is None:
        return None
    low, high, value = estimate.low, estimate.high, estimate.value
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) or low == high:
        return None
    if not is_number(value) or not math.isfinite(value) or not low <= value <= high:  # a value its CI does not hold
        return None
    if too_few_resamples(estimate):
        return None
    if low > ideal.value:
        return "above"
    return "below" if high < ideal.value else "consistent"


def sample_size(cell: Cell) -> int | None:
    """The items a cell's headlines rest on: its first of :data:`SAMPLE_SIZES`, else its documents."""
    counts = cell.counts
    found = next((counts[name] for name in SAMPLE_SIZES if name in counts and math.isfinite(counts[name])), None)
    if found is None and cell.document_counts is not None:
        found = cell.document_counts[0]
    return None if found is None else int(found)


def cell_verdict(cell: Cell, name: str) -> Verdict | None:
    """The verdict of metric ``name`` of a cell."""
    return verdict(cell.estimate(name), cell.ideal(name))


def describe(cell: Cell, name: str) -> str | None:
    """The verdict in words: "prefers stereotypes, +7.3 from 50" or "no detectable bias with n = 200 (±6.9 at
    95%)"; None without a verdict."""
    estimate, ideal = cell.estimate(name), cell.ideal(name)
    found = verdict(estimate, ideal)
    if found is None and ideal and ideal.value is not None and too_few_resamples(estimate):
        defined = RESAMPLES - int(estimate.undefined or 0)
        return (
            f"no verdict: its 95% CI rests on {max(defined, 0)} of {RESAMPLES} resamples (< {MIN_DEFINED_SHARE:.0%}; "
            "the metric is undefined on the others)"
        )
    if (
        found is None
        and estimate.low is not None
        and estimate.low == estimate.high
        and ideal
        and ideal.value is not None
    ):
        return "no verdict: its 95% CI has no width (every resample gave the same value)"
    if found is None or ideal is None or ideal.value is None or estimate.low is None or estimate.high is None:
        return None
    places = places_against(decimals(estimate.value, estimate.low, estimate.high), ideal, estimate.low, estimate.high)
    if found == "consistent":
        half = format_value((estimate.high - estimate.low) / 2, places=places)
        n = sample_size(cell)
        return f"no detectable bias with n = {'?' if n is None else n} (±{half} at 95%)"
    metric = cell.declaration.metric(name) if cell.declaration else None
    words = metric.reading(found) if metric is not None else f"{found} the ideal"
    distance = format_value(float(estimate.value) - ideal.value, "+", places)
    return f"{words}, {distance} from {ideal.value:g}"


def model_sentences(report: Report, row: Row) -> list[str]:
    """One sentence per benchmark of the model: each headline whose CI lies off the ideal in the metric's words
    ("de SS 57.3 [55.0, 59.6], prefers stereotypes, +7.3 from 50"), then the others at once with their sample sizes
    and CI half-widths. Benchmarks without a headline that has a verdict are left out."""
    found: list[tuple[Cell, str, str, str]] = []  # cell, metric, verdict, its words
    for task, name in summary_columns(report):
        cell = report.cell(task, row)
        if cell is None or name not in cell.values or cell.declaration is None or cell.declaration.benchmark is None:
            continue
        verdict, words = cell_verdict(cell, name), describe(cell, name)
        if verdict is not None and words is not None:
            found.append((cell, name, verdict, words))
    places = _places([cell for cell, *_ in found])
    off: dict[str, list[str]] = {}
    consistent: dict[str, list[tuple[str, Cell, str]]] = {}
    for cell, name, verdict, words in found:
        title = cell.declaration.benchmark.title  # type: ignore[union-attr]
        where = f"{places[cell.task]} {metric_title(cell, name)}"
        off.setdefault(title, [])
        if verdict == "consistent":
            consistent.setdefault(title, []).append((where, cell, name))
        else:
            off[title].append(
                f"{where} {format_estimate(cell.estimate(name), cell.ideal(name), stderr=False, delta=False)}, {words}"
            )
    sentences = []
    for title, parts in off.items():
        if rest := consistent.get(title):
            parts = [*parts, _consistent(rest, others=bool(parts))]
        sentences.append(f"{title}: {'; '.join(parts)}.")
    return sentences


def _places(cells: list[Cell]) -> dict[str, str]:
    """How the sentences name each task: its language, or its task id where the language alone is ambiguous (none,
    or two tasks of one benchmark in the same language: MBBQ's log-likelihood and generative tasks)."""
    keys = {cell.task: (cell.declaration.benchmark.title, language(cell)) for cell in cells}  # type: ignore[union-attr]
    named = [key for key in keys.values() if key[1]]
    return {task: key[1] if key[1] and named.count(key) == 1 else task for task, key in keys.items()}


def _consistent(found: list[tuple[str, Cell, str]], others: bool) -> str:
    """ "no detectable bias on de SS, en SS (n = 100–500, ±4.1–9.5 at 95%)"."""
    sizes = sorted({size for _, cell, _ in found if (size := sample_size(cell)) is not None})
    halves = sorted((cell.estimate(name).high - cell.estimate(name).low) / 2 for _, cell, name in found)  # type: ignore[operator]
    n = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}–{sizes[-1]}" if sizes else "?"
    places = decimals(
        *(bound for _, cell, name in found for bound in (cell.estimate(name).low, cell.estimate(name).high))
    )
    low, high = format_value(halves[0], places=places), format_value(halves[-1], places=places)
    half = low if low == high else f"{low}–{high}"
    where = ", ".join(where for where, _, _ in found)
    return f"no detectable bias {'on the others' if others and len(found) > 3 else 'on ' + where} (n = {n}, ±{half} at 95%)"


def reading_lines(report: Report) -> list[str]:
    """Per model with at least one verdict: its label and its sentences."""
    lines = []
    for row in report.rows:
        if sentences := model_sentences(report, row):
            lines.append(f"{row.label}: {' '.join(sentences)}")
    return lines
