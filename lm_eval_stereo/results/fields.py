"""Type and range checks of what a results file records, made once where :class:`~lm_eval_stereo.results.run.Run`
reads it: a value the reader cannot use becomes :class:`Unusable` (shown as "unusable", never as a number) and a
:class:`Problem` naming the task and the field, which the report shows as a caveat and the export as an omission.

What is checked, for a task of a known benchmark (its declaration): a metric declared with an interval (a headline)
and its bounds are numbers (NaN allowed: counted elsewhere), the low bound not above the high one; the count of
bootstrap resamples on which a metric was undefined (``<m>_ci_undefined``) is an integer from 0 to the resamples
drawn; a bookkeeping count is a number not below 0. A headline outside its own interval is kept but named (no
verdict rests on it). lm_eval's ``<m>_stderr`` is a number or ``"N/A"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS
from lm_eval_stereo.core.metrics import BOOKKEEPING

#: lm_eval's stderr of a metric without one
NO_STDERR = "N/A"
_COUNTS = frozenset(entry.name for entry in BOOKKEEPING)


@dataclass(frozen=True)
class Unusable:
    """A recorded value the reader refused (``raw``, as the file holds it): shown as "unusable", never as a number."""

    raw: Any

    def __str__(self) -> str:
        return "unusable"

    def __repr__(self) -> str:
        return f"unusable ({self.raw!r})"[:120]


@dataclass(frozen=True)
class Problem:
    """A field of a results file the reader could not use, or a fact it cannot vouch for: the ``task`` (empty: the
    file), the ``field`` (a metric's name, or where in the file), the ``value`` found and what is wrong with it."""

    task: str
    field: str
    value: Any
    problem: str
    #: whether the reader refused the value (shown as unusable); False: kept, but no verdict rests on it
    unusable: bool = True

    @property
    def metric(self) -> str:
        """The metric the field qualifies (``ss`` for ``ss_ci_low``), empty for a field of no metric."""
        for suffix in ("_ci_low", "_ci_high", "_ci_undefined"):
            if self.field.endswith(suffix):
                return self.field.removesuffix(suffix)
        return self.field if "." not in self.field else ""

    def message(self, path: Any) -> str:
        where = f"{path}: {self.task}: field {self.field}" if self.task else f"{path}: field {self.field}"
        return f"{where}: {self.problem} (found {self.value!r:.80})"


def is_number(value: Any) -> bool:
    """Whether ``value`` is an int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number_problem(value: Any) -> str | None:
    return None if is_number(value) else f"not a number ({type(value).__name__})"


def _count_problem(value: Any, most: int | None = None) -> str | None:
    """Why ``value`` is no count (NaN allowed without ``most``: a count of nothing), None when it is one; with
    ``most``: an integer from 0 to ``most``."""
    if not is_number(value):
        return f"not a count ({type(value).__name__})"
    if most is None:
        return "negative" if value < 0 else None
    if math.isnan(value) or value < 0 or value > most or not float(value).is_integer():
        return f"not an integer from 0 to {most}"
    return None


def check_metrics(
    task: str, values: dict[str, Any], stderrs: dict[str, Any], declaration: Any
) -> tuple[dict[str, Any], dict[str, Any], list[Problem]]:
    """``values`` and ``stderrs`` of one task with every field it cannot use as :class:`Unusable`, and the
    :class:`Problem` of each (see the module docstring); ``declaration`` None (lm_eval's own tasks): only the
    stderrs are checked."""
    values, stderrs = dict(values), dict(stderrs)
    problems: list[Problem] = []

    def refuse(table: dict[str, Any], name: str, problem: str) -> None:
        problems.append(Problem(task, name, table[name], problem))
        table[name] = Unusable(table[name])

    for name, value in list(stderrs.items()):
        if value != NO_STDERR and not is_number(value):
            refuse(stderrs, f"{name}", f"stderr not a number or {NO_STDERR!r}")
    if declaration is None:
        return values, stderrs, problems
    for name in list(values):
        metric = declaration.metric(name)
        if metric is None:  # undeclared, or an interval bound: read with its metric
            continue
        if name in _COUNTS and (problem := _count_problem(values[name])):
            refuse(values, name, problem)
        elif (metric.has_interval or declaration.is_headline(name)) and (problem := _number_problem(values[name])):
            refuse(values, name, problem)
        if not declaration.has_interval(name):
            continue
        bounds = [bound for bound in declaration.interval_names(name) if bound in values]
        for bound in bounds:
            if problem := _number_problem(values[bound]):
                refuse(values, bound, problem)
        low, high = (values.get(bound) for bound in declaration.interval_names(name))
        if is_number(low) and is_number(high) and low > high:
            high_name = declaration.interval_names(name)[1]
            problems.append(Problem(task, high_name, (low, high), "the interval's low bound is above its high bound"))
            for bound in declaration.interval_names(name):
                values[bound] = Unusable(values[bound])
            low = high = None
        value = values.get(name)
        if is_number(value) and is_number(low) and is_number(high) and all(map(math.isfinite, (value, low, high))):
            if not low <= value <= high:
                problems.append(
                    Problem(task, name, value, f"outside its own 95% CI [{low}, {high}]: no verdict", False)
                )
        undefined = declaration.undefined_name(name)
        if undefined in values and (problem := _count_problem(values[undefined], DEFAULT_ITERS)):
            refuse(values, undefined, f"{problem}: the resamples its CI rests on are unknown")
    return values, stderrs, problems


def count(entry: Any, key: str) -> int | None:
    """A non-negative integer count of an lm_eval ``n-samples`` entry, None when it is not one."""
    value = entry.get(key) if isinstance(entry, dict) else None
    if is_number(value) and math.isfinite(value) and value >= 0 and float(value).is_integer():
        return int(value)
    return None
