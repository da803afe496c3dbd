"""Requests that did not fit the model's window, marked by the backend and counted per task (``truncated``).

A causal LM reads at most its window (lm_eval's ``max_length``: the model arguments' ``max_length``, else the model
config's ``n_positions`` / ``max_position_embeddings``; vLLM's ``max_model_len``). A log-likelihood request longer than
that is either scored on its context cut from the left (what lm_eval's ``hf`` does) or, where the continuation alone is
longer, cannot be scored at all. Neither may become a score nobody knows was cut, so a backend answers such a request
with a mark (the answer's type, as :class:`~lm_eval_stereo.core.token_split.ReferenceTokensAnswer` marks an exact
split):

- :class:`TruncatedAnswer`: the ``(log-likelihood, greedy)`` of the continuation after the part of the context that
  fit (:func:`lm_eval_stereo.core.token_split.cut` marks an answer, keeping the mark of an exact split);
- :data:`UNFIT`: a continuation longer than the window, not scored (NaN, which the benchmarks count as unscored).

Every plugin task (:class:`~lm_eval_stereo.core.summary.SummaryTask`) counts the documents with a marked answer in the
results field :data:`TRUNCATED` (``truncated,<filter>`` in ``results_*.json``, 0 where none was cut; absent from
results written before it was counted) and logs it on each document's line; the report shows a caveat naming the
model argument to raise (:data:`REMEDY`).

The hook point for a backend: answer ``token_split.cut(answer)`` or :data:`UNFIT` for the requests that did not fit;
nothing else is needed for the count and the caveat. :func:`score_within_window` does it for a backend's
``_loglikelihood_tokens`` given its window: ``hf-prefix`` (:mod:`lm_eval_stereo.models.hf_prefix`), lm_eval's ``hf``
(:mod:`lm_eval_stereo.hooks.huggingface`) and ``vllm`` (:mod:`lm_eval_stereo.hooks.vllm`), whose continuation longer
than ``max_model_len`` would otherwise end in lm_eval's raw ``AttributeError`` from ``_parse_logprobs``. This module
imports nothing of lm_eval at import time (the report reads its names).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

eval_logger = logging.getLogger(__name__)

#: the results field (a count every plugin task reports)
TRUNCATED = "truncated"
#: what a user raises to score such items whole
REMEDY = "raise max_length in --model_args (max_model_len for vLLM), up to the model's context length"


class Truncated:
    """The mark: an answer to a request that did not fit the model's window."""

    __slots__ = ()


class TruncatedAnswer(tuple, Truncated):
    """``(log-likelihood, greedy)`` of a request cut to the model's window (or :data:`UNFIT`)."""

    __slots__ = ()


#: the answer to a request whose continuation alone is longer than the window: not scored
UNFIT = TruncatedAnswer((math.nan, False))


def was_truncated(answer: Any) -> bool:
    """Whether a backend marked ``answer`` as that of a request that did not fit its window."""
    return isinstance(answer, Truncated)


def unscored(answer: Any) -> bool:
    """Whether ``answer`` is a marked request the backend could not score at all (:data:`UNFIT`)."""
    return was_truncated(answer) and isinstance(answer, tuple) and bool(answer) and math.isnan(answer[0])


def any_truncated(answers: Iterable[Any]) -> bool:
    """Whether one of a document's answers is marked (:func:`was_truncated`)."""
    return any(map(was_truncated, answers))


#: (cache key, context token ids, continuation token ids): what lm_eval hands a backend's ``_loglikelihood_tokens``
EncodedRequest = tuple[Any, Sequence[int], Sequence[int]]
#: the attribute a model carries while :func:`score_within_window` scores its requests (a backend's own window
#: check, called inside, passes them through)
WITHIN_WINDOW = "_lm_eval_stereo_within_window"


def beyond_window(
    requests: Sequence[EncodedRequest], window: int, backend: str, max_length: int
) -> tuple[set[int], set[int]]:
    """The requests longer than ``window`` (the most context and continuation tokens the backend reads as one request:
    ``max_length + 1`` for ``hf``, whose last token is only predicted; ``max_model_len - 1`` for vLLM, which needs one
    generated token), in one warning naming the model's ``max_length``: those whose continuation alone needs the
    whole window (not scored: no context token would be left) and those to be scored on their context cut from the
    left."""
    unfit = {n for n, (_, _, continuation) in enumerate(requests) if len(continuation) >= window}
    shortened = {
        n
        for n, (_, context, continuation) in enumerate(requests)
        if n not in unfit and len(context) + len(continuation) > window
    }
    if unfit or shortened:
        eval_logger.warning(
            "%s: %d request(s) longer than the model's window of %d tokens: %d scored on their context cut from the "
            "left, %d not scored (the continuation alone is longer); counted per task as %r: %s",
            backend,
            len(unfit) + len(shortened),
            max_length,
            len(shortened),
            len(unfit),
            TRUNCATED,
            REMEDY,
        )
    return unfit, shortened


def score_within_window(
    model: Any,
    requests: Sequence[EncodedRequest],
    window: int,
    score: Callable[[list], list],
    backend: str,
    exact: frozenset[int] = frozenset(),
) -> list:
    """``score`` (a backend's ``_loglikelihood_tokens``) of the requests that fit ``window`` (:func:`beyond_window`),
    the answers of those cut to it marked (:func:`~lm_eval_stereo.core.token_split.cut`), :data:`UNFIT` for the
    others, which are not sent; ``exact``: the requests whose reference tokens are scored
    (:class:`~lm_eval_stereo.core.token_split.ReferenceTokensAnswer`). ``model``'s cache hook stores each answer with
    its marks as it is scored (:class:`~lm_eval_stereo.core.token_split.MarkingCacheHook`)."""
    from lm_eval_stereo.core.token_split import MarkingCacheHook, ReferenceTokensAnswer, cut

    unfit, shortened = beyond_window(requests, window, backend, model.max_length)
    keys = {n: tuple(request[0]) for n, request in enumerate(requests) if request[0] is not None}
    hook = model.cache_hook
    model.cache_hook = MarkingCacheHook(
        hook, {keys[n] for n in exact if n in keys}, frozenset(keys[n] for n in shortened if n in keys)
    )
    model.__dict__[WITHIN_WINDOW] = True
    fitting = [n for n in range(len(requests)) if n not in unfit]
    try:
        scored = score([requests[n] for n in fitting]) if fitting else []
    finally:
        model.cache_hook = hook
        model.__dict__.pop(WITHIN_WINDOW, None)
    answers: list = [UNFIT] * len(requests)
    for n, answer in zip(fitting, scored):
        answer = ReferenceTokensAnswer(answer) if n in exact else answer
        answers[n] = cut(answer) if n in shortened else answer
    return answers


def window_wrapper(original: Any, extra: int, backend: str) -> Any:
    """A backend's ``_loglikelihood_tokens`` (``original``) through :func:`score_within_window`, its window
    ``max_length + extra`` tokens; a call from inside one (``hf-prefix``'s fallback to HFLM's) and a rolling call
    (``override_bs``, windows lm_eval builds to fit) pass through."""
    import functools

    @functools.wraps(original)
    def _loglikelihood_tokens(self: Any, requests: list, *args: Any, **kwargs: Any) -> list:
        if self.__dict__.get(WITHIN_WINDOW) or kwargs.get("override_bs") is not None or len(args) > 1:
            return original(self, requests, *args, **kwargs)
        score = functools.partial(original, self, *args, **kwargs)
        return score_within_window(self, requests, self.max_length + extra, score, backend)

    _loglikelihood_tokens._lm_eval_stereo = True  # type: ignore[attr-defined]
    return _loglikelihood_tokens
