"""Log-likelihood requests that read vLLM's prefix cache (``--model vllm-prefix``, ``local-completions-prefix``): when
a request's answer cannot be used, and the count of the requests re-sent with the cache skipped.

vLLM computes nothing for the prompt positions it reads from its prefix cache, so their prompt log-probabilities are
missing or stale (the output buffer's previous contents). A log-likelihood is the sum of the continuation's
log-probabilities, and the first of them comes from the logits of the context's last token: an answer is usable when
the cached tokens stop before that token (:func:`reaches_continuation`). A request whose cache reached it is re-sent
with the cache skipped, and counted per task; the counts are written into every log-likelihood task's results as
:data:`RESENT` after lm_eval's ``evaluate`` (:func:`add_resent_counts`, :mod:`lm_eval_stereo.hooks.evaluator`), as
served models' ``unanswered`` are (:mod:`lm_eval_stereo.core.unanswered`).

A re-sent request is checked like the first (:func:`check_resent`): a served answer that still says its cached tokens
reach the continuation (a server that reads its cache for a request that did not opt in) cannot be scored either, and
no further route skips the cache: the run stops in one line naming the endpoint
(:class:`CacheReadAfterOptOut`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from lm_eval_stereo.core.errors import RunStop, quiet_requests_in_flight
from lm_eval_stereo.core.unanswered import write_task_counts

#: the per-task count of log-likelihood requests re-sent with the prefix cache skipped
RESENT = "requests_resent"
#: the attribute of a model that holds its per-task counts of re-sent requests
COUNTS_ATTRIBUTE = "_lm_eval_stereo_resent"
#: the request types whose tasks get the count
SCORING_TYPES = ("loglikelihood", "multiple_choice")


def reaches_continuation(cached_tokens: int, context_length: int) -> bool:
    """Whether ``cached_tokens`` read from the cache reach the context's last token (index ``context_length - 1``),
    whose logits give the continuation's first log-probability: then some of the continuation's log-probabilities
    were not computed."""
    return cached_tokens >= context_length


class CacheReadAfterOptOut(RunStop):
    """A re-sent answer whose cached tokens still reach its continuation; the message is the line that ends the run."""


def check_resent(
    outputs: Any, context_lengths: Sequence[int], cached_tokens: Callable[[Any], int | None], endpoint: str
) -> None:
    """Raise :class:`CacheReadAfterOptOut` where an answer to a re-sent request (``outputs``: one answer per prompt,
    ``context_lengths`` their contexts' lengths) says, by ``cached_tokens(answer)``, that it read its continuation's
    positions from the prefix cache all the same. An answer that says nothing of its cache is scored (the request
    skipped the cache)."""
    for output, context_length in zip(outputs if isinstance(outputs, list) else [outputs], context_lengths):
        cached = cached_tokens(output)
        if cached is not None and reaches_continuation(cached, context_length):
            quiet_requests_in_flight()
            raise CacheReadAfterOptOut(
                f"{endpoint} answered a request re-sent without the prefix cache's opt-in from its prefix cache all the "
                f"same ({cached} cached tokens, its context {context_length}): the continuation's log-probabilities "
                "were not computed, and it is not scored; no results written. Run --model local-completions against "
                "it, or start it with prefix caching off (--no-enable-prefix-caching)"
            )


def count_resent(model: Any, tasks: Iterable[str | None]) -> None:
    """Add one re-sent request per entry of ``tasks`` (each request's task name) to ``model``'s per-task counts."""
    counts = model.__dict__.setdefault(COUNTS_ATTRIBUTE, Counter())
    counts.update(tasks)


def resending_model(lm: Any) -> Any:
    """The model behind ``lm`` (unwrapping ``--use_cache``'s ``CachingLM``) that re-sends requests
    (``RESENDS_REQUESTS``), else None."""
    inner = lm.__dict__.get("lm", lm) if hasattr(lm, "__dict__") else lm
    return inner if getattr(inner, "RESENDS_REQUESTS", False) else None


def reset_resent_counts(lm: Any) -> None:
    """Start a run's counts at zero."""
    model = resending_model(lm)
    if model is not None:
        model.__dict__[COUNTS_ATTRIBUTE] = Counter()


def add_resent_counts(lm: Any, tasks: dict[str, Any], results: dict | None) -> None:
    """Add :data:`RESENT` to every log-likelihood task of the run's results (0 where none was re-sent)."""
    model = resending_model(lm)
    if model is None or not results or "results" not in results:
        return
    write_task_counts(results, tasks, SCORING_TYPES, RESENT, model.__dict__.get(COUNTS_ATTRIBUTE, Counter()))


class RequestTasks:
    """A mixin for an lm_eval model whose ``_loglikelihood_tokens`` (which lm_eval hands token requests without
    their task) counts per task: ``loglikelihood`` records each request's task name for :meth:`request_tasks`."""

    _request_tasks: list | None = None

    def loglikelihood(self, requests: list, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        self._request_tasks = [getattr(request, "task_name", None) for request in requests]
        try:
            return super().loglikelihood(requests, disable_tqdm=disable_tqdm)  # type: ignore[misc]
        finally:
            self._request_tasks = None

    def request_tasks(self, count: int) -> list[str | None]:
        """The task of each of the ``count`` token requests being scored (lm_eval's ``loglikelihood`` hands them
        over one per request, in order); None each where they came otherwise (``loglikelihood_rolling``'s windows)."""
        tasks = self._request_tasks
        return list(tasks) if tasks is not None and len(tasks) == count else [None] * count
