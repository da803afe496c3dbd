"""Where the reference starts scoring each version of a sentence, and the lm_eval request that scores the same tokens.

Reference (``evaluate_models/main.py`` ``evaluate_sentence``, ``utils/model_utils.py``): each version is tokenised
alone, ``t = tokenizer(text)`` (the tokenizer's special tokens included, e.g. a BOS); ``lp[j]`` is the log-probability
of token ``t[j+1]`` given ``t[:j+1]`` (the first token is never scored). With ``d`` the first index where the two
versions' tokens differ:

- ``start = d - 1`` (a first token that differs, ``d = 0``, gives ``start = -1``: Python's ``lp[-1:]``, the last
  token only);
- one version's tokens a prefix of the other's: ``start = min(len) - 2``;
- identical tokens: ``start = 0``;
- ``measure_whole_sequences``: every entry of ``lp``.

The scored tokens are ``t[k:]`` with ``k`` the first index of ``lp[start:]`` plus one. lm_eval scores a request
``(context, continuation)`` as ``encode(context + continuation)[len(encode(context)):]`` given the context's tokens
(an empty context: the model's prefix token, BOS or EOS), moving the context's trailing whitespace to the
continuation. The request here is ``context = text[:offset of t[k]]``; whether lm_eval's encoding of it reproduces
``t[:k] | t[k:]`` is checked with the same tokenizer and flagged where it does not (``boundary_kept``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_stereo.core.token_split import TokenSplit, TokenSplitInstance, token_split


def reference_start(tokens_m: list[Any], tokens_f: list[Any], whole_sequence: bool = False) -> int:
    """The reference's ``start`` (an index into ``lp``, possibly negative)."""
    if whole_sequence:
        return 0
    shorter, longer = sorted((len(tokens_m), len(tokens_f)))
    differing = [i for i in range(shorter) if tokens_m[i] != tokens_f[i]]
    if not differing and shorter != longer:
        return shorter - 2
    return differing[0] - 1 if differing else 0


def first_scored(start: int, length: int) -> int:
    """Index of the first token of ``t`` (``length`` tokens) that ``lp[start:]`` scores (``length`` when none)."""
    positions = list(range(1, length))[start:]
    return positions[0] if positions else length


@dataclass(frozen=True)
class Request:
    """One version's lm_eval request: ``scored``, the number of tokens lm_eval scores (the divisor of the mean);
    ``kept``: they are exactly the reference's tokens (where not, e.g. a first differing token that starts inside a
    character, lm_eval also scores the tokens back to the character's start, which both versions share);
    ``reference``: the reference's context and scored token ids (None: nothing to score)."""

    context: str
    continuation: str
    scored: int
    kept: bool
    reference: TokenSplit | None = None


def _lm_eval_split(tokenizer: Any, context: str, continuation: str, add_special_tokens: bool) -> list[list[int]]:
    """The context and continuation tokens lm_eval 0.4.13's HFLM scores (``_encode_pair``; empty context: prefix
    token)."""

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"]

    if not context:
        prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        return [[prefix], encode(continuation)]
    stripped = context.rstrip()
    continuation = context[len(stripped) :] + continuation
    whole, head = encode(stripped + continuation), encode(stripped)
    return [head, whole[len(head) :]]


def request(tokenizer: Any, text: str, start: int, add_special_tokens: bool = False) -> Request:
    """The request of one version scored from the reference's ``start`` (``add_special_tokens``: lm_eval's
    ``add_bos_token`` model argument)."""
    encoded = tokenizer(text, return_offsets_mapping=True)
    ids, offsets = encoded["input_ids"], encoded["offset_mapping"]
    k = first_scored(start, len(ids))
    if k >= len(ids):
        return Request("", text, 0, False)  # nothing to score (a one-token version): the item is left out
    cut = offsets[k][0]
    context, continuation = text[:cut], text[cut:]
    head, tail = _lm_eval_split(tokenizer, context, continuation, add_special_tokens)
    reference = token_split(ids[:k], ids[k:])
    return Request(context, continuation, len(tail), head == ids[:k] and tail == ids[k:], reference)


def requests(
    tokenizer: Any, masculine: str, feminine: str, whole_sequence: bool = False, add_special_tokens: bool = False
) -> tuple[Request, Request]:
    """The masculine and the feminine version's requests, from the reference's ``start`` of the pair."""
    tokens_m, tokens_f = tokenizer(masculine)["input_ids"], tokenizer(feminine)["input_ids"]
    start = reference_start(tokens_m, tokens_f, whole_sequence)
    return (
        request(tokenizer, masculine, start, add_special_tokens),
        request(tokenizer, feminine, start, add_special_tokens),
    )


def instances(doc: dict[str, Any], requests: Sequence[Request], **kwargs: Any) -> list[TokenSplitInstance]:
    """lm_eval's ``loglikelihood`` instances of ``requests`` (in order), each carrying the reference's token split;
    ``kwargs``: lm_eval's ``construct_requests`` keywords (its chat-template ones dropped: the texts are scored as
    they are)."""
    kwargs.pop("apply_chat_template", None)
    kwargs.pop("chat_template", None)
    return [
        TokenSplitInstance(
            request_type="loglikelihood",
            doc=doc,
            arguments=(r.context, r.continuation),
            idx=i,
            reference_tokens=r.reference,
            **kwargs,
        )
        for i, r in enumerate(requests)
    ]
