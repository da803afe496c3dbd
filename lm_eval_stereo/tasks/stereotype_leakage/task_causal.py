"""``stereotype_leakage_<lang>`` (causal LMs, ``--model hf``, ``vllm``, ...): OUR ADAPTATION of the association score.

The paper scores masked LMs (SeT), mT5 (ILPS) and GPT-3.5 (generation); for a causal LM the trait is scored as the
continuation of the template's prefix, with standard ``loglikelihood`` requests::

    score(T with w, t) = log P(separator + trait + rest of T | prefix of T with w)
    association(g, t, T) = score(T with g, t) - score(T with the prior word, t)

("separator" is the space before the trait slot, none in Chinese). Only templates whose group precedes the trait are
used by default (in the others, e.g. "The <mask> people are <pgroup>.", the continuation would hold the group itself);
option ``full_sentence=true`` keeps every template and scores the whole sentence (empty context) instead.

lm_eval encodes a request as ``whole = encode(context + continuation)`` and scores ``whole[len(encode(context)):]``
(:func:`~lm_eval_stereo.core.reference_requests.lm_eval_encoding`).
Where the context's last token and the continuation's first merge in the evaluated model's tokenizer (no separator,
as in Chinese, or a byte-level piece), the scored tokens are not the continuation's: such requests are scored as
lm_eval scores them and counted in ``boundary_mismatches`` (NaN when no tokenizer can be resolved from the model
arguments).
"""

from __future__ import annotations

import functools
import logging
import math
from typing import Any

from lm_eval.api.instance import Instance

from lm_eval_stereo.core.metrics import MetricSet, count
from lm_eval_stereo.core.model_tokenizer import load_tokenizer
from lm_eval_stereo.core.reference_requests import lm_eval_encoding
from lm_eval_stereo.core.summary import instance_kwargs
from lm_eval_stereo.tasks.stereotype_leakage import metrics
from lm_eval_stereo.tasks.stereotype_leakage.options import CAUSAL_OPTIONS as OPTIONS
from lm_eval_stereo.tasks.stereotype_leakage.task import LeakageTask
from lm_eval_stereo.tasks.stereotype_leakage.templates import split

logger = logging.getLogger(__name__)

BOUNDARY_MISMATCHES = count(
    "boundary_mismatches",
    "requests whose context's last token merges with the continuation's first in the model's tokenizer (scored as "
    "lm_eval scores them; NaN: no tokenizer to check with)",
)


@functools.cache
def _warn_unchecked(reason: str) -> None:
    logger.warning("stereotype_leakage: boundary_mismatches not counted (%s)", reason)


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

    def metric_set(self) -> MetricSet:
        return metrics.leakage_metric_set(str(self.config.task), self.summarize, (BOUNDARY_MISMATCHES,))

    def pairs(self, doc: dict[str, Any]) -> list[tuple[str, str]]:
        """(context, continuation) of the prior, then of each group of ``doc``."""
        full = self.options["full_sentence"]
        pairs = [causal_pair(doc["prior_template"], doc["prior_word"], doc["prior_trait_word"], self.target, full)]
        return pairs + [
            causal_pair(doc["template"], g["word"], doc["trait_word"], self.target, full) for g in doc["groups"]
        ]

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        kwargs = instance_kwargs(kwargs)
        return [
            Instance(request_type="loglikelihood", doc=doc, arguments=pair, idx=i, **kwargs)
            for i, pair in enumerate(self.pairs(doc))
        ]

    def _tokenizer(self) -> Any | None:
        try:
            return load_tokenizer(self.config.metadata or {})
        except Exception as exc:  # noqa: BLE001 - any loading failure means: nothing to check the splits with
            _warn_unchecked(f"{type(exc).__name__}: {exc}")
            return None

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        tokenizer = self._tokenizer()
        mismatches = (
            math.nan
            if tokenizer is None
            else sum(not lm_eval_encoding(tokenizer, *pair).split_kept for pair in self.pairs(doc))
        )
        return {**super().item(doc, results), "boundary_mismatches": mismatches}

    def summarize(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        values = super().summarize(items)
        values["boundary_mismatches"] = sum(item["boundary_mismatches"] for item in items)
        return values

    def scores(self, doc: dict[str, Any], results: list[Any]) -> tuple[float, list[float]]:
        totals = [float(result[0]) for result in results]
        return totals[0], totals[1:]
