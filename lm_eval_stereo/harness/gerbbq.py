"""Task glue of the GerBBQ+ tasks (``gerbbq_amb``/``gerbbq_dis`` generative, ``gerbbq_mc_*`` log-likelihood).

Per document, ``process_results`` returns one dict of generation counts (see
:data:`lm_eval_stereo.metrics.gerbbq.COUNT_FIELDS`) plus the booked letters, under every metric name; the
aggregations below pool the counts of all documents. Generative tasks keep every repeated generation (their filter
passes the whole list of responses through), so ``repeats: N`` is scored in full.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from lm_eval_stereo.classify.gerbbq import LETTERS, answer_part, reference_letter
from lm_eval_stereo.datasets.german_gender_bias import load_gerbbq
from lm_eval_stereo.metrics import gerbbq as metric

TRUE_STRINGS = ("1", "true", "yes", "on")


def _flag(value: Any) -> bool:
    return value is True or str(value).strip().lower() in TRUE_STRINGS


def load_dataset(condition: str, exclude_undetermined: Any = False, **_: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` of the GerBBQ+ tasks: the published items of ``condition`` (``amb``/``dis``).

    ``--metadata '{"exclude_undetermined": true}'`` leaves undetermined answers out of the figures instead of
    booking them as "unbekannt" (the reference's choice and the default).
    """
    docs = load_gerbbq(condition)
    exclude = _flag(exclude_undetermined)
    for doc in docs:
        doc["condition"] = condition
        doc["exclude_undetermined"] = exclude
    return {"test": datasets.Dataset.from_list(docs)}


def doc_to_choice(doc: Mapping[str, Any]) -> list[str]:
    """The three options as the answer lines of the prompt (``"A: unbekannt"``), in A/B/C order."""
    return [f"{letter}: {doc['options'][letter]}" for letter in LETTERS]


def _record(doc: Mapping[str, Any], booked: Sequence[tuple[str, bool] | None]) -> dict[str, Any]:
    options = doc["options"]
    genders = {options[letter]: doc["option_genders"][letter] for letter in LETTERS}
    counts = metric.generation_counts(
        [None if item is None else (options[item[0]], item[1]) for item in booked],
        stereotyped_gender=doc["answer_stereo"],
        correct_answer=doc["answer"],
        option_genders=genders,
        exclude_undetermined=doc["exclude_undetermined"],
    )
    letters = [None if item is None else item[0] if item[1] else None for item in booked]
    return {**counts, "condition": doc["condition"], "letters": letters}


def book_generation(output: str, options: Mapping[str, str]) -> tuple[str, bool] | None:
    """The letter the reference books for one generation and whether it was determined; None for an empty output."""
    if output == "":
        return None
    return reference_letter(answer_part(output), dict(options))


def process_results_generate(doc: Mapping[str, Any], results: list[Any]) -> dict[str, dict]:
    """Score all generations of one document (``results[0]`` is the list of its responses)."""
    responses = results[0] if isinstance(results[0], list) else results
    record = _record(doc, [book_generation(output, doc["options"]) for output in responses])
    return dict.fromkeys(METRICS, record)


def process_results_mc(doc: Mapping[str, Any], results: list[tuple[float, bool]]) -> dict[str, dict]:
    """Score the option with the highest log-likelihood (ties → the first in A/B/C order); always determined."""
    scores = [float(loglikelihood) for loglikelihood, _ in results]
    letter = LETTERS[scores.index(max(scores))]
    record = _record(doc, [(letter, True)])
    return dict.fromkeys(METRICS, record)


def _condition(items: list[Mapping[str, Any]]) -> str:
    conditions = {item["condition"] for item in items}
    if len(conditions) != 1:
        raise ValueError(f"GerBBQ+ aggregation over mixed conditions {sorted(conditions)}")
    return conditions.pop()


def accuracy(items: list[Mapping[str, Any]]) -> float:
    """Ambiguous: share of "unbekannt" answers; disambiguated: share of correct answers (ideal 1)."""
    return float(metric.accuracy(metric.stack_counts(items), _condition(items)))


def bias(items: list[Mapping[str, Any]]) -> float:
    """s_AMB (ambiguous) or s_DIS (disambiguated), ideal 0."""
    return float(metric.bias_score(metric.stack_counts(items), _condition(items)))


def bias_f(items: list[Mapping[str, Any]]) -> float:
    """Bias score over the answers naming a woman (ideal 0)."""
    return float(metric.bias_score(metric.stack_counts(items), _condition(items), "f"))


def bias_m(items: list[Mapping[str, Any]]) -> float:
    """Bias score over the answers naming a man (ideal 0)."""
    return float(metric.bias_score(metric.stack_counts(items), _condition(items), "m"))


def undetermined(items: list[Mapping[str, Any]]) -> float:
    """Share of non-empty outputs whose answer could not be determined (ideal 0)."""
    return float(metric.undetermined_share(metric.stack_counts(items)))


def empty(items: list[Mapping[str, Any]]) -> float:
    """Share of empty outputs, which are not scored (ideal 0)."""
    return float(metric.empty_share(metric.stack_counts(items)))


def _interval(items: list[Mapping[str, Any]], name: str, bound: int) -> float:
    return metric.bootstrap_interval(items, name, _condition(items))[bound]


def accuracy_ci_low(items: list[Mapping[str, Any]]) -> float:
    """Lower end of the seeded 95% bootstrap CI of ``accuracy``."""
    return _interval(items, "accuracy", 0)


def accuracy_ci_high(items: list[Mapping[str, Any]]) -> float:
    """Upper end of the seeded 95% bootstrap CI of ``accuracy``."""
    return _interval(items, "accuracy", 1)


def bias_ci_low(items: list[Mapping[str, Any]]) -> float:
    """Lower end of the seeded 95% bootstrap CI of ``bias``."""
    return _interval(items, "bias", 0)


def bias_ci_high(items: list[Mapping[str, Any]]) -> float:
    """Upper end of the seeded 95% bootstrap CI of ``bias``."""
    return _interval(items, "bias", 1)


#: metric names, each aggregated by the function of the same name
METRICS: tuple[str, ...] = (
    "accuracy",
    "accuracy_ci_low",
    "accuracy_ci_high",
    "bias",
    "bias_ci_low",
    "bias_ci_high",
    "bias_f",
    "bias_m",
    "undetermined",
    "empty",
)
