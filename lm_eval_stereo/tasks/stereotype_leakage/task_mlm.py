"""``stereotype_leakage_mlm_<lang>`` (``--model hf-mlm``): association of groups and traits in a masked LM.

Default score (the reference's for mBERT and the monolingual BERTs): SeT, the sum over the trait's sub-tokens of
ln(1 - ||minimal output-layer update||), masks filled left to right with the gold sub-tokens (request
``masked_sensitivity``, :mod:`lm_eval_stereo.models.sensitivity`; BERT-family heads only). Option
``score=ilps`` (our adaptation for masked LMs without such a head): the log-probability of the trait's sub-tokens,
unmasked left to right (request ``masked_span`` mode ``l2r``; the trait tokenised in its sentence).
"""

from __future__ import annotations

from typing import Any

from lm_eval_stereo.core.masked_requests import MaskedLMTask, Requests
from lm_eval_stereo.tasks.stereotype_leakage.options import MASKED_OPTIONS as OPTIONS
from lm_eval_stereo.tasks.stereotype_leakage.task import LeakageTask
from lm_eval_stereo.tasks.stereotype_leakage.templates import split


def _request(lang: str, score: str, template: str, word: str, trait: str) -> tuple[str, tuple[Any, ...]]:
    left, separator, right = split(template, word, lang)
    if score == "set":
        return "masked_sensitivity", (left, trait, right, separator)
    return "masked_span", (left + separator, trait, right, "l2r")


def masked_requests(doc: dict[str, Any], lang: str, score: str) -> Requests:
    """The prior's request, then one per group of ``doc``, for ``score`` "set" or "ilps"."""
    prior = _request(lang, score, doc["prior_template"], doc["prior_word"], doc["prior_trait_word"])
    return [prior, *(_request(lang, score, doc["template"], g["word"], doc["trait_word"]) for g in doc["groups"])]


class LeakageMaskedTask(LeakageTask, MaskedLMTask):
    """One request for the prior word and one per group of the document's template run."""

    OPTIONS = OPTIONS

    def score_kind(self) -> str:
        return self.options["score"]

    def doc_to_requests(self, doc: dict[str, Any]) -> Requests:
        return masked_requests(doc, self.target, self.options["score"])

    def scores(self, doc: dict[str, Any], results: list[Any]) -> tuple[float, list[float]]:
        totals = [float(sum(result)) for result in results]
        return totals[0], totals[1:]
