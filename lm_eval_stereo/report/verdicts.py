"""A headline against its ideal, from its 95% CI: ``above`` (the CI lies entirely above the ideal), ``below``, or
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
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS
from lm_eval_stereo.report.formatting import decimals, format_value, places_against
from lm_eval_stereo.report.model import Estimate
from lm_eval_stereo.results.fields import is_number
from lm_eval_stereo.results.ideals import Ideal

if TYPE_CHECKING:
    from lm_eval_stereo.report.model import Cell

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
    if found is None and cell.items is not None:
        found = cell.items[0]
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
