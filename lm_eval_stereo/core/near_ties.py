"""Near ties: item judgements that rest on a log-likelihood difference smaller than the backends' agreement.

Every causal-LM backend the plugin runs (``hf``, ``hf-prefix``, ``vllm``, ``vllm-prefix``, a served model through
``local-completions`` or ``local-completions-prefix``) computes the same log-likelihoods up to float noise: the engines
sum in different orders. The parity tests bound that noise per request: :data:`ENGINE_AGREEMENT_NATS`. A benchmark
that judges an item by comparing log-likelihoods (the stereotype beats the anti-stereotype, the answer with the highest
log-likelihood is picked, the pro-trope sentence has the lower perplexity) can therefore judge an item differently on
another backend wherever the difference it compares is smaller than what the noise can move it by: a *near tie*.

A score that sums ``r`` requests' log-likelihoods and divides them by ``u`` units (tokens, characters) moves by at most
``r * ENGINE_AGREEMENT_NATS / u`` (:func:`bound`); a comparison of two scores is a near tie when their difference is
at most the sum of their two bounds (:func:`near_tie`), e.g. 2e-3 nats for two single unnormalised requests. Exact
ties are near ties too: another backend may break them. A judgement over a monotone function of log-likelihoods (the
JSD distances of S_JSD) is a near tie when the ranges its two sides can take overlap (:func:`overlap`).

Near ties are counted, never re-scored: every comparison task's item says whether it is one (:data:`NEAR_TIE`) and,
where its judgement feeds a headline, the values the item would have had its near-tie judgements gone the other way
(:data:`ALTERNATIVES`, each a dict of the fields that change). The task reports per task the count
(:data:`NEAR_TIES`) and, per headline, the lowest and highest value the headline takes with each near-tie item
judged either way (:func:`headline_ranges`, ``<headline>_near_tie_low`` / ``_near_tie_high``): equal to the headline
where no near tie can move it (a headline continuous in the log-likelihoods, such as GEST's g_s, moves by the noise of
every item instead, and no item's judgement enters it). The report says beside a headline whose range is wider than
its value that another backend could give another value (:mod:`lm_eval_stereo.report.checks`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: per-request log-likelihood difference (nats) within which the backends agree: what the parity tests assert between
#: ``hf`` and ``vllm``, ``vllm-prefix`` and served ``vllm serve`` replicas (``tests/backends/test_vllm.py``,
#: ``tests/backends/test_vllm_prefix.py``: 1e-3), between ``hf-prefix`` and ``hf`` (``tests/backends/test_hf_prefix.py``: 1e-4, inside
#: it); the largest differences measured were 1.7e-4 and 2.4e-4 (vLLM against ``hf``, float32) and 2.1e-4 nats on held-out
#: tasks. The tested bound, not the measured one: a backend that passes the tests may differ by this much.
ENGINE_AGREEMENT_NATS = 1e-3
#: the per-task count of items with a near-tie judgement (a results field of every comparison task)
NEAR_TIES = "near_ties"
#: the item field: whether one of the item's judgements is a near tie
NEAR_TIE = "near_tie"
#: the item field: the values the item would have had its near-tie judgements gone the other way (a list of dicts of
#: the fields that change; absent or empty where no judgement that feeds a headline is a near tie)
ALTERNATIVES = "near_tie_alternatives"
#: the results fields ``<headline>_near_tie_low`` / ``<headline>_near_tie_high``
RANGE_SUFFIXES = ("near_tie_low", "near_tie_high")


def bound(requests: int = 1, units: float = 1.0) -> float:
    """The most a score moves between backends that sums ``requests`` log-likelihoods divided by ``units``."""
    return requests * ENGINE_AGREEMENT_NATS / units if units > 0 else math.inf


def near_tie(
    one: float, other: float, one_bound: float = ENGINE_AGREEMENT_NATS, other_bound: float = ENGINE_AGREEMENT_NATS
) -> bool:
    """Whether comparing the scores ``one`` and ``other``, which may each move between backends by their bounds
    (:func:`bound`), could come out otherwise on another backend (False where either is not a finite number: such items
    are counted as unscored)."""
    if not (math.isfinite(one) and math.isfinite(other)):
        return False
    return abs(one - other) <= one_bound + other_bound


def overlap(one: tuple[float, float], other: tuple[float, float]) -> bool:
    """Whether two quantities that can take any value in the ranges ``(low, high)`` could compare either way."""
    values = (*one, *other)
    if not all(math.isfinite(value) for value in values):
        return False
    return one[0] <= other[1] and other[0] <= one[1]


def rivals(scores: Sequence[float], bounds: Sequence[float]) -> list[int]:
    """The options another backend could pick instead of the first highest of ``scores`` (each moving by its bound):
    those within the chosen one's bound plus their own."""
    if not scores or not all(math.isfinite(score) for score in scores):
        return []
    chosen = list(scores).index(max(scores))
    return [
        index
        for index, score in enumerate(scores)
        if index != chosen and near_tie(scores[chosen], score, bounds[chosen], bounds[index])
    ]


def reversed_pair(one: float, other: float) -> list[tuple[float, float]]:
    """The other orders a strict comparison of ``one`` and ``other`` could take, as value pairs for (one, other): the
    two swapped where they differ; where they tie, each a hair above the other."""
    if one != other:
        return [(other, one)]
    return [(math.nextafter(one, math.inf), other), (one, math.nextafter(other, math.inf))]


def changes(nominal: Mapping[str, Any], alternative: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``alternative`` that differ from ``nominal`` (an alternative of :data:`ALTERNATIVES`)."""
    return {key: value for key, value in alternative.items() if nominal.get(key) != value}


def marked(alternatives: Sequence[Mapping[str, Any]], tie: bool | None = None) -> dict[str, Any]:
    """The item fields of a comparison: :data:`NEAR_TIE` (``tie``, else whether there are alternatives) and the
    :data:`ALTERNATIVES` that differ from the item."""
    found = [dict(alternative) for alternative in alternatives if alternative]
    return {NEAR_TIE: bool(found) if tie is None else bool(tie or found), ALTERNATIVES: found}


def count(items: Sequence[Mapping[str, Any]]) -> int:
    """The items with a near-tie judgement."""
    return sum(bool(item.get(NEAR_TIE)) for item in items)


def fields(
    summarize: Callable[[list[Mapping[str, Any]]], Mapping[str, Any]],
    items: Sequence[Mapping[str, Any]],
    headlines: Sequence[str],
    values: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """The results fields of a comparison task (:func:`names`): :data:`NEAR_TIES` and each headline's range
    (:func:`headline_ranges`)."""
    return {NEAR_TIES: count(items), **headline_ranges(summarize, items, headlines, values)}


def range_names(headline: str) -> tuple[str, str]:
    """``<headline>_near_tie_low``, ``<headline>_near_tie_high``."""
    low, high = RANGE_SUFFIXES
    return f"{headline}_{low}", f"{headline}_{high}"


def names(headlines: Sequence[str]) -> tuple[str, ...]:
    """The results fields of a comparison task: :data:`NEAR_TIES` and the range of each headline."""
    return (NEAR_TIES, *(name for headline in headlines for name in range_names(headline)))


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _replaced(items: Sequence[Mapping[str, Any]], chosen: Mapping[int, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [{**item, **chosen[index]} if index in chosen else item for index, item in enumerate(items)]


class _Quiet:
    """Silence the metric code's warnings while the ranges re-run it (each re-run would repeat the run's warnings)."""

    def __enter__(self) -> None:
        self.before = logging.root.manager.disable
        logging.disable(logging.WARNING)

    def __exit__(self, *_: Any) -> None:
        logging.disable(self.before)


def headline_ranges(
    summarize: Callable[[list[Mapping[str, Any]]], Mapping[str, Any]],
    items: Sequence[Mapping[str, Any]],
    headlines: Sequence[str],
    values: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """For each headline, ``<headline>_near_tie_low`` and ``_near_tie_high``: the lowest and highest value
    ``summarize`` gives it with each near-tie item judged either way (its value or one of its :data:`ALTERNATIVES`).

    Each item's alternatives are tried one at a time; the low end takes, for every item, the alternative that lowers
    the headline most, the high end the one that raises it most (the exact extremes for a headline that adds up its
    items' judgements, as a share does; a close bound for a ratio of such sums). ``values``: the headlines already
    computed from ``items`` (else computed here). No headline's value is changed: these are separate fields."""
    nominal = dict(values) if values is not None else dict(summarize(list(items)))
    centre = {headline: _number(nominal.get(headline)) for headline in headlines}
    found = {name: centre[headline] for headline in headlines for name in range_names(headline)}
    options = [(index, alternative) for index, item in enumerate(items) for alternative in item.get(ALTERNATIVES) or ()]
    if not options or not headlines:
        return found
    with _Quiet():
        moved = [
            (index, alternative, summarize(_replaced(items, {index: alternative}))) for index, alternative in options
        ]
        for headline in headlines:
            if math.isnan(centre[headline]):
                continue
            for side, pick in zip(range_names(headline), (min, max)):
                best: dict[int, tuple[float, Mapping[str, Any]]] = {}
                for index, alternative, result in moved:
                    value = _number(result.get(headline))
                    if math.isnan(value) or pick(value, centre[headline]) == centre[headline]:
                        continue
                    if index not in best or pick(value, best[index][0]) == value:
                        best[index] = (value, alternative)
                extreme = centre[headline]
                if best:
                    joint = _number(summarize(_replaced(items, {i: alt for i, (_, alt) in best.items()})).get(headline))
                    candidates = [value for value, _ in best.values()] + [joint, extreme]
                    extreme = pick(value for value in candidates if not math.isnan(value))
                found[side] = extreme
    return found
