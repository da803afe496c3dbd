"""Harness glue of ``eurogest_<lang>`` (causal LMs): two ``loglikelihood`` requests per sentence, one per version.

Each version is scored from the reference's start (``split.py``): the request's context is the text before the first
scored token and its continuation the rest, so lm_eval's log-likelihood is the sum of the reference's scored token
log-probabilities; normalised (the default) it is divided by their number. The two versions share their context up to
the first differing token, which ``hf-prefix`` forwards once. The split is made per document with the evaluated
model's tokenizer (``tokenizer=`` or ``pretrained=`` model argument). Each request also carries the reference's
token split (:class:`~lm_eval_stereo.core.token_split.TokenSplitInstance`): ``hf-prefix`` scores exactly those tokens;
other backends read the strings. A sentence whose strings lm_eval would encode with another split, and whose tokens the
backend did not score, is scored as lm_eval scores it and flagged (``boundary_mismatch``).
"""

from __future__ import annotations

from typing import Any

import datasets

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.core.metrics import MetricSet
from lm_eval_stereo.core.model_tokenizer import load_tokenizer, require_tokenizer
from lm_eval_stereo.core.reference_requests import Request, instances
from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.core.token_split import TokenSplitInstance, scored_reference_tokens
from lm_eval_stereo.core.values import flag
from lm_eval_stereo.tasks.eurogest.data import interleaved, language_name, load_rows
from lm_eval_stereo.tasks.eurogest.metrics import masculine_ratio, metric_set
from lm_eval_stereo.tasks.eurogest.options import OPTIONS
from lm_eval_stereo.tasks.eurogest.split import requests

SIDES = ("m", "f")


def custom_dataset(language: str, **metadata: Any) -> dict[str, datasets.Dataset]:
    """The sentences of ``language`` (each version's request is made per document, :meth:`EuroGestTask.requests`)."""
    language_name(language)
    require_tokenizer(metadata, "eurogest finds the first differing token")
    return {"test": datasets.Dataset.from_list(interleaved(load_rows(language)))}


class EuroGestTask(SummaryTask):
    """``eurogest_<lang>``: items keyed by the GEST id (shared by every language: the report pairs languages on it).

    A sentence is a near tie (:mod:`lm_eval_stereo.core.near_ties`) where its two versions' (mean) log-probabilities
    lie within the backends' agreement: whether its masculine ratio is above one half could differ on another backend.
    No headline rests on that side (g_s is continuous in the ratios), so a near tie has no alternatives."""

    KEY_FIELD = "id"
    COMPARES_LOGLIKELIHOODS = True
    OPTIONS = OPTIONS

    def metric_set(self) -> MetricSet:
        return metric_set(
            str(self.config.task), self.options["eurogest_min_sentences"], self.options["eurogest_complete_only"]
        )

    def facts(self) -> dict[str, Any]:
        return {
            "min_sentences": self.options["eurogest_min_sentences"],
            "complete_only": self.options["eurogest_complete_only"],
        }

    def requests(self, doc: dict[str, Any]) -> tuple[Request, Request]:
        """The masculine and the feminine version's request, split with the evaluated model's tokenizer."""
        metadata = self.config.metadata or {}
        add_bos = flag(metadata.get("add_bos_token") or False, "add_bos_token")
        whole = self.options["eurogest_whole_sequence"]
        return requests(load_tokenizer(metadata), doc["masculine"], doc["feminine"], whole, add_bos)

    def construct_requests(self, doc: dict[str, Any], ctx: str, **kwargs: Any) -> list[TokenSplitInstance]:
        return instances(doc, self.requests(doc), **kwargs)

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        pair = self.requests(doc)
        scored = all(request.scored for request in pair)
        exact = [scored_reference_tokens(result) for result in results]
        lps, bounds = {}, {}
        for side, request, result, tokens_scored in zip(SIDES, pair, results, exact):
            total = float(result[0])
            count = len(request.reference[1]) if tokens_scored and request.reference else request.scored
            normalised = self.options["eurogest_normalisation"] and scored
            lps[side] = total / count if normalised else total
            bounds[side] = near_ties.bound(1, count if normalised else 1)
        return {
            "id": doc["id"],
            "stereotype": doc["stereotype"],
            "condition": doc["condition"],
            "lp_m": lps["m"],
            "lp_f": lps["f"],
            "masculine_ratio": masculine_ratio(lps["m"], lps["f"]) if scored else None,
            "scored": scored,
            "boundary_mismatch": not all(request.split_kept or tokens for request, tokens in zip(pair, exact)),
            near_ties.NEAR_TIE: scored and near_ties.near_tie(lps["m"], lps["f"], bounds["m"], bounds["f"]),
        }
