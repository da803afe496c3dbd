"""Harness glue of the KoBBQ tasks: ``kobbq`` (log-likelihood over the three choices) and ``kobbq_gen`` (the five
evaluation prompts of the reference, each sample asked with its choices in three orders, answers read by
:mod:`~lm_eval_stereo.tasks.kobbq.answers`).

Each document's item keeps the sample's upstream fields, the prompt, the order of the choices, the output, the
answer read from it and the prediction the reference scores, and its counts (:func:`metrics.answer_counts`); the
metrics (:mod:`~lm_eval_stereo.tasks.kobbq.metrics`) are computed from the items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import datasets

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.tasks import bbq_family
from lm_eval_stereo.tasks.kobbq import metrics as metric
from lm_eval_stereo.tasks.kobbq.answers import prediction_text, read_answer
from lm_eval_stereo.tasks.kobbq.data import (
    SAMPLE_COLUMNS,
    choice_docs,
    generation_docs,
    load_prompts,
    load_samples,
    with_unknown,
)

#: the prompt whose wording the multiple-choice task uses (its unknown answer is the samples' own, 알 수 없음)
CHOICE_PROMPT = 1


def generation_dataset(**_: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` of ``kobbq_gen``: every sample × prompt × order of the choices (34,200 documents)."""
    return {"test": datasets.Dataset.from_list(generation_docs(load_samples(), load_prompts()))}


def choice_dataset(**_: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` of ``kobbq``: every sample once, in prompt 1's wording, choices in their upstream order."""
    return {"test": datasets.Dataset.from_list(choice_docs(load_samples(), load_prompts()[CHOICE_PROMPT]))}


def answer_type(prediction: str, doc: Mapping[str, Any]) -> str:
    """``5_evaluation.py``'s reading of a prediction: ``ooc`` (none of the choices), ``unk``, ``biased`` or
    ``counterb``."""
    if prediction not in doc["shown"]:
        return "ooc"
    if prediction == doc["unknown"]:
        return "unk"
    return "biased" if prediction == doc["biased_answer"] else "counterb"


class KobbqTask(SummaryTask):
    """Items of a KoBBQ task, keyed by sample, order of the choices and prompt."""

    def record(self, doc: Mapping[str, Any], output: str | None, answer: str | None, prediction: str | None) -> dict:
        """The item of one answer: upstream fields, what was answered, and its counts."""
        options = [with_unknown(option, doc["unknown"]) for option in doc["options"]]
        choice = options.index(prediction) if prediction in doc["shown"] else None
        if prediction is None:
            counts = bbq_family.answer_counts([], label=0, unknown=2, biased=0)
        else:
            counts = metric.answer_counts(
                choice,
                label=options.index(with_unknown(doc["answer"], doc["unknown"])),
                biased=options.index(doc["biased_answer"]),
                unknown=2,
            )
        return {
            "key": doc["key"],
            **{name: doc[name] for name in SAMPLE_COLUMNS},
            "category": doc["category"],
            "ambiguous": doc["ambiguous"],
            "biased_context": doc["biased_context"],
            "prompt_id": doc["prompt_id"],
            "permutation": doc["permutation"],
            "output": output,
            "answer_read": answer,
            "prediction": prediction,
            "answer_type": None if prediction is None else answer_type(prediction, doc),
            "counts": counts,
        }


class KobbqGenerationTask(KobbqTask):
    """``kobbq_gen``: the answer read from the generation as the reference reads it."""

    METRICS = metric.GENERATION

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        output = results[0]
        answer = read_answer(output, doc["shown"])
        return self.record(doc, output, answer, prediction_text(answer, doc["shown"]))


class KobbqChoiceTask(KobbqTask):
    """``kobbq``: the choice with the highest log-likelihood (ties → the first in upstream order); a near tie's
    alternatives are the items of the rival choices (:func:`lm_eval_stereo.core.near_ties.rivals`, one request
    each)."""

    METRICS = metric.CHOICE
    COMPARES_LOGLIKELIHOODS = True

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        scores = [float(loglikelihood) for loglikelihood, _ in results]
        if not all(math.isfinite(score) for score in scores):  # never pick an answer from NaN: count the document
            return self.record(doc, None, None, None) | {"unscored": 1}
        best = scores.index(max(scores))
        item = self.record(doc, None, "ABC"[best], doc["shown"][best])
        alternatives = [
            near_ties.changes(item, self.record(doc, None, "ABC"[rival], doc["shown"][rival]))
            for rival in near_ties.rivals(scores, [near_ties.bound()] * len(scores))
        ]
        return item | {"loglikelihoods": scores} | near_ties.marked(alternatives)
