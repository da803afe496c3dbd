"""The interval of a distance to the ideal, ``|x - ideal|``, from the resampled statistic.

The distance of each bootstrap resample is taken from the statistic of that resample, with the task's own
:class:`~lm_eval_stereo.core.metrics.Resampling` (data, strata) and the seed and iterations the task used, so its
interval is that of the distance, not a folding of the signed interval (which is wrong wherever the signed interval
holds the ideal). The same resamples also give the signed interval again; when that differs from the results file,
the items are not those the results were computed from (another run, a truncated file) and no interval is given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS, DEFAULT_SEED, BlockStatistic, Statistic, bootstrap, data_length
from lm_eval_stereo.core.bootstrap import Interval as BootInterval
from lm_eval_stereo.core.metrics import MetricSet

#: how far a recomputed signed interval bound may be from the results file's (floating-point noise only)
REPRODUCED_TOLERANCE = 1e-9
_DISTANCE = "|distance|"


class ItemsMismatch(ValueError):
    """The logged items do not reproduce the results file's interval: they are not the run's items."""


@dataclass(frozen=True)
class Distances:
    """The logged items of one task (sorted by key, as the task resampled them) and its metric set."""

    items: Sequence[Mapping[str, Any]]
    metric_set: MetricSet
    seed: int = DEFAULT_SEED
    iters: int = DEFAULT_ITERS

    def of(self, name: str, ideal: float, signed: tuple[float, float] | None) -> tuple[BootInterval | None, str]:
        """The bootstrap interval of ``|name - ideal|``, or None and why not. ``signed``: the results file's
        interval of ``name``, which the same resamples must reproduce (:class:`ItemsMismatch` when they do not)."""
        items = list(self.items)
        for resampling in self.metric_set.resampling:
            data = resampling.data(items)
            if data_length(data) == 0:
                continue
            if name not in resampling.statistic(data):
                continue
            strata = resampling.strata(items) if resampling.strata is not None else None

            found = bootstrap(
                data, _with_distance(resampling.statistic, name, ideal), strata=strata, iters=self.iters, seed=self.seed
            )
            again, distance = found.get(name), found.get(_DISTANCE)
            if distance is None or not math.isfinite(distance.low) or not math.isfinite(distance.high):
                return None, "no finite resampled distance"
            if signed is not None and again is not None and not _same(again, signed):
                raise ItemsMismatch(
                    f"the logged items give the interval [{again.low:.6g}, {again.high:.6g}], the results "
                    f"[{signed[0]:.6g}, {signed[1]:.6g}]: the samples file is not this run's (or is truncated)"
                )
            return distance, ""
        return None, "no item data to resample (no scored items, or a NaN item score)"


def _with_distance(statistic: Statistic, name: str, ideal: float) -> Statistic:
    """``statistic``'s value ``name`` and its distance ``|value - ideal|`` (of a block of resamples at once where
    ``statistic`` takes blocks)."""
    if isinstance(statistic, BlockStatistic):

        def of_block(columns: Any, compute=statistic.of_block) -> dict[str, np.ndarray]:
            value = np.asarray(compute(columns)[name], dtype=float)
            return {name: value, _DISTANCE: np.abs(value - ideal)}

        return BlockStatistic(of_block)

    def one(resample: Any) -> dict[str, float]:
        value = float(statistic(resample)[name])
        return {name: value, _DISTANCE: abs(value - ideal)}

    return one


def _same(found: BootInterval, expected: tuple[float, float]) -> bool:
    return all(
        math.isclose(a, b, rel_tol=REPRODUCED_TOLERANCE, abs_tol=REPRODUCED_TOLERANCE)
        for a, b in zip((found.low, found.high), expected)
    )
