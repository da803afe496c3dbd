"""Harness glue of ``rubia_<domain>``: each sentence of a pair scored alone, as the authors' ``lmppl`` scores it, with
the protocol of the evaluated model (:func:`masked_model`).

- A causal LM (``hf``, ``hf-prefix``, ``vllm``, any log-likelihood backend; reference ``lmppl.LM``): the sentence is
  encoded with the tokenizer's default encoding (its special tokens included); the first token is the context and
  every later token is scored: one ``loglikelihood`` request per sentence, context = the text of the first token,
  continuation = the rest (:func:`sentence_request`), carrying the reference's token split
  (:class:`~lm_eval_stereo.core.token_split.TokenSplitInstance`) for backends that score tokens (``hf-prefix``). A
  sentence whose strings lm_eval would encode with another split (a first token that ends inside a character, as
  byte-level tokenizers split a Cyrillic first letter), and whose tokens the backend did not score, is scored as
  lm_eval scores it and flagged (``boundary_mismatch``).
- A masked LM (``--model hf-mlm``; reference ``lmppl.MaskedLM``): one ``loglikelihood`` request per sentence with an
  empty context: hf-mlm masks every token in turn between the tokenizer's prefix and suffix tokens.

Per sentence: mean negative log-likelihood ``nll = -sum / n`` over the ``n`` scored tokens, ``PPL = exp(nll)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import datasets
from lm_eval.api.instance import Instance

from lm_eval_stereo.core import near_ties, truncation
from lm_eval_stereo.core.metrics import MetricSet
from lm_eval_stereo.core.model_tokenizer import load_tokenizer, require_tokenizer
from lm_eval_stereo.core.model_types import ENCODER_MODEL_TYPES
from lm_eval_stereo.core.reference_requests import Request, instances, lm_eval_encoding, request
from lm_eval_stereo.core.summary import SummaryTask, instance_kwargs
from lm_eval_stereo.core.token_split import scored_reference_tokens
from lm_eval_stereo.core.values import flag
from lm_eval_stereo.tasks.rubia.data import domain_rows, domain_task_types
from lm_eval_stereo.tasks.rubia.metrics import metric_set

SIDES = ("pro", "anti")
#: above this mean NLL the perplexity overflows a float: infinite (the pair is then unscored)
LARGEST_NLL = 709.0


@functools.lru_cache(maxsize=8)
def _model_type(name: str, revision: str | None, trust_remote_code: bool) -> str | None:
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(name, revision=revision, trust_remote_code=trust_remote_code).model_type
    except (OSError, ValueError):  # no transformers config (an API model named by its tokenizer): a causal LM
        return None


def masked_model(metadata: Mapping[str, Any]) -> bool:
    """Whether the evaluated model (``pretrained=``) is a masked LM: a model type transformers loads only as a masked
    LM, or an encoder-only one that it can also load as a causal LM with ``is_decoder=True`` (``hf-mlm`` serves them;
    lm_eval's ``hf`` stops on them with a clear error)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    name = metadata.get("pretrained")
    if not isinstance(name, str) or not name:
        return False
    trust = flag(metadata.get("trust_remote_code") or False, "trust_remote_code")
    model_type = _model_type(name, metadata.get("revision"), trust)
    if model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return False
    return model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES or model_type in ENCODER_MODEL_TYPES


def interleaved(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` taken in turn from each task type (file order within one), so that ``--limit n`` takes every task type
    alike. The metrics do not depend on the order."""
    queues: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        queues.setdefault(row["task_type"], []).append(row)
    depth = max(map(len, queues.values()), default=0)
    return [queue[i] for i in range(depth) for queue in queues.values() if i < len(queue)]


def custom_dataset(domain: str, **metadata: Any) -> dict[str, datasets.Dataset]:
    """The pairs of ``domain``; the model's tokenizer (``tokenizer=`` or ``pretrained=``) splits off each first token."""
    domain_task_types(domain)
    require_tokenizer(metadata, "rubia scores every token after each sentence's first")
    return {"test": datasets.Dataset.from_list(interleaved(domain_rows(domain)))}


def perplexity(total: float, scored: int) -> tuple[float, float]:
    """(mean negative log-likelihood, perplexity) of ``scored`` tokens whose log-likelihoods sum to ``total``; NaN for
    none."""
    if scored <= 0 or not math.isfinite(total):
        return math.nan, math.nan
    nll = -total / scored
    return nll, math.exp(nll) if nll <= LARGEST_NLL else math.inf


def pair_item(doc: dict[str, Any], scores: dict[str, tuple[float, float]], mismatch: bool) -> dict[str, Any]:
    """The logged item of one pair: its id, domain, task type, per sentence NLL and PPL."""
    item = {"id": doc["id"], "domain": doc["domain"], "task_type": doc["task_type"]}
    for side in SIDES:
        item[f"nll_{side}"], item[f"ppl_{side}"] = scores[side]
    return {**item, "boundary_mismatch": mismatch}


def pair_near_ties(item: dict[str, Any], scored: dict[str, int]) -> dict[str, Any]:
    """The near tie of a causal pair (:mod:`lm_eval_stereo.core.near_ties`): the two mean NLLs (each a request's
    log-likelihood over its ``scored`` tokens) within their bounds; its alternatives are the perplexities ordered the
    other way."""
    nll_pro, nll_anti = item["nll_pro"], item["nll_anti"]
    bounds = [near_ties.bound(1, scored[side]) for side in SIDES]
    if not near_ties.near_tie(nll_pro, nll_anti, *bounds):
        return near_ties.marked([])
    swapped = near_ties.reversed_pair(item["ppl_pro"], item["ppl_anti"])
    return near_ties.marked([{"ppl_pro": pro, "ppl_anti": anti} for pro, anti in swapped])


def sentence_request(tokenizer: Any, text: str, add_special_tokens: bool = False) -> Request:
    """The request scoring every token of ``text`` after its first (``add_special_tokens``: lm_eval's ``add_bos_token``
    model argument), of at most the tokenizer's ``model_max_length`` tokens, as ``lmppl.LM`` tokenises with
    ``truncation=True`` (:func:`~lm_eval_stereo.core.reference_requests.reference_encoding`).

    From the reference's first scored token on (:func:`~lm_eval_stereo.core.reference_requests.request` with ``start``
    0). Where its first token ends inside a character (a byte-level tokenizer's first byte of a Cyrillic letter: the
    request would have an empty context, which lm_eval replaces by its prefix token), the context is that whole
    character instead: the strings then say another split, which ``hf-prefix`` replaces by the reference's tokens and
    other backends score as lm_eval splits it (flagged)."""
    found = request(tokenizer, text, 0, add_special_tokens, truncation=True)
    if found.context or found.split_kept or found.reference is None:
        return found
    text = found.continuation  # the text the reference's tokens cover (its first model_max_length tokens)
    end = tokenizer(text, return_offsets_mapping=True)["offset_mapping"][0][1]
    context, continuation = text[:end], text[end:]
    encoding = lm_eval_encoding(tokenizer, context, continuation, add_special_tokens)
    return Request(context, continuation, len(encoding.whole) - len(encoding.context), False, found.reference)


class RubiaTask(SummaryTask):
    """``rubia_<domain>``: two loglikelihood requests per pair, with the protocol of the evaluated model."""

    KEY_FIELD = "id"

    def domain(self) -> str:
        return str((self.config.dataset_kwargs or {})["domain"])

    def masked(self) -> bool:
        """Whether the evaluated model is a masked LM (:func:`masked_model`)."""
        return masked_model(self.config.metadata or {})

    def metric_set(self) -> MetricSet:
        return metric_set(self.domain())

    def counts_near_ties(self) -> bool:
        """A causal LM's pairs mark their near ties (:func:`pair_near_ties`); a masked LM's (``hf-mlm``, the one
        masked backend) do not."""
        return not self.masked()

    def facts(self) -> dict[str, Any]:
        return {"domain": self.domain(), "protocol": "masked" if self.masked() else "causal"}

    def reference_requests(self, doc: dict[str, Any]) -> tuple[Request, Request]:
        """The pro-trope and the anti-trope sentence's causal request (:class:`Request`, with the reference's token
        split), split with the evaluated model's tokenizer: built once per pair, for its lm_eval instances and again
        for its item."""
        built: dict[str, tuple[Request, Request]] = self.__dict__.setdefault("_reference_requests", {})
        if doc["id"] not in built:
            metadata = self.config.metadata or {}
            tokenizer = load_tokenizer(metadata)
            add_bos = flag(metadata.get("add_bos_token") or False, "add_bos_token")
            built[doc["id"]] = tuple(sentence_request(tokenizer, doc[side], add_bos) for side in SIDES)
        return built[doc["id"]]

    def construct_requests(self, doc: dict[str, Any], ctx: str, **kwargs: Any) -> list[Instance]:
        if not self.masked():
            return instances(doc, self.reference_requests(doc), **kwargs)
        kwargs = instance_kwargs(kwargs)
        return [
            Instance(request_type="loglikelihood", doc=doc, arguments=("", doc[side]), idx=i, **kwargs)
            for i, side in enumerate(SIDES)
        ]

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        return self.masked_item(doc, results) if self.masked() else self.causal_item(doc, results)

    def causal_item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """Every token after the first, the reference's tokens where the backend scored them."""
        scores, mismatch, tokens = {}, False, {}
        for side, req, result in zip(SIDES, self.reference_requests(doc), results, strict=True):
            exact = scored_reference_tokens(result)
            scored = len(req.reference[1]) if exact and req.reference else req.scored
            tokens[side] = scored if req.reference else 0
            scores[side] = perplexity(float(result[0]), tokens[side])
            # a sentence longer than the model's window, not scored (NaN: unscored; counted as truncated)
            mismatch = mismatch or not (req.split_kept or exact or truncation.unscored(result))
        item = pair_item(doc, scores, mismatch)
        return item | pair_near_ties(item, tokens)

    def masked_item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """Every token masked in turn (hf-mlm's pseudo-log-likelihood of the whole sentence)."""
        tokenizer = load_tokenizer(self.config.metadata or {})
        scores, mismatch = {}, False
        for side, result in zip(SIDES, results, strict=True):
            ids = tokenizer(doc[side], add_special_tokens=False)["input_ids"]
            # lmppl.MaskedLM scores tokenizer.tokenize(text) converted to ids; hf-mlm scores the encoding without
            # special tokens: flagged where they differ
            mismatch = mismatch or tokenizer.convert_tokens_to_ids(tokenizer.tokenize(doc[side])) != ids
            scores[side] = perplexity(float(result[0]), len(ids))
        return pair_item(doc, scores, mismatch)
