"""Harness glue of the GerBBQ+ tasks (``gerbbq_amb``/``gerbbq_dis`` generative, ``gerbbq_mc_*`` log-likelihood).

Each document's item holds its generation counts (:data:`metrics.COUNT_FIELDS`) and the booked letters; the
metrics (:data:`metrics.METRICS`) pool the counts of all documents. Generative tasks keep every repeated
generation (their filter passes the whole list of responses through), so ``repeats: N`` is scored in full.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.tasks.german_gender_bias.answers import LETTERS, answer_part, reference_letter
from lm_eval_stereo.tasks.german_gender_bias.data import load_gerbbq
from lm_eval_stereo.tasks.german_gender_bias.gerbbq import metrics as metric
from lm_eval_stereo.tasks.german_gender_bias.options import GERBBQ_OPTIONS as OPTIONS


def load_dataset(condition: str, **_: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` of the GerBBQ+ tasks: the published items of ``condition`` (``amb``/``dis``)."""
    docs = load_gerbbq(condition)
    for doc in docs:
        doc["condition"] = condition
    return {"test": datasets.Dataset.from_list(docs)}


def book_generation(output: str, options: Mapping[str, str]) -> tuple[str, bool] | None:
    """The letter the reference books for one generation and whether it was determined; None for an empty output."""
    if output == "":
        return None
    return reference_letter(answer_part(output), dict(options))


class GerbbqTask(SummaryTask):
    """``gerbbq_amb`` / ``gerbbq_dis``: every generation booked by the reference's answer rules."""

    METRICS = metric.METRICS
    OPTIONS = OPTIONS

    def record(self, doc: Mapping[str, Any], booked: Sequence[tuple[str, bool] | None]) -> dict[str, Any]:
        """The document's item: generation counts, condition and booked letters (None: undetermined or empty)."""
        options = doc["options"]
        genders = {options[letter]: doc["option_genders"][letter] for letter in LETTERS}
        counts = metric.generation_counts(
            [None if item is None else (options[item[0]], item[1]) for item in booked],
            stereotyped_gender=doc["answer_stereo"],
            correct_answer=doc["answer"],
            option_genders=genders,
            exclude_undetermined=self.options["exclude_undetermined"],
        )
        letters = [None if item is None else item[0] if item[1] else None for item in booked]
        return {
            "key": f"{doc['condition']}/{doc['id']:05d}",
            **counts,
            "condition": doc["condition"],
            "letters": letters,
        }

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """Score all generations of one document (``results[0]`` is the list of its responses)."""
        responses = results[0] if isinstance(results[0], list) else results
        return self.record(doc, [book_generation(output, doc["options"]) for output in responses])


class GerbbqChoiceTask(GerbbqTask):
    """``gerbbq_mc_*``: the option with the highest log-likelihood (ties → the first in A/B/C order); a near tie's
    alternatives are the items of the rival options (:func:`lm_eval_stereo.core.near_ties.rivals`, one request
    each)."""

    COMPARES_LOGLIKELIHOODS = True

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        scores = [float(loglikelihood) for loglikelihood, _ in results]
        if not all(math.isfinite(score) for score in scores):  # never pick an answer from NaN: count the document
            return self.record(doc, []) | {"unscored": 1}
        item = self.record(doc, [(LETTERS[scores.index(max(scores))], True)])
        alternatives = [
            near_ties.changes(item, self.record(doc, [(LETTERS[rival], True)]))
            for rival in near_ties.rivals(scores, [near_ties.bound()] * len(scores))
        ]
        return item | near_ties.marked(alternatives)
