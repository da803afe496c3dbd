"""A log-likelihood request that also carries the reference's token split, for backends that can score tokens.

lm_eval hands a backend a ``(context, continuation)`` string pair; ``hf`` scores ``encode(context + continuation)``
after ``encode(context)``. Where a reference starts scoring inside a character (a byte-level tokenizer splits a
multi-byte character and both versions of a sentence share its first byte token), no string split gives the
reference's tokens. A task that knows them (it tokenised with the evaluated model's tokenizer) builds a
:class:`TokenSplitInstance`: a plain lm_eval ``Instance`` (``arguments`` stays the two strings, so ``hf``, vLLM and API
backends, which read ``req.args``, score it as before) with one optional field, ``reference_tokens``: the context token
ids and the continuation token ids the reference scores.

A backend that honours the field (``hf-prefix``) checks that the ids are lm_eval's own encoding of the two strings up to
where the reference cuts (``context ids + continuation ids`` a prefix of ``encode(context) + encode(continuation)`` as
lm_eval builds it), scores exactly the continuation ids after the context ids, and answers with a
:class:`ReferenceTokensAnswer` (a ``(log-likelihood, greedy)`` tuple of its own type), so that the task knows the
reference's tokens were scored and flags no token boundary. Any other answer means the string split was scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval.api.instance import Instance

from lm_eval_stereo.core.truncation import Truncated, TruncatedAnswer

#: (context token ids, continuation token ids) as the reference splits a text
TokenSplit = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass
class TokenSplitInstance(Instance):
    """An lm_eval ``loglikelihood`` Instance with the reference's token split (``None``: the strings say it all)."""

    reference_tokens: TokenSplit | None = None


class ReferenceTokensAnswer(tuple):
    """``(log-likelihood, greedy)`` of exactly the request's ``reference_tokens`` (its type is the mark)."""

    __slots__ = ()


class TruncatedReferenceTokensAnswer(ReferenceTokensAnswer, Truncated):
    """The reference's tokens scored after a context cut to the model's window (both marks)."""

    __slots__ = ()


def cut(answer: tuple[float, bool]) -> tuple[float, bool]:
    """``answer`` marked as scored on a context cut to the model's window (:mod:`lm_eval_stereo.core.truncation`),
    an exact split's answer keeping its own mark too."""
    if isinstance(answer, ReferenceTokensAnswer):
        return TruncatedReferenceTokensAnswer(answer)
    return TruncatedAnswer(answer)


def token_split(context: Sequence[int], continuation: Sequence[int]) -> TokenSplit:
    """The field's value: both id sequences as tuples of ints."""
    return tuple(int(i) for i in context), tuple(int(i) for i in continuation)


def reference_tokens_of(request: Any) -> TokenSplit | None:
    """A request's ``reference_tokens`` (``None`` for a plain Instance)."""
    return getattr(request, "reference_tokens", None)


def scored_reference_tokens(answer: Any) -> bool:
    """Whether a backend's answer to a request scored its ``reference_tokens``."""
    return isinstance(answer, ReferenceTokensAnswer)


class MarkingCacheHook:
    """lm_eval's cache hook during one ``loglikelihood`` call: the answers to requests whose reference tokens were
    scored are stored as :class:`ReferenceTokensAnswer`, those scored on a context cut to the window as :func:`cut`
    (marked) as each is scored, so that a run resumed from a killed one's ``--use_cache`` reads them as what they
    are."""

    def __init__(
        self, hook: Any, exact_keys: set[tuple[str, str]], cut_keys: frozenset[tuple[str, str]] = frozenset()
    ) -> None:
        self._hook, self._exact_keys, self._cut_keys = hook, exact_keys, cut_keys

    def add_partial(self, attr: str, req: Any, res: Any) -> None:
        if attr == "loglikelihood":
            res = ReferenceTokensAnswer(res) if tuple(req) in self._exact_keys else res
            res = cut(res) if tuple(req) in self._cut_keys else res
        self._hook.add_partial(attr, req, res)
