"""The plugin's view of lm_eval's ``hf`` backend (``HFLM`` and its subclasses): what the plugin's log-likelihood tasks
need of it that lm_eval 0.4.13's ``hf`` does not do (:mod:`lm_eval_stereo.models.view` says how a view is made; lm_eval's
own tasks never reach it).

- Requests longer than the window: lm_eval's ``HFLM._loglikelihood_tokens`` cuts a request longer than ``max_length``
  from the left with a log line and no count, and ends the run in a bare ``AssertionError`` where the continuation
  alone is longer. Through :func:`lm_eval_stereo.core.window.score_within_window`, the first are scored cut and marked,
  the second not scored, both counted per task as ``truncated`` and shown as the report's caveat.
- An empty-context request on a tokenizer with neither a BOS nor an EOS token (StereoSet intrasentence has empty
  contexts) fails far from its cause in lm_eval: ``prefix_token_id`` stops with one clear line naming
  ``prefix_token_id=`` and ``--model hf-mlm``.

``hf-prefix`` (:class:`lm_eval_stereo.models.hf_prefix.HFPrefixLM`) includes this mixin in its class.
"""

from __future__ import annotations

import functools
from typing import ClassVar

from lm_eval_stereo.core import window
from lm_eval_stereo.core.model_types import MASKED_LM_HINT
from lm_eval_stereo.models.view import PluginMixin

#: lm_eval's ``hf`` reads at most ``max_length + 1`` tokens of a log-likelihood request (its last token only predicted)
EXTRA_TOKENS = 1


class HFMixin(PluginMixin):
    """``HFLM`` for the plugin's tasks: requests within the window, marked and counted; a clear error for a tokenizer
    with no prefix token."""

    OVERRIDES: ClassVar[dict[str, str]] = {
        "_loglikelihood_tokens": "requests, disable_tqdm, override_bs",
        "prefix_token_id": "",
    }
    LOSES: ClassVar[str] = (
        "the count of requests longer than max_length (truncated), a continuation longer than it scored as unscored "
        "(lm_eval: AssertionError), and the clear line for a tokenizer without BOS and EOS tokens"
    )

    def _loglikelihood_tokens(
        self, requests: list, disable_tqdm: bool = False, override_bs: int | None = None
    ) -> list[tuple[float, bool]]:
        """lm_eval's scoring of the requests within the window (:func:`lm_eval_stereo.core.window.score_within_window`);
        a call from inside one (``hf-prefix``'s fallback to HFLM's) and a rolling call (``override_bs``: windows lm_eval
        builds to fit) pass through."""
        score = super()._loglikelihood_tokens  # type: ignore[misc]
        if override_bs is not None or self.__dict__.get(window.WITHIN_WINDOW):
            return score(requests, disable_tqdm=disable_tqdm, override_bs=override_bs)
        scored = functools.partial(score, disable_tqdm=disable_tqdm)
        return window.score_within_window(self, requests, self.max_length + EXTRA_TOKENS, scored, "hf")

    @property
    def prefix_token_id(self) -> int:
        """lm_eval's prefix token (the context of an empty-context request), or one line saying what to pass."""
        token = super().prefix_token_id  # type: ignore[misc]
        if token is None:
            raise ValueError(
                "the tokenizer has neither a BOS nor an EOS token, which lm_eval uses as the context of empty-context "
                "log-likelihood requests (e.g. StereoSet intrasentence): pass --model_args prefix_token_id=<id>, or "
                f"use a causal LM whose tokenizer defines one ({MASKED_LM_HINT})"
            )
        return token
