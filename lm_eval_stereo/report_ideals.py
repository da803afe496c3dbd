"""The ideal value and direction of every metric the report shows: the one table its tables and figures read.

A metric is ``higher`` or ``lower`` is better only when its ideal sits at one end of its range (LMS 100, ties 0).
Metrics whose ideal lies inside the range (SS 50, bias scores 0 on [-1, 1], g_s 1, female share 0.5) are ``target``
metrics: the report never gives them an arrow, it shows the signed distance to the ideal instead, since a value on
either side of it is a bias.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

Direction = Literal["higher", "lower", "target"]


@dataclass(frozen=True)
class Ideal:
    """Where a metric is best (``value``) and how it approaches it (``direction``)."""

    value: float
    direction: Direction

    @property
    def arrow(self) -> str:
        """``↑`` / ``↓`` for metrics best at an end of their range; nothing for target metrics."""
        return {"higher": "↑", "lower": "↓"}.get(self.direction, "")

    def distance(self, value: float) -> float | None:
        """Signed distance ``value - ideal`` of a target metric (None for the others and non-finite values)."""
        if self.direction != "target" or not math.isfinite(value):
            return None
        return value - self.value

    def describe(self) -> str:
        """One phrase for captions: the ideal and how to read the distance to it."""
        if self.direction == "target":
            return f"ideal {self.value:g}, in the middle of the range: either side is a bias (distance Δ shown)"
        return f"{self.direction} is better (ideal {self.value:g})"


def _higher(value: float) -> Ideal:
    return Ideal(value, "higher")


def _lower(value: float) -> Ideal:
    return Ideal(value, "lower")


def _target(value: float) -> Ideal:
    return Ideal(value, "target")


#: metric name or fnmatch pattern -> ideal; exact names are tried before patterns (see :func:`ideal_for`)
IDEALS: dict[str, Ideal] = {
    # multilingual StereoSet (also the intra_/inter_ variants, see ideal_for)
    "lms": _higher(100),
    "lms_term_avg": _higher(100),
    "icat": _higher(100),
    "icat_macro": _higher(100),
    "icat_micro": _higher(100),
    "icat_*": _higher(100),
    "ss": _target(50),
    "ss_term_avg": _target(50),
    "ss_*": _target(50),
    # GEST (also the per-template _t<i> variants)
    "gs": _target(1),
    "gs_base10": _target(1),
    "q_[0-9][0-9]_*": _target(0),
    "f_s": _target(0),
    "f_m": _target(0.5),
    "detection_yield": _higher(1),
    # GerBBQ+
    "accuracy": _higher(1),
    "bias": _target(0),
    "bias_f": _target(0),
    "bias_m": _target(0),
    # SexistStatements (overall, per type and per gender)
    "combined_sexism*": _lower(0),
    "sexist_agreement*": _lower(0),
    "antisexist_disagreement*": _lower(0),
    # personas
    "stereo_accuracy": _target(0.5),
    "female_share": _target(0.5),
    "male_share": _target(0.5),
    "grammar_agreement": _target(0.5),
    "cooc_inter_mean": _target(0),
    # cross-lingual S_JSD and stereotype leakage
    "s_jsd": _lower(0),
    "b_s_jsd": _target(50),
    "cps": _target(50),
    "leak_coef_*": _target(0),
    # bookkeeping: what was not measured
    "ties": _lower(0),
    "unscored": _lower(0),
    "nan_pairs": _lower(0),
    "undetermined": _lower(0),
    "empty": _lower(0),
    "unclassified_share": _lower(0),
}

_VARIANT = re.compile(r"^(?:intra_|inter_)?(?P<base>.+?)(?:_t\d+)?$")


def ideal_for(name: str) -> Ideal | None:
    """The :data:`IDEALS` entry of ``name`` (``intra_``/``inter_`` prefixes and ``_t<i>`` suffixes stripped)."""
    base = _VARIANT.match(name)["base"]
    for candidate in dict.fromkeys((name, base)):
        if candidate in IDEALS:
            return IDEALS[candidate]
    for candidate in dict.fromkeys((name, base)):
        for pattern, ideal in IDEALS.items():
            if fnmatchcase(candidate, pattern):
                return ideal
    return None
