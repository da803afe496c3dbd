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
nothing else is needed for the count and the caveat. :func:`lm_eval_stereo.core.window.score_within_window` does it for
a backend's ``_loglikelihood_tokens`` given its window: ``hf-prefix`` (:mod:`lm_eval_stereo.models.hf_prefix`) and the
plugin's views of lm_eval's ``hf`` (:mod:`lm_eval_stereo.models.hf_mixin`) and ``vllm``
(:mod:`lm_eval_stereo.models.vllm_mixin`), whose continuation longer
than ``max_model_len`` would otherwise end in lm_eval's raw ``AttributeError`` from ``_parse_logprobs``. This module
imports nothing of lm_eval at import time (the report reads its names).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

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
