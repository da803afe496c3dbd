"""``stereotype_leakage_<lang>`` (causal LMs, ``--model hf``, ``vllm``, ...): OUR ADAPTATION of the association score.

The paper scores masked LMs (SeT), mT5 (ILPS) and GPT-3.5 (generation); for a causal LM the trait is scored as the
continuation of the template's prefix, with standard ``loglikelihood`` requests::

    score(T with w, t) = log P(separator + trait + rest of T | prefix of T with w)
    association(g, t, T) = score(T with g, t) - score(T with the prior word, t)

("separator" is the space before the trait slot, none in Chinese). Only templates whose group precedes the trait are
used by default (in the others, e.g. "The <mask> people are <pgroup>.", the continuation would hold the group itself);
option ``full_sentence=true`` keeps every template and scores the whole sentence (empty context) instead.
"""

from __future__ import annotations

from typing import Any

from lm_eval.api.instance import Instance

from lm_eval_stereo.core.options import Option, declare, flag
from lm_eval_stereo.tasks.stereotype_leakage.task import COMMON_OPTIONS, LeakageTask
from lm_eval_stereo.tasks.stereotype_leakage.templates import split

OPTIONS = (
    *COMMON_OPTIONS,
    *declare(
        Option(
            "full_sentence",
            False,
            flag,
            "causal tasks: score the whole sentence (every template) instead of "
            "the trait and the rest given the prefix (templates with the group before the trait)",
        ),  # fmt: skip
    ),
)


def causal_pair(template: str, word: str, trait: str, lang: str, full_sentence: bool) -> tuple[str, str]:
    """(context, continuation) of one filled template."""
    left, separator, right = split(template, word, lang)
    if full_sentence:
        return "", left + separator + trait + right
    return left, separator + trait + right


class LeakageCausalTask(LeakageTask):
    """One ``loglikelihood`` request for the prior word and one per group of the document's template run."""

    OPTIONS = OPTIONS
    SCORE_KIND = "causal"

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        kwargs.pop("apply_chat_template", None)
        kwargs.pop("chat_template", None)
        full = self.options["full_sentence"]
        pairs = [causal_pair(doc["prior_template"], doc["prior_word"], doc["prior_trait_word"], self.target, full)]
        pairs += [causal_pair(doc["template"], g["word"], doc["trait_word"], self.target, full) for g in doc["groups"]]
        return [
            Instance(request_type="loglikelihood", doc=doc, arguments=pair, idx=i, **kwargs)
            for i, pair in enumerate(pairs)
        ]

    def scores(self, doc: dict[str, Any], results: list[Any]) -> tuple[float, list[float]]:
        totals = [float(result[0]) for result in results]
        return totals[0], totals[1:]
