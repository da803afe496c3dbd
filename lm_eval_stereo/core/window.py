"""A backend's log-likelihood requests scored within the model's window: those longer than it split off, counted in
one warning, and their answers marked (:mod:`lm_eval_stereo.core.truncation` holds the marks and the count).

A window is the most context and continuation tokens the backend reads as one request; a request over it is scored on
its context cut from the left, and one whose continuation alone needs the whole window is not sent (:data:`UNFIT`).
Used by ``hf-prefix`` (:mod:`lm_eval_stereo.models.hf_prefix`) and the plugin's views of lm_eval's ``hf``
(:mod:`lm_eval_stereo.models.hf_mixin`) and ``vllm`` (:mod:`lm_eval_stereo.models.vllm_mixin`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from lm_eval_stereo.core.token_split import MarkingCacheHook, ReferenceTokensAnswer, cut
from lm_eval_stereo.core.truncation import REMEDY, TRUNCATED, UNFIT, EncodedRequest

eval_logger = logging.getLogger(__name__)

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
