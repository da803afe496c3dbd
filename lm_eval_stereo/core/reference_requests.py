"""The lm_eval request that scores exactly a reference's tokens of one text, from a given token on.

A reference that tokenises a text alone, ``t = tokenizer(text)``, and scores ``lp[j] = log p(t[j+1] | t[:j+1])`` from
``lp[start:]`` on (the first token is never scored) scores the tokens ``t[k:]``, ``k`` the first index of ``lp[start:]``
plus one (:func:`first_scored`). lm_eval scores a request ``(context, continuation)`` as
``encode(context + continuation)[len(encode(context)):]`` given the context's tokens (an empty context: the model's
prefix token, BOS or EOS), moving the context's trailing whitespace to the continuation (:func:`lm_eval_encoding`, the
one copy of that rule the tasks use). The request here is ``context = text[:offset of t[k]]``; whether lm_eval's
encoding of it reproduces ``t[:k] | t[k:]`` is checked with the same tokenizer and flagged where it does not
(:attr:`Request.split_kept`); the reference's own split travels with the
instance (:class:`~lm_eval_stereo.core.token_split.TokenSplitInstance`) for the backends that score it exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_stereo.core.summary import instance_kwargs
from lm_eval_stereo.core.token_split import TokenSplit, TokenSplitInstance, token_split


def first_scored(start: int, length: int) -> int:
    """Index of the first token of ``t`` (``length`` tokens) that ``lp[start:]`` scores (``length`` when none)."""
    positions = list(range(1, length))[start:]
    return positions[0] if positions else length


@dataclass(frozen=True)
class LmEvalEncoding:
    """How lm_eval 0.4.13's HFLM encodes a request ``(context, continuation)`` (``_encode_pair``): ``context``, the
    tokens of the context with its trailing whitespace moved to the continuation, and ``whole``, those of the context
    and continuation together; it scores ``whole[len(context):]``. An empty context is the model's prefix token (BOS,
    else EOS), the continuation encoded alone after it."""

    context: list[int]
    whole: list[int]

    @property
    def continuation(self) -> list[int]:
        """The tokens lm_eval scores."""
        return self.whole[len(self.context) :]

    @property
    def split_kept(self) -> bool:
        """Whether the encoding keeps the request's split: the context's tokens begin the whole's and at least one
        token is left for the continuation (where the context's last token and the continuation's first merge in the
        tokenizer, it does not)."""
        return self.whole[: len(self.context)] == self.context and len(self.whole) > len(self.context)


def lm_eval_encoding(
    tokenizer: Any, context: str, continuation: str, add_special_tokens: bool = False
) -> LmEvalEncoding:
    """lm_eval's encoding of ``(context, continuation)`` with ``tokenizer`` (``add_special_tokens``: lm_eval's
    ``add_bos_token`` model argument)."""

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"]

    if not context:
        prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        return LmEvalEncoding([prefix], [prefix, *encode(continuation)])
    return LmEvalEncoding(encode(context.rstrip()), encode(context + continuation))


@dataclass(frozen=True)
class Request:
    """One version's lm_eval request: ``scored``, the number of tokens lm_eval scores (the divisor of the mean);
    ``split_kept``: they are exactly the reference's tokens (where not, e.g. a first scored token that starts inside a
    character, lm_eval also scores the tokens back to the character's start);
    ``reference``: the reference's context and scored token ids (None: nothing to score)."""

    context: str
    continuation: str
    scored: int
    split_kept: bool
    reference: TokenSplit | None = None


def reference_encoding(tokenizer: Any, text: str, truncation: bool = False) -> tuple[Any, str]:
    """The reference's ids of ``text`` with their offsets, and the text they cover: all of it, or with ``truncation``
    what ``tokenizer(text, truncation=True)`` keeps (its first ``model_max_length`` tokens, special ones included, for
    a tokenizer that truncates on the right, as transformers' tokenizers do by default)."""
    encoded = tokenizer(text, return_offsets_mapping=True)
    if truncation and len(encoded["input_ids"]) > tokenizer.model_max_length and tokenizer.truncation_side == "right":
        encoded = tokenizer(text, return_offsets_mapping=True, truncation=True)
        text = text[: max(end for _, end in encoded["offset_mapping"])]
    return encoded, text


def request(
    tokenizer: Any, text: str, start: int, add_special_tokens: bool = False, truncation: bool = False
) -> Request:
    """The request of one version scored from the reference's ``start`` (``add_special_tokens``: lm_eval's
    ``add_bos_token`` model argument; ``truncation``: the reference tokenises with ``truncation=True``,
    :func:`reference_encoding`)."""
    encoded, text = reference_encoding(tokenizer, text, truncation)
    ids, offsets = encoded["input_ids"], encoded["offset_mapping"]
    k = first_scored(start, len(ids))
    if k >= len(ids):
        return Request("", text, 0, False)  # nothing to score (a one-token version): the item is left out
    cut = offsets[k][0]
    context, continuation = text[:cut], text[cut:]
    encoding = lm_eval_encoding(tokenizer, context, continuation, add_special_tokens)
    reference = token_split(ids[:k], ids[k:])
    kept = encoding.context == ids[:k] and encoding.continuation == ids[k:]
    return Request(context, continuation, len(encoding.continuation), kept, reference)


def instances(doc: dict[str, Any], requests: Sequence[Request], **kwargs: Any) -> list[TokenSplitInstance]:
    """lm_eval's ``loglikelihood`` instances of ``requests`` (in order), each carrying the reference's token split;
    ``kwargs``: lm_eval's ``construct_requests`` keywords (its chat-template ones dropped: the texts are scored as
    they are)."""
    kwargs = instance_kwargs(kwargs)
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
