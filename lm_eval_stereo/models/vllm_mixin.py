"""The plugin's view of lm_eval's in-process ``vllm`` backend (``VLLM``): what the plugin's tasks need of it that
lm_eval 0.4.13's ``vllm`` does not do (:mod:`lm_eval_stereo.models.view` says how a view is made; lm_eval's own tasks
never reach it).

- Sampling: lm_eval gives every repeat of a sampled request the same seed, so a task's ``repeats`` get k identical
  samples. Here the k-th identical sampled request of a run (a task's ``repeats``: one prompt sent k times) carries
  ``seed + k`` (``seed``: the backend's ``--model_args seed=``, lm_eval's default 1234;
  :class:`lm_eval_stereo.core.seeds.RepeatSeeds`), as the served models' views seed them: the samples do not depend
  on how vLLM schedules the batch, and a repeated run gives the same texts.
- Requests longer than the window: a log-likelihood request longer than ``max_model_len - 1`` tokens (vLLM generates
  one) is scored on its context cut from the left and marked, one whose continuation alone is that long is not scored
  (lm_eval: a raw ``AttributeError`` from ``_parse_logprobs``), both counted per task as ``truncated``
  (:func:`lm_eval_stereo.core.window.score_within_window`) and shown as the report's caveat.

``vllm-prefix`` (:class:`lm_eval_stereo.models.vllm_prefix.VLLMPrefix`) includes this mixin in its class.
"""

from __future__ import annotations

import copy
import functools
from typing import ClassVar

from lm_eval_stereo.core import window
from lm_eval_stereo.core.seeds import RepeatSeeds
from lm_eval_stereo.models.view import PluginMixin

#: lm_eval's default ``seed`` of the vllm backend (``VLLM.__init__``)
DEFAULT_SEED = 1234
#: vLLM reads at most ``max_model_len - 1`` tokens of a log-likelihood request (it generates one)
EXTRA_TOKENS = -1


def seeded_requests(requests: list, base_seed: int) -> list:
    """``requests`` with the k-th identical sampled request (same context, same ``gen_kwargs``) carrying
    ``seed = base_seed + k`` (:class:`lm_eval_stereo.core.seeds.RepeatSeeds`); greedy requests and those that name a
    ``seed`` themselves are left as they are. lm_eval sends a request with ``repeats: n`` as the same ``Instance`` n
    times, so each sampled one is copied."""
    seeds = RepeatSeeds()
    seeded = []
    for request in requests:
        context, gen_kwargs = request.args[0], request.args[1]
        if not isinstance(gen_kwargs, dict) or not gen_kwargs.get("do_sample") or "seed" in gen_kwargs:
            seeded.append(request)
            continue
        request = copy.copy(request)
        seed = seeds.next_seed(base_seed, context, gen_kwargs)
        request.arguments = (context, {**gen_kwargs, "seed": seed}, *request.args[2:])
        seeded.append(request)
    return seeded


class VLLMMixin(PluginMixin):
    """``VLLM`` for the plugin's tasks: a seed per sampled repeat; requests within the window, marked and counted."""

    OVERRIDES: ClassVar[dict[str, str]] = {
        "generate_until": "requests, disable_tqdm",
        "_loglikelihood_tokens": "requests, disable_tqdm",
    }
    LOSES: ClassVar[str] = (
        "a seed per sampled repeat (identical samples instead) and the count of requests longer than max_model_len "
        "(lm_eval: AttributeError for a continuation longer than it)"
    )

    def generate_until(self, requests: list, disable_tqdm: bool = False) -> list[str]:
        """lm_eval's generation with a seed per sampled repeat (:func:`seeded_requests`)."""
        base = int((getattr(self, "model_args", None) or {}).get("seed", DEFAULT_SEED))
        return super().generate_until(seeded_requests(requests, base), disable_tqdm=disable_tqdm)  # type: ignore[misc]

    def _loglikelihood_tokens(self, requests: list, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """lm_eval's scoring of the requests within the window; a call from inside one (``vllm-prefix``'s) passes
        through."""
        score = functools.partial(super()._loglikelihood_tokens, disable_tqdm=disable_tqdm)  # type: ignore[misc]
        if self.__dict__.get(window.WITHIN_WINDOW):
            return score(requests)
        return window.score_within_window(self, requests, self.max_length + EXTRA_TOKENS, score, "vllm")
