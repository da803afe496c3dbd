"""``--model vllm-prefix``: lm_eval's in-process ``vllm`` backend whose log-likelihood requests read vLLM's prefix
cache, so that the continuations of one context (MBBQ's three answers, StereoSet's three candidates) forward it once.

vLLM never reads its prefix cache for a request that asks for prompt log-probabilities
(``SamplingParams.skip_reading_prefix_cache`` defaults to true for such requests): the positions it reads from the
cache are not computed, and their log-probabilities come back as whatever the output buffer held (None in lm_eval's
sum, or a stale number: vLLM's open PR #42245). lm_eval's scoring reads only the continuation's log-probabilities,
which come from the logits of the context's last token onwards, so a request may read the cache as long as the cached
tokens stop before that token. This backend:

- sends each log-likelihood request with ``skip_reading_prefix_cache=False`` (and ``detokenize=False``: vLLM's
  detokenizer crashes on the ids of the positions it did not compute), in an order that puts the requests sharing a
  context next to each other (:meth:`VLLMPrefix.dispatch_order`: the token sequences sorted, so that each one follows
  the one it shares the longest prefix with);
- re-sends with the cache skipped every request whose cached tokens reach the context's last token
  (:func:`lm_eval_stereo.core.prefix_cache.reaches_continuation`) or whose continuation log-probabilities are missing,
  and counts it per task (``requests_resent`` in the results, :mod:`lm_eval_stereo.core.prefix_cache`);
- starts the engine with the smallest KV-cache block size the platform's attention takes (:func:`smallest_block_size`;
  only whole blocks are shared), unless ``--model_args block_size=`` says otherwise; a size the platform refuses ends
  the run in one line;
- scores uncached, after one warning, where the engine has prefix caching off;
- scores a request longer than the window as ``vllm`` does, marked and counted (``truncated``,
  :func:`lm_eval_stereo.core.window.score_within_window`).

Generation is ``vllm``'s, with a seed per sampled repeat (:class:`~lm_eval_stereo.models.vllm_mixin.VLLMMixin`).
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from typing import Any

from lm_eval.models.vllm_causallms import VLLM
from vllm import SamplingParams

from lm_eval_stereo.core import engines, window
from lm_eval_stereo.core.errors import fail
from lm_eval_stereo.core.prefix_cache import RequestTasks, count_resent, reaches_continuation
from lm_eval_stereo.models.vllm_mixin import VLLMMixin

eval_logger = logging.getLogger(__name__)

#: a log-likelihood request as lm_eval's ``vllm`` backend sends it, but reading the prefix cache
READ_CACHE = SamplingParams(
    temperature=0, prompt_logprobs=1, max_tokens=1, detokenize=False, skip_reading_prefix_cache=False
)
#: the same request with the cache skipped (vLLM's default for prompt log-probabilities): the re-sent ones
SKIP_CACHE = SamplingParams(temperature=0, prompt_logprobs=1, max_tokens=1, detokenize=False)


def _block_sizes(backend: Any) -> list[int]:
    """The block sizes (or, for ``MultipleOf(n)``, the bases ``n``) an attention backend's kernels take."""
    return [getattr(size, "base", size) for size in backend.get_supported_kernel_block_sizes()]


def smallest_block_size() -> int | None:
    """The KV-cache block size ``vllm-prefix`` starts the engine with where the user names none: on vLLM's CPU
    platform, the smallest its attention (``CPU_ATTN``) takes, 32 in vLLM 0.32 (its kernels work in tiles of 32
    tokens), where vLLM itself defaults to 128 for speed; elsewhere None, since vLLM's CUDA, ROCm and XPU platforms
    already pick the smallest size their attention backends share when ``block_size`` is unset (16 for FlashAttention
    and Triton on CUDA, 64 on XPU)."""
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return None
    from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackend

    return min(_block_sizes(CPUAttentionBackend))


def check_block_size(value: Any) -> int:
    """``--model_args block_size=`` as an integer the platform takes, or one line saying why not (exit status 2).
    The CPU platform's attention is checked here, before the engine starts; other platforms' refusals come from vLLM
    when the engine starts."""
    text = str(value).strip()
    if not text.isdigit() or int(text) < 1:
        fail(f"--model vllm-prefix: block_size={value} is not a positive integer")
    size = int(text)
    from vllm.platforms import current_platform

    if current_platform.is_cpu():
        from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackend

        bases = _block_sizes(CPUAttentionBackend)
        if not any(size % base == 0 for base in bases):
            takes = " or ".join(f"multiples of {base}" for base in bases)
            fail(
                f"--model vllm-prefix: block_size={size} is refused by vLLM's CPU attention (CPU_ATTN), which takes "
                f"{takes}; the smallest, {min(bases)}, shares the most"
            )
    return size


class VLLMPrefix(RequestTasks, VLLMMixin, VLLM):
    """lm_eval's ``vllm`` backend whose log-likelihood requests read the prefix cache (see the module docstring), with
    what the plugin's view of ``vllm`` does for every task it runs (:class:`~lm_eval_stereo.models.vllm_mixin.VLLMMixin`:
    a seed per sampled repeat)."""

    #: its per-task counts of re-sent requests go into the results (:mod:`lm_eval_stereo.core.prefix_cache`)
    RESENDS_REQUESTS = True

    def __init__(self, pretrained: str, block_size: Any = None, **kwargs: Any) -> None:
        size = check_block_size(block_size) if block_size is not None else smallest_block_size()
        if size is not None:
            kwargs["block_size"] = size
        super().__init__(pretrained, **kwargs)
        engines.record(self)  # shut down when the block it was started in ends (lm_eval_stereo.core.engines)
        self.reads_prefix_cache = self._prefix_caching_on(kwargs)
        if not self.reads_prefix_cache:
            eval_logger.warning(
                "lm-eval-stereo: --model vllm-prefix: the engine has prefix caching off (enable_prefix_caching=False, "
                "or a model vLLM serves without it): every log-likelihood request is forwarded whole, as --model vllm "
                "does"
            )
        #: prompt tokens sent and read from the cache by the log-likelihood requests so far (re-sent ones included)
        self.prompt_tokens = Counter()

    def _prefix_caching_on(self, engine_args: dict) -> bool:
        """Whether the engine caches prefixes: its own configuration where it runs in this process, else (data
        parallel, one engine per replica) the engine arguments (vLLM's default: on)."""
        engine = getattr(self, "model", None)
        config = getattr(getattr(engine, "llm_engine", None), "vllm_config", None)
        if config is not None:
            return bool(config.cache_config.enable_prefix_caching)
        return str(engine_args.get("enable_prefix_caching", True)).lower() not in ("false", "0")

    @staticmethod
    def dispatch_order(inputs: list[list[int]]) -> list[int]:
        """The order the requests are sent in: their token sequences sorted, so that the requests that share a
        context are sent one after the other and each one's context is in the cache when it is scheduled."""
        return sorted(range(len(inputs)), key=lambda i: inputs[i])

    def _loglikelihood_tokens(
        self, requests: list[tuple[tuple[str, str], list[int], list[int]]], disable_tqdm: bool = False
    ) -> list[tuple[float, bool]]:
        """The requests within the window as ``vllm`` scores them (:func:`lm_eval_stereo.core.window.score_within_window`:
        one longer than ``max_model_len - 1`` cut from the left and marked, one whose continuation alone is longer not
        sent, both counted as ``truncated``), read from the prefix cache where the engine caches prefixes."""
        if not self.reads_prefix_cache:
            score = functools.partial(super()._loglikelihood_tokens, disable_tqdm=disable_tqdm)
        else:
            task_of = dict(zip(map(id, requests), self.request_tasks(len(requests))))
            score = functools.partial(self._read_prefix_cache, task_of=task_of)
        return window.score_within_window(self, requests, self.max_length - 1, score, "vllm-prefix")

    def _read_prefix_cache(
        self, requests: list[tuple[tuple[str, str], list[int], list[int]]], task_of: dict[int, str | None]
    ) -> list[tuple[float, bool]]:
        """Each request's answer, sent in :meth:`dispatch_order` reading the cache, re-sent with the cache skipped
        where :meth:`_answer` says so (counted per task: ``task_of``, by the request's ``id``); every request here
        fits the window but for its context, which is cut from the left as lm_eval's ``vllm`` cuts it."""
        tasks = [task_of.get(id(request)) for request in requests]
        max_context = self.max_length - 1  # vLLM requires at least one generation token
        inputs, context_lengths = [], []
        for _, context, continuation in requests:
            inputs.append((context + continuation)[-max_context:])
            context_lengths.append(len(context) - max(0, len(context) + len(continuation) - max_context))
        order = self.dispatch_order(inputs)
        size = len(order) if self.batch_size == "auto" else max(int(self.batch_size), 1)
        answers: list[tuple[float, bool] | None] = [None] * len(requests)
        resent = []
        for start in range(0, len(order), size):
            batch = order[start : start + size]
            outputs = self._generate([inputs[i] for i in batch], READ_CACHE)
            again = []
            for i, output in zip(batch, outputs):
                answer = self._answer(inputs[i], output, context_lengths[i])
                if answer is None:
                    again.append(i)
                else:
                    answers[i] = answer
            if again:
                outputs = self._generate([inputs[i] for i in again], SKIP_CACHE)
                for i, output in zip(again, outputs):
                    answers[i] = self._parse_logprobs(tokens=inputs[i], outputs=output, ctxlen=context_lengths[i])
                resent += again
        count_resent(self, [tasks[i] for i in resent])
        for (cache_key, _, _), answer in zip(requests, answers):
            if cache_key is not None:
                self.cache_hook.add_partial("loglikelihood", cache_key, answer)
        return answers  # type: ignore[return-value]

    def _generate(self, inputs: list[list[int]], params: SamplingParams) -> list:
        """The engine's outputs of ``inputs`` sent with ``params``, their tokens counted in :attr:`prompt_tokens`."""
        outputs = self._model_generate(inputs, generate=True, sampling_params=[params] * len(inputs))
        self.prompt_tokens["sent"] += sum(len(tokens) for tokens in inputs)
        self.prompt_tokens["cached"] += sum(getattr(output, "num_cached_tokens", None) or 0 for output in outputs)
        return outputs

    def _answer(self, tokens: list[int], output: Any, context_length: int) -> tuple[float, bool] | None:
        """The request's (log-likelihood, greedy), or None where it must be re-sent with the cache skipped: its cached
        tokens reach the context's last token, or a continuation token's log-probability is missing."""
        cached = getattr(output, "num_cached_tokens", None)
        if cached is None or reaches_continuation(cached, context_length):
            return None
        positions = output.prompt_logprobs or []
        if len(positions) != len(tokens) or any(
            entry is None or token not in entry
            for token, entry in zip(tokens[context_length:], positions[context_length:])
        ):
            return None
        return self._parse_logprobs(tokens=tokens, outputs=output, ctxlen=context_length)
