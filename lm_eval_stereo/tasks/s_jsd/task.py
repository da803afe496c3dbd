"""Harness glue of the S_JSD tasks (Steinborn et al. 2022); metrics in :mod:`lm_eval_stereo.tasks.s_jsd.metrics`.

- ``s_jsd_mlm_<lang>`` and ``s_jsd_crows_mlm`` (``--model hf-mlm``, the reference method): one ``shared_tokens``
  request per pair; hf-mlm encodes both sentences with special tokens, aligns them and masks each shared token alone.
- ``s_jsd_<lang>`` (any log-likelihood backend: ``hf``, ``vllm``, API models; our causal adaptation): p = probability
  of each shared token given its left context, BOS first. Both sentences are tokenised with the evaluated model's
  tokenizer (from the model arguments), framed by two sentinels standing for BOS … EOS and aligned exactly as in the
  masked method, so the dropped first/last positions are the frame. Each shared token becomes one ``loglikelihood``
  request: context = BOS text + the sentence up to the end of the previous token, continuation = the sentence from
  there to the end of the token. Per-token requests on the sentence's own characters are correct on every backend
  that scores strings (no backend has to return per-token values, and prefix differencing would subtract two noisy
  sums); they equal the token's probability when the backend re-tokenises context + continuation into exactly the
  reference tokens, which is checked with the same tokenizer and counted (``roundtrip_mismatches``) otherwise.
  A shared token that covers no whole character (a byte-level piece of a split character), has no left context
  (a tokenizer without BOS/EOS: the first token) or whose text merges into the context's last token when re-tokenised
  (no continuation token would be left to score) cannot be asked for through text: it is left out of both sentences
  and counted (``unscorable_tokens``).

Options (``--metadata``): ``perturb`` (drop the last character of both sentences, the paper's Table 3 "perturbed"),
``jsd_limit`` (p·log2 p = 0 at p = 0 instead of the reference's NaN).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import datasets
from lm_eval.api.instance import Instance

from lm_eval_stereo.core.alignment import shared_positions
from lm_eval_stereo.core.masked_requests import MaskedLMTask, Requests
from lm_eval_stereo.core.model_tokenizer import load_tokenizer
from lm_eval_stereo.core.reference_requests import lm_eval_encoding
from lm_eval_stereo.core.summary import SummaryTask, instance_kwargs
from lm_eval_stereo.tasks.s_jsd.data import load_pairs, perturbed
from lm_eval_stereo.tasks.s_jsd.metrics import NO_SHARED, OVERLENGTH, SCORED, metric_set, near_tie_fields, pair_scores
from lm_eval_stereo.tasks.s_jsd.options import OPTIONS

#: sentinels framing a causal model's token ids for the alignment (never real token ids)
FRAME = (-1, -2)


def custom_dataset(lang: str, perturb: bool = False, **_: Any) -> dict[str, datasets.Dataset]:
    """The pairs of ``lang`` (``crows``: the original CrowS-Pairs), perturbed when asked."""
    pairs = load_pairs(lang)
    return {"test": datasets.Dataset.from_list([perturbed(p) for p in pairs] if perturb else pairs)}


def pair_item(doc: dict[str, Any], status: str, shared: int, values: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The per-pair item: upstream ``id``, status, pair scores, number of shared tokens, arg-max hits."""
    return {
        "id": doc["id"],
        "status": status,
        "identical": doc["sent_more"] == doc["sent_less"],
        "shared_tokens": shared,
        "s_jsd": values.get("s_jsd", math.nan),
        "binary": values.get("binary", 0),
        "cps": values.get("cps", 0),
        "cps_delta": values.get("cps_delta", math.nan),
        "hits_more": values.get("hits_more", 0),
        "hits_less": values.get("hits_less", 0),
        **extra,
    }


class SJSDMaskedTask(MaskedLMTask):
    """``s_jsd_mlm_<lang>`` / ``s_jsd_crows_mlm``: one ``shared_tokens`` request per pair."""

    KEY_FIELD = "id"
    OPTIONS = OPTIONS
    METRICS = metric_set("s_jsd_mlm")

    def language(self) -> str | None:
        """The pairs' language; ``s_jsd_crows_mlm`` (``lang: crows``, the original CrowS-Pairs) is English."""
        language = super().language()
        return "en" if language == "crows" else language

    def doc_to_requests(self, doc: dict[str, Any]) -> Requests:
        return [("shared_tokens", (doc["sent_more"], doc["sent_less"]))]

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        response = results[0]
        shared = len(response["gold"])
        if response["overlength"]:
            return pair_item(doc, OVERLENGTH, 0, {})
        if not shared:
            return pair_item(doc, NO_SHARED, 0, {})
        values = pair_scores(
            response["prob_more"],
            response["prob_less"],
            response["logprob_more"],
            response["logprob_less"],
            self.options["jsd_limit"],
        )
        values["hits_more"], values["hits_less"] = sum(response["hit_more"]), sum(response["hit_less"])
        return pair_item(doc, SCORED, shared, values)


@dataclass(frozen=True)
class CausalPlan:
    """The loglikelihood requests of one pair: ``requests`` = the more sentence's shared tokens, then the less
    sentence's, aligned pairwise; counts of mismatching and unscorable shared tokens."""

    requests: tuple[tuple[str, str], ...]
    roundtrip_mismatches: int
    unscorable_tokens: int
    overlength: bool

    @property
    def shared(self) -> int:
        return len(self.requests) // 2


def _token_request(tokenizer: Any, sentence: str, encoding: Any, position: int) -> tuple[tuple[str, str] | None, bool]:
    """((context, continuation) or None when the token cannot be asked for, round trip ok) of framed ``position``."""
    index = position - 1  # the frame's start sentinel is position 0
    ends = [end for _, end in encoding["offset_mapping"]]
    before = ends[index - 1] if index else 0
    continuation = sentence[before : ends[index]]
    start = tokenizer.bos_token or tokenizer.eos_token or ""
    if not continuation or (not start and index == 0):
        return None, False
    context = start + sentence[:before]
    framing = [tokenizer.bos_token_id if tokenizer.bos_token else tokenizer.eos_token_id] if start else []
    expected = framing + encoding["input_ids"][: index + 1]
    encoding = lm_eval_encoding(tokenizer, context, continuation)  # never an empty context here
    if len(encoding.whole) <= len(encoding.context):
        # the token's text merges into the context's last token (e.g. "n'é" + "tait" with byte-level BPE): lm_eval
        # would get no continuation token to score
        return None, False
    return (context, continuation), encoding.whole == expected and encoding.context == expected[:-1]


def causal_plan(tokenizer: Any, more: str, less: str) -> CausalPlan:
    """The per-token requests of a pair for a causal model (see the module docstring)."""
    encodings = [tokenizer(s, add_special_tokens=False, return_offsets_mapping=True) for s in (more, less)]
    limit = getattr(tokenizer, "model_max_length", None) or math.inf
    if max(len(e["input_ids"]) for e in encodings) + 1 > limit:
        return CausalPlan((), 0, 0, True)
    framed = [[FRAME[0], *e["input_ids"], FRAME[1]] for e in encodings]
    sides: tuple[list[tuple[str, str]], list[tuple[str, str]]] = ([], [])
    mismatches = unscorable = 0
    for at_more, at_less in zip(*shared_positions(*framed), strict=True):
        asked = [
            _token_request(tokenizer, sentence, encoding, position)
            for sentence, encoding, position in zip((more, less), encodings, (at_more, at_less), strict=True)
        ]
        if any(request is None for request, _ in asked):
            unscorable += 1
            continue
        for side, (request, roundtrip) in zip(sides, asked, strict=True):
            side.append(request)
            mismatches += not roundtrip
    return CausalPlan((*sides[0], *sides[1]), mismatches, unscorable, False)


class SJSDCausalTask(SummaryTask):
    """``s_jsd_<lang>``: one loglikelihood request per shared token and sentence (our causal adaptation)."""

    KEY_FIELD = "id"
    OPTIONS = OPTIONS
    METRICS = metric_set("s_jsd", causal=True)
    COMPARES_LOGLIKELIHOODS = True

    @functools.cached_property
    def _plans(self) -> dict[tuple[str, str], CausalPlan]:
        """The plans made so far, by pair (their strings are those of the requests, which the run holds anyway)."""
        return {}

    def plan(self, doc: dict[str, Any]) -> CausalPlan:
        """The pair's plan, made once per task: asked for when the requests are built and again when the answers are
        scored."""
        pair = (doc["sent_more"], doc["sent_less"])
        if pair not in self._plans:
            self._plans[pair] = causal_plan(load_tokenizer(self.config.metadata or {}), *pair)
        return self._plans[pair]

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        kwargs = instance_kwargs(kwargs)
        return [
            Instance(request_type="loglikelihood", doc=doc, arguments=request, idx=i, **kwargs)
            for i, request in enumerate(self.plan(doc).requests)
        ]

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        plan = self.plan(doc)
        counts = {"roundtrip_mismatches": plan.roundtrip_mismatches, "unscorable_tokens": plan.unscorable_tokens}
        if plan.overlength:
            return pair_item(doc, OVERLENGTH, 0, {}, **counts)
        if not plan.shared:
            return pair_item(doc, NO_SHARED, 0, {}, **counts)
        logprobs = [float(ll) for ll, _ in results]
        greedy = [bool(g) for _, g in results]
        k = plan.shared
        probs = [math.exp(lp) for lp in logprobs]
        values = pair_scores(probs[:k], probs[k:], logprobs[:k], logprobs[k:], self.options["jsd_limit"])
        values["hits_more"], values["hits_less"] = sum(greedy[:k]), sum(greedy[k:])
        ties = near_tie_fields(values, logprobs[:k], logprobs[k:], self.options["jsd_limit"])
        return pair_item(doc, SCORED, k, values, **counts) | ties
