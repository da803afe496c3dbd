"""The ideal value and direction of every metric the report shows, read from the benchmarks' metric declarations.

Each benchmark declares its metrics once, in Python (:mod:`lm_eval_stereo.core.metrics`): "higher"/"lower" is better
where the ideal is an end of the range (LMS, accuracy, undetermined share), "ideal" with a value where it lies inside
the range (SS 50, bias scores 0 on [-1, 1], g_s 1, female share 0.5). The report never gives the latter an arrow: it
shows the signed distance to the ideal, since a value on either side of it is a bias. Counts and text metrics have
no direction. :data:`UNDECLARED` holds the only ideal kept here: the report's reading of a metric declared without a
direction (the leakage coefficients).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from lm_eval_stereo.core.metrics import Metric

Direction = Literal["higher", "lower", "target"]


@dataclass(frozen=True)
class Ideal:
    """How a metric is best: ``higher``/``lower``, or ``target`` with the ideal ``value`` inside its range."""

    direction: Direction
    value: float | None = None

    @property
    def arrow(self) -> str:
        """``↑`` / ``↓`` for metrics best at an end of their range; nothing for target metrics."""
        return {"higher": "↑", "lower": "↓"}.get(self.direction, "")

    def distance(self, value: float) -> float | None:
        """Signed distance ``value - ideal`` of a target metric (None for the others and non-finite values)."""
        if self.direction != "target" or self.value is None or not math.isfinite(value):
            return None
        return value - self.value

    def describe(self) -> str:
        """One phrase for captions: the ideal and how to read the distance to it."""
        if self.direction == "target":
            return f"ideal {self.value:g}, in the middle of the range: either side is a bias (distance Δ shown)"
        return f"{self.direction} is better"


#: the report's reading of metrics declared without a direction (name or fnmatch pattern -> ideal): a leakage
#: coefficient against 0, no carry-over (the declaration leaves it undirected: the target language's own is positive)
UNDECLARED: dict[str, Ideal] = {
    "leak_coef_*": Ideal("target", 0.0),
}

_TEMPLATE_SUFFIX = re.compile(r"_t\d+$")


@cache
def _declarations() -> tuple[Metric, ...]:
    """Every metric the plugin's benchmarks declare."""
    from lm_eval_stereo.tasks.german_gender_bias.gerbbq import metrics as gerbbq_metrics
    from lm_eval_stereo.tasks.german_gender_bias.personas import metrics as persona_metrics
    from lm_eval_stereo.tasks.german_gender_bias.sexist_statements import metrics as sexist_statements_metrics
    from lm_eval_stereo.tasks.gest import metrics as gest_metrics
    from lm_eval_stereo.tasks.s_jsd import metrics as s_jsd_metrics
    from lm_eval_stereo.tasks.stereoset_multi import metrics as stereoset_metrics
    from lm_eval_stereo.tasks.stereotype_leakage import metrics as leakage_metrics

    metric_sets = (
        stereoset_metrics.METRICS,
        gest_metrics.score_metric_set("gest", ["t0", "t1"]),  # two templates: averaged and per-template names
        gest_metrics.MT_METRICS,
        gerbbq_metrics.METRICS,
        sexist_statements_metrics.METRICS,
        persona_metrics.STEREO_METRICS,
        persona_metrics.NEUTRAL_METRICS,
        persona_metrics.GENDER_METRICS,
        s_jsd_metrics.metric_set("s_jsd", causal=True),
    )
    metrics = [metric for metric_set in metric_sets for metric in metric_set.metrics]
    return (*metrics, *leakage_metrics.LEAKAGE_METRICS)


@cache
def declared() -> dict[str, Ideal]:
    """Every directed metric the plugin's benchmarks declare, by name (counts and text metrics left out)."""
    ideals: dict[str, Ideal] = {}
    for metric in _declarations():
        if metric.direction == "ideal":
            ideals.setdefault(metric.name, Ideal("target", metric.ideal))
        elif metric.direction in ("higher", "lower"):
            ideals.setdefault(metric.name, Ideal(metric.direction))
    return ideals


def is_detail(name: str) -> bool:
    """Whether a benchmark declares ``name`` a view of a headline (``detail``: one stereotype, one template), shown
    with the benchmark's details rather than in the summary; ``<headline>_t<i>`` is one template's view."""
    stripped = _TEMPLATE_SUFFIX.sub("", name)
    return name in _names(detail=True) or (stripped != name and stripped in _names(detail=False))


@cache
def _names(detail: bool) -> frozenset[str]:
    """Declared metrics that are views of a headline (``detail``), or the declared bootstrap headlines."""
    return frozenset(metric.name for metric in _declarations() if metric.detail == detail and (detail or metric.ci))


def ideal_for(name: str) -> Ideal | None:
    """The declared ideal of ``name`` (per-template ``_t<i>`` variants as their average), else :data:`UNDECLARED`."""
    known = declared()
    for candidate in (name, _TEMPLATE_SUFFIX.sub("", name)):
        if candidate in known:
            return known[candidate]
    return next((ideal for pattern, ideal in UNDECLARED.items() if fnmatchcase(name, pattern)), None)
