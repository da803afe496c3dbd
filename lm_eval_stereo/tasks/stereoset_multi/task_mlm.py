"""Harness glue of ``stereoset_multi_mlm_<lang>``: masked-LM scoring of multilingual StereoSet (Öztürk et al. 2023).

- intrasentence, option ``span_mode``:

  - ``reference`` (default): the reference ``add_discriminative_intrasentence_candidates``. For sub-token i of the
    candidate word (the evaluated model's tokenizer, no special tokens), the text is the context with EVERY ``BLANK``
    replaced by the decoded sub-tokens < i followed by the mask token; the model scores sub-token i at the text's
    first mask (one ``masked_fill`` request per sub-token). Needs the evaluated model's tokenizer (from the model
    arguments); without one, ``l2r_single`` is used, warned once and recorded;
  - ``l2r_single`` (task version 1.0), ``l2r``, ``all``: ``masked_span`` requests on token ids, the context split at
    its first ``BLANK`` (see :mod:`lm_eval_stereo.models.masked_lm`);

  score = ARITHMETIC mean of the sub-token probabilities;
- intersentence: ``next_sentence`` of (context, candidate sentence); score = P(IsNext) = softmax(NSP logits)[IsNext],
  rounded to float32 as the reference compares it (ties count as anti-stereotypical / not related).

Metrics are those of ``stereoset_multi`` (:data:`lm_eval_stereo.tasks.stereoset_multi.metrics.METRICS`).
"""

from __future__ import annotations

import functools
import logging
import math
from typing import Any, NamedTuple

import numpy as np

from lm_eval_stereo.core.masked_requests import MaskedLMTask, Requests
from lm_eval_stereo.core.model_tokenizer import load_tokenizer
from lm_eval_stereo.core.model_types import SPAN_MODES
from lm_eval_stereo.tasks.stereoset_multi.metrics import CANDIDATES, METRICS
from lm_eval_stereo.tasks.stereoset_multi.options import MASKED_OPTIONS as OPTIONS
from lm_eval_stereo.tasks.stereoset_multi.task import item_from_scores

logger = logging.getLogger(__name__)

SCORING = {
    "intrasentence": "mean sub-token probability of the masked word",
    "intersentence": "NSP P(IsNext), float32",
}
MODE_DESCRIPTIONS = {
    "reference": "reference (decoded prefix + mask at every BLANK, re-tokenised, first mask scored)",
    **{mode: f"{mode} (token ids, first BLANK)" for mode in SPAN_MODES},
}


def reference_inputs(tokenizer: Any, context: str, word: str) -> list[tuple[str, int]]:
    """The reference's (masked text, scored sub-token id) pairs for ``word`` at the ``BLANK``s of ``context``."""
    tokens = tokenizer.encode(word, add_special_tokens=False)
    mask = tokenizer.mask_token
    return [
        (context.replace("BLANK", f"{tokenizer.decode(tokens[:i])}{mask}"), token) for i, token in enumerate(tokens)
    ]


def candidate_score(test: str, response: Any) -> tuple[float, dict[str, Any]]:
    """(score, logged details) of one candidate's response."""
    if test == "intrasentence":
        logprobs = [float(lp) for lp in response]
        probs = [math.exp(lp) for lp in logprobs]
        score = sum(probs) / len(probs) if probs else float("nan")
        return score, {"subtoken_logprobs": logprobs, "n_subtokens": len(probs)}
    return float(np.float32(math.exp(float(response)))), {"log_p_isnext": float(response)}


class SpanMode(NamedTuple):
    """The intrasentence masking in force: its mode, its description for the results and, for ``reference``, the
    evaluated model's tokenizer."""

    mode: str
    description: str
    tokenizer: Any = None


@functools.cache
def _warn_fallback(reason: str) -> None:
    logger.warning("reference masked intrasentence scoring impossible (%s); using span_mode l2r_single", reason)


class StereoSetMaskedTask(MaskedLMTask):
    """``stereoset_multi_mlm_<lang>``: masked words (intrasentence) or next-sentence pairs (intersentence)."""

    METRICS = METRICS
    OPTIONS = OPTIONS

    @functools.cached_property
    def span_mode(self) -> SpanMode:
        """The masking in force (``reference`` falls back to ``l2r_single`` without a tokenizer)."""
        mode = self.options["span_mode"]
        if mode != "reference":
            return SpanMode(mode, MODE_DESCRIPTIONS[mode])
        try:
            tokenizer = load_tokenizer(self.config.metadata or {})
        except Exception as exc:  # noqa: BLE001 - any loading failure means: no tokenizer for this model
            reason = f"no tokenizer for the model: {type(exc).__name__}: {exc}"
            _warn_fallback(reason)
            return SpanMode("l2r_single", f"{MODE_DESCRIPTIONS['l2r_single']}; reference impossible ({reason})")
        return SpanMode(mode, MODE_DESCRIPTIONS[mode], tokenizer)

    def _reference_inputs(self, doc: dict[str, Any]) -> list[list[tuple[str, int]]]:
        """Per candidate, its ``masked_fill`` arguments (span mode ``reference``)."""
        tokenizer = self.span_mode.tokenizer
        return [reference_inputs(tokenizer, doc["context"], doc[f"c{c}_word"]) for c in CANDIDATES]

    def doc_to_requests(self, doc: dict[str, Any]) -> Requests:
        """The requests of the candidates in c1, c2, c3 order (span mode ``reference``: one per sub-token)."""
        if doc["test"] == "intersentence":
            return [("next_sentence", (doc["context"], doc[f"c{c}_sentence"])) for c in CANDIDATES]
        mode = self.span_mode.mode
        if mode == "reference":
            return [("masked_fill", inputs) for candidate in self._reference_inputs(doc) for inputs in candidate]
        left, right = doc["context"].split("BLANK", 1)
        return [("masked_span", (left, doc[f"c{c}_word"], right, mode)) for c in CANDIDATES]

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        if doc["test"] == "intrasentence" and self.span_mode.mode == "reference":
            responses = iter(results)
            results = [[next(responses) for _ in candidate] for candidate in self._reference_inputs(doc)]
        scored = [candidate_score(doc["test"], response) for response in results]
        intra = self.span_mode.description if doc["test"] == "intrasentence" else None
        return item_from_scores(doc, [s for s, _ in scored], [d for _, d in scored], SCORING[doc["test"]], intra)
