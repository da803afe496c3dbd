"""The plugin's vLLM plugin: a completions request that opts in reads vLLM's prefix cache for its prompt
log-probabilities, and is answered None, not a stale number, at the positions read from the cache.

``pyproject.toml`` names :func:`register` in vLLM's entry-point group ``vllm.general_plugins``, so installing
lm-eval-stereo into a server's environment is all it takes; vLLM calls it in every process it starts (the API server,
the engine core, the workers), and it changes nothing until a request asks: a completions request whose ``vllm_xargs``
holds ``{"lm_eval_stereo_read_prefix_cache": 1}`` (:data:`OPT_IN`; ``--model local-completions-prefix`` sends it).
vLLM's completions request has no field of its own for this: ``SamplingParams.skip_reading_prefix_cache`` defaults to
true for every request that asks for prompt log-probabilities.

For such a request, in the API server process:

- :func:`sampling_params_wrapper`: its sampling parameters read the cache (``skip_reading_prefix_cache=False``);
- :func:`update_wrapper`: the prompt positions vLLM read from the cache were not computed, and their rows of the
  prompt log-probabilities hold the output buffer's leftovers (ids that crash the detokenizer, numbers from another
  request: vLLM's open PR #42245). Before they are detokenized, those rows are given the prompt's own tokens (so that
  the detokenizer's context is the prompt's, as in an uncached request), and afterwards their log-probabilities are
  None: the response's ``token_logprobs`` is null up to the last cached token. The client reads
  ``usage.prompt_tokens_details.cached_tokens`` (``vllm serve --enable-prompt-tokens-details``) to know which of its
  positions it may use (:func:`lm_eval_stereo.core.prefix_cache.reaches_continuation`).
"""

from __future__ import annotations

import functools
import sys
from typing import Any

#: the ``vllm_xargs`` key a completions request opts in with
OPT_IN = "lm_eval_stereo_read_prefix_cache"
#: the module of vLLM's completions request, imported by its API server before the plugins are loaded
COMPLETIONS_PROTOCOL = "vllm.entrypoints.openai.completion.protocol"
#: where an opted-in request's log-probability processor keeps the prompt's token ids
PROMPT_ATTRIBUTE = "_lm_eval_stereo_prompt"


def opted_in(extra_args: Any) -> bool:
    """Whether a request's ``extra_args`` (its ``vllm_xargs``) ask to read the prefix cache."""
    return isinstance(extra_args, dict) and bool(extra_args.get(OPT_IN))


def sampling_params_wrapper(original: Any) -> Any:
    """``CompletionRequest.to_sampling_params`` whose result reads the prefix cache for an opted-in request."""

    @functools.wraps(original)
    def to_sampling_params(self: Any, *args: Any, **kwargs: Any) -> Any:
        params = original(self, *args, **kwargs)
        if opted_in(params.extra_args):
            params.skip_reading_prefix_cache = False
        return params

    return to_sampling_params


def new_request_wrapper(original: Any) -> Any:
    """``LogprobsProcessor.from_new_request`` that keeps an opted-in request's prompt, in a plain list of positions."""

    @functools.wraps(original)
    def from_new_request(cls: Any, tokenizer: Any, request: Any) -> Any:
        processor = original.__func__(cls, tokenizer, request)
        params = request.sampling_params
        if params is not None and opted_in(params.extra_args) and processor.prompt_logprobs is not None:
            processor.prompt_logprobs = [None]  # not FlatLogprobs: positions can then be set to None
            setattr(processor, PROMPT_ATTRIBUTE, list(request.prompt_token_ids or []))
        return processor

    return classmethod(from_new_request)


def _cached_tokens(output: Any) -> int:
    stats = getattr(output, "prefill_stats", None)
    return int(getattr(stats, "num_cached_tokens", 0) or 0)


def update_wrapper(original: Any) -> Any:
    """``LogprobsProcessor.update_from_output`` that gives the rows an opted-in request read from the cache the
    prompt's own tokens before they are detokenized, and None afterwards."""

    @functools.wraps(original)
    def update_from_output(self: Any, output: Any) -> None:
        prompt = getattr(self, PROMPT_ATTRIBUTE, None)
        tensors = output.new_prompt_logprobs_tensors
        cached = _cached_tokens(output)
        if prompt is None or tensors is None or cached == 0:
            return original(self, output)
        rows = min(cached, len(prompt) - 1)
        token_ids = tensors.logprob_token_ids.clone()
        logprobs = tensors.logprobs.clone()
        ranks = tensors.selected_token_ranks.clone()
        import torch

        token_ids[:rows] = torch.tensor(prompt[1 : rows + 1], dtype=token_ids.dtype).unsqueeze(1)
        logprobs[:rows] = 0.0
        ranks[:rows] = 1
        output.new_prompt_logprobs_tensors = tensors._replace(
            logprob_token_ids=token_ids, logprobs=logprobs, selected_token_ranks=ranks
        )
        done = len(self.prompt_logprobs)
        original(self, output)
        for position in range(done, min(done + rows, len(self.prompt_logprobs))):
            self.prompt_logprobs[position] = None

    return update_from_output


def register() -> None:
    """vLLM's general-plugin entry point (every vLLM process calls it, maybe more than once): installs the wrappers
    above, once, in an API server process (one that has imported vLLM's completions protocol before it loads its
    plugins, as ``vllm serve`` does); the engine core and worker processes are left as they are (importing the
    protocol there would only cost start-up time)."""
    if COMPLETIONS_PROTOCOL not in sys.modules:
        return  # not an API server: the engine core and the workers need nothing
    try:
        from vllm.entrypoints.openai.completion.protocol import CompletionRequest
        from vllm.v1.engine.logprobs import LogprobsProcessor

        from lm_eval_stereo.hooks import wrap  # the one wrapper the plugin's hooks of lm_eval use too

        wrap(CompletionRequest, "to_sampling_params", sampling_params_wrapper)
        wrap(LogprobsProcessor, "from_new_request", new_request_wrapper)
        wrap(LogprobsProcessor, "update_from_output", update_wrapper)
    except (ImportError, AttributeError, KeyError) as exc:  # another vLLM: the server runs on, its cache unread
        import logging

        logging.getLogger(__name__).warning(
            "lm-eval-stereo: the vLLM plugin found no place to hook into this vLLM (%s: %s); opted-in requests do not "
            "read the prefix cache (the client then scores them uncached)",
            type(exc).__name__,
            exc,
        )
