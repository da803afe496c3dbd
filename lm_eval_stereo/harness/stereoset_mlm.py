"""Task glue for ``stereoset_multi_mlm_*``: masked-LM scoring of multilingual StereoSet (Öztürk et al. 2023, §3.2).

- intrasentence: ``masked_span`` of the candidate word at ``BLANK`` in the context, left-to-right unmasking as the
  reference ``IntrasentenceLoader`` does it (input i = the first i sub-tokens given, then ONE mask token, the later
  sub-tokens removed: mode ``l2r_single``); score = ARITHMETIC mean of the sub-token probabilities (METHODS §1);
- intersentence: ``next_sentence`` of (context, candidate sentence); score = P(IsNext) = softmax(NSP logits)[IsNext].

Metrics and their aggregations are those of ``stereoset_multi`` (:mod:`lm_eval_stereo.harness.stereoset`).
Option (``--metadata '{"span_mode": "..."}'``): ``l2r_single`` (default, the reference), ``l2r`` (the later
sub-tokens masked instead of removed) or ``all`` (all sub-tokens masked at once), see
:mod:`lm_eval_stereo.models.masked_lm`.
"""

from __future__ import annotations

import math
from typing import Any

import datasets

from lm_eval_stereo.datasets.stereoset import CANDIDATES, load_rows
from lm_eval_stereo.harness.masked_requests import SPAN_MODES, Requests
from lm_eval_stereo.harness.stereoset import item_from_scores, per_doc_values

DEFAULT_SPAN_MODE = "l2r_single"
SCORING = {
    "intrasentence": "mean sub-token probability of the masked word ({mode})",
    "intersentence": "NSP P(IsNext)",
}


def custom_dataset(lang: str, span_mode: str = DEFAULT_SPAN_MODE, **metadata: Any) -> dict[str, datasets.Dataset]:
    """The rows of one language; each row records the span mode its intrasentence requests use."""
    if span_mode not in SPAN_MODES:
        raise ValueError(f"stereoset_multi_mlm: span_mode must be one of {', '.join(SPAN_MODES)}, got {span_mode!r}")
    rows = load_rows(lang)
    for row in rows:
        row["span_mode"] = span_mode
        row["normalization"] = SCORING[row["test"]].format(mode=span_mode)
    return {"test": datasets.Dataset.from_list(rows)}


def doc_to_requests(doc: dict[str, Any]) -> Requests:
    """Three requests in c1, c2, c3 order: masked spans (intrasentence) or next-sentence pairs (intersentence)."""
    if doc["test"] == "intrasentence":
        left, right = doc["context"].split("BLANK", 1)
        return [("masked_span", (left, doc[f"c{c}_word"], right, doc["span_mode"])) for c in CANDIDATES]
    return [("next_sentence", (doc["context"], doc[f"c{c}_sentence"])) for c in CANDIDATES]


def candidate_score(test: str, response: Any) -> tuple[float, dict[str, Any]]:
    """(score, logged details) of one candidate's response."""
    if test == "intrasentence":
        logprobs = [float(lp) for lp in response]
        probs = [math.exp(lp) for lp in logprobs]
        score = sum(probs) / len(probs) if probs else float("nan")
        return score, {"subtoken_logprobs": logprobs, "n_subtokens": len(probs)}
    return math.exp(float(response)), {"log_p_isnext": float(response)}


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    """The document's StereoSet item from its three candidate responses."""
    scored = [candidate_score(doc["test"], response) for response in results]
    return per_doc_values(item_from_scores(doc, [s for s, _ in scored], [d for _, d in scored]))
