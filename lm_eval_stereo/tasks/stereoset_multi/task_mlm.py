"""Harness glue of ``stereoset_multi_mlm_<lang>``: masked-LM scoring of multilingual StereoSet (Öztürk et al. 2023).

- intrasentence: ``masked_span`` of the candidate word at ``BLANK`` in the context, left-to-right unmasking as the
  reference ``IntrasentenceLoader`` does it (input i = the first i sub-tokens given, then ONE mask token, the later
  sub-tokens removed: mode ``l2r_single``); score = ARITHMETIC mean of the sub-token probabilities;
- intersentence: ``next_sentence`` of (context, candidate sentence); score = P(IsNext) = softmax(NSP logits)[IsNext].

Metrics are those of ``stereoset_multi`` (:data:`lm_eval_stereo.tasks.stereoset_multi.metrics.METRICS`). Option
``span_mode``: ``l2r_single`` (default, the reference), ``l2r`` (the later sub-tokens masked instead of removed) or
``all`` (all sub-tokens masked at once), see :mod:`lm_eval_stereo.models.masked_lm`.
"""

from __future__ import annotations

import math
from typing import Any

from lm_eval_stereo.core.options import Option, choice, declare
from lm_eval_stereo.models.masked_requests import SPAN_MODES, MaskedLMTask, Requests
from lm_eval_stereo.tasks.stereoset_multi.data import CANDIDATES
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS
from lm_eval_stereo.tasks.stereoset_multi.task import item_from_scores

OPTIONS = declare(
    Option(
        "span_mode",
        "l2r_single",
        choice(*SPAN_MODES),
        "how a multi-token candidate word is masked: l2r_single (the reference), l2r, all",
    ),
)
SCORING = {
    "intrasentence": "mean sub-token probability of the masked word ({mode})",
    "intersentence": "NSP P(IsNext)",
}


def candidate_score(test: str, response: Any) -> tuple[float, dict[str, Any]]:
    """(score, logged details) of one candidate's response."""
    if test == "intrasentence":
        logprobs = [float(lp) for lp in response]
        probs = [math.exp(lp) for lp in logprobs]
        score = sum(probs) / len(probs) if probs else float("nan")
        return score, {"subtoken_logprobs": logprobs, "n_subtokens": len(probs)}
    return math.exp(float(response)), {"log_p_isnext": float(response)}


class StereoSetMaskedTask(MaskedLMTask):
    """``stereoset_multi_mlm_<lang>``: masked spans (intrasentence) or next-sentence pairs (intersentence)."""

    METRICS = METRICS
    OPTIONS = OPTIONS

    def doc_to_requests(self, doc: dict[str, Any]) -> Requests:
        """Three requests in c1, c2, c3 order."""
        if doc["test"] == "intrasentence":
            left, right = doc["context"].split("BLANK", 1)
            mode = self.options["span_mode"]
            return [("masked_span", (left, doc[f"c{c}_word"], right, mode)) for c in CANDIDATES]
        return [("next_sentence", (doc["context"], doc[f"c{c}_sentence"])) for c in CANDIDATES]

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        scored = [candidate_score(doc["test"], response) for response in results]
        scoring = SCORING[doc["test"]].format(mode=self.options["span_mode"])
        return item_from_scores(doc, [s for s, _ in scored], [d for _, d in scored], scoring)
