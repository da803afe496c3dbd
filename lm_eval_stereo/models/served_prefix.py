"""``--model local-completions-prefix``: lm_eval's ``local-completions`` whose log-likelihood requests read the
prefix cache of a ``vllm serve`` that runs the plugin's vLLM plugin (:mod:`lm_eval_stereo.vllm_plugin`).

- Before its first log-likelihood request it asks the server, once, whether an opted-in request reads the cache
  (:meth:`LocalCompletionsPrefix.server_reads_cache`: one prompt sent twice, the second answer's
  ``usage.prompt_tokens_details.cached_tokens``). A server without the plugin, without prefix caching or without
  prompt-token details (``vllm serve --enable-prompt-tokens-details``) is named in one warning, and the run is scored
  uncached, as ``local-completions`` scores it.
- Otherwise every log-likelihood request carries the opt-in (``vllm_xargs``), and every answer is checked against its
  ``cached_tokens``: one whose cached tokens reach the context's last token
  (:func:`lm_eval_stereo.core.prefix_cache.reaches_continuation`), whose continuation log-probabilities are null, or
  that carries no usage (a replica or proxy that drops it) is re-sent with the cache skipped and counted per task
  (``requests_resent``); it is never scored from a cached position, and never stored in ``--use_cache``'s database
  before it has been re-sent. A re-sent answer is checked like the first: one whose ``cached_tokens`` still reach the
  context's last token (a server that reads its prefix cache for a request that did not opt in) stops the run in one
  line naming the endpoint (:func:`lm_eval_stereo.core.prefix_cache.check_resent`), never scored as it came back.

One prompt per request (``batch_size`` 1, lm_eval's default): vLLM reports the cached tokens of a request's last prompt
only. Parallel requests go through ``num_concurrent``.
"""

from __future__ import annotations

import logging
from typing import Any

from lm_eval.models.openai_completions import LocalCompletionsAPI

from lm_eval_stereo.core.credentials import redact_url
from lm_eval_stereo.core.errors import fail
from lm_eval_stereo.core.prefix_cache import (
    CacheReadAfterOptOut,
    RequestTasks,
    check_resent,
    count_resent,
    reaches_continuation,
)
from lm_eval_stereo.models.served_mixin import CompletionsMixin
from lm_eval_stereo.vllm_plugin import OPT_IN

eval_logger = logging.getLogger(__name__)

#: the text of the probe prompt, repeated to :data:`PROBE_TOKENS` tokens (longer than a few blocks of any size
#: vLLM's platforms use, 16 to 256)
PROBE_TEXT = "The cat sat on the mat and looked at the door. "
PROBE_TOKENS = 600


class Resend(tuple):
    """The parsed answer of a request that must be re-sent with the cache skipped (never stored, never scored)."""

    __slots__ = ()


class _ResendsNotStored:
    """lm_eval's cache hook that drops :class:`Resend` answers (``--use_cache`` stores each answer as it comes)."""

    def __init__(self, hook: Any) -> None:
        self.hook = hook

    def add_partial(self, attr: str, req: Any, res: Any) -> None:
        if not isinstance(res, Resend):
            self.hook.add_partial(attr, req, res)


def cached_tokens(output: Any) -> int | None:
    """A completions response's ``usage.prompt_tokens_details.cached_tokens``, None where it has none."""
    usage = output.get("usage") if isinstance(output, dict) else None
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usable(output: Any, context_length: int) -> bool:
    """Whether a one-prompt response can be scored: it says how many tokens it read from the cache, they stop before
    the context's last token, and the continuation's log-probabilities are all there."""
    cached = cached_tokens(output)
    if cached is None or reaches_continuation(cached, context_length):
        return False
    choices = output.get("choices") or []
    if len(choices) != 1:
        return False
    logprobs = choices[0].get("logprobs") or {}
    values = (logprobs.get("token_logprobs") or [])[context_length:-1]
    tops = (logprobs.get("top_logprobs") or [])[context_length:-1]
    return bool(values) and len(values) == len(tops) and all(v is not None and t for v, t in zip(values, tops))


class LocalCompletionsPrefix(RequestTasks, CompletionsMixin, LocalCompletionsAPI):
    """``local-completions`` reading a vLLM server's prefix cache (see the module docstring), with what the plugin's
    view of ``local-completions`` does for every task it runs (:class:`~lm_eval_stereo.models.served_mixin.CompletionsMixin`)."""

    #: its per-task counts of re-sent requests go into the results (:mod:`lm_eval_stereo.core.prefix_cache`)
    RESENDS_REQUESTS = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._batch_size != 1:
            fail(
                f"--model local-completions-prefix: batch_size={self._batch_size}: vLLM reports the cached tokens of "
                "a request's last prompt only, so each prompt is sent alone; use num_concurrent for parallel requests"
            )
        self._reads_cache: bool | None = None  # asked at the first log-likelihood request
        self._opt_in = False
        self._resending = False
        #: a re-sent answer stopped the run: the answers still in flight are left unread (each raising in turn would
        #: leave asyncio a "Task exception was never retrieved" trace to print at exit)
        self._resent_refused = False

    def set_cache_hook(self, cache_hook: Any) -> None:
        super().set_cache_hook(_ResendsNotStored(cache_hook))

    def _create_payload(self, messages: Any, generate: bool = False, *args: Any, **kwargs: Any) -> dict:
        payload = super()._create_payload(messages, generate, *args, **kwargs)
        if not generate and self._opt_in:
            payload["vllm_xargs"] = {OPT_IN: 1}
        return payload

    def parse_logprobs(self, outputs: Any, tokens: Any = None, ctxlens: Any = None, **kwargs: Any) -> list:
        if not self._opt_in:
            if self._resending and self._resent_refused:  # the run is ending: an answer still in flight is not read
                return [Resend() for _ in ctxlens or []]
            if self._resending:
                try:
                    check_resent(outputs, ctxlens or [], cached_tokens, redact_url(str(self.base_url)))
                except CacheReadAfterOptOut:
                    self._resent_refused = True
                    raise
            return super().parse_logprobs(outputs=outputs, tokens=tokens, ctxlens=ctxlens, **kwargs)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        answers = []
        for output, context_length in zip(outputs, ctxlens or []):
            if usable(output, context_length):
                answers += super().parse_logprobs(outputs=output, tokens=tokens, ctxlens=[context_length])
            else:
                answers.append(Resend())
        return answers

    def server_reads_cache(self) -> tuple[bool, str]:
        """Whether an opted-in request reads the server's prefix cache, and what the server lacks where it does not:
        a prompt of :data:`PROBE_TOKENS` tokens (at most the window) sent twice, the second answer's cached tokens."""
        prompt = (self.tok_encode(PROBE_TEXT * PROBE_TOKENS))[: min(PROBE_TOKENS, self.max_length - 1)]
        self._opt_in = True
        try:
            first = self.model_call(messages=[prompt], generate=False)
            second = self.model_call(messages=[prompt], generate=False)
        except Exception as exc:  # noqa: BLE001 - any failure means: not known to read the cache
            return False, f"the probe request failed ({type(exc).__name__})"
        finally:
            self._opt_in = False
        if first is None or second is None:
            return False, "the probe request failed"
        cached = cached_tokens(second)
        if cached is None:
            return (
                False,
                "its answers carry no usage.prompt_tokens_details (start it with --enable-prompt-tokens-details)",
            )
        if cached == 0:
            return False, (
                "it read nothing from its prefix cache for a request that opted in: it runs without the plugin's vLLM "
                "plugin (pip install lm-eval-stereo into the server's environment) or with prefix caching off"
            )
        return True, ""

    def _loglikelihood_tokens(self, requests: list, **kwargs: Any) -> list[tuple[float, bool]]:
        if not requests:
            return []
        if self._reads_cache is None:
            self._reads_cache, lacking = self.server_reads_cache()
            if not self._reads_cache:
                eval_logger.warning(
                    f"lm-eval-stereo: --model local-completions-prefix: {redact_url(str(self.base_url))}: {lacking}; every "
                    "log-likelihood request is scored uncached, as --model local-completions scores it"
                )
        if not self._reads_cache:
            return super()._loglikelihood_tokens(requests, **kwargs)
        tasks = self.request_tasks(len(requests))
        self._opt_in = True
        try:
            answers = list(super()._loglikelihood_tokens(requests, **kwargs))
        finally:
            self._opt_in = False
        again = [i for i, answer in enumerate(answers) if isinstance(answer, Resend)]
        if again:
            self._resending = True
            try:
                resent = super()._loglikelihood_tokens([requests[i] for i in again], **kwargs)
            finally:
                self._resending = False
            for i, answer in zip(again, resent):
                answers[i] = answer
            count_resent(self, [tasks[i] for i in again])
        return answers
