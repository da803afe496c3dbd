"""``lm_eval.models.huggingface``: lm_eval 0.4.13's ``hf`` backend loads any model transformers can load as a causal
LM. An encoder-only model (BERT, XLM-R) then loads without ``is_decoder=True`` and is scored with its bidirectional
attention (a transformers log warning the only sign), a model type transformers cannot load as one stops with
transformers' "Unrecognized configuration class" and no word of what to do, and an empty-context request on a
tokenizer with neither a BOS nor an EOS token fails far from its cause. The plugin's log-likelihood tasks meet all three
(users try masked LMs on them; StereoSet intrasentence has empty contexts), so ``HFLM.__init__`` and
``HFLM.prefix_token_id`` stop with one clear line naming what to do (``--model hf-mlm``, ``prefix_token_id=``).

``HFLM._loglikelihood_tokens`` cuts a request longer than ``max_length`` from the left with a log line and no count,
and ends the run in a bare ``AssertionError`` where the continuation alone is longer: through
:func:`lm_eval_stereo.core.window.window_wrapper`, the first are marked and the second not scored, both counted
per task as ``truncated`` and shown as the report's caveat.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

from lm_eval_stereo.core import window
from lm_eval_stereo.core.model_types import ENCODER_MODEL_TYPES, MASKED_LM_HINT
from lm_eval_stereo.hooks import wrap


def install(module: ModuleType) -> None:
    """Clear errors where lm_eval's ``hf`` model would fail deep inside transformers: an encoder-only model loaded as
    a causal LM, and an empty-context request on a tokenizer with neither a BOS nor an EOS token; requests longer than
    ``max_length`` counted (:func:`lm_eval_stereo.core.window.window_wrapper`)."""
    cls = module.HFLM
    wrap(cls, "_loglikelihood_tokens", lambda original: window.window_wrapper(original, 1, "hf"))
    original_init, original_prefix = cls.__init__, cls.prefix_token_id
    if getattr(original_init, "_lm_eval_stereo", False):
        return

    @functools.wraps(original_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            original_init(self, *args, **kwargs)
        except ValueError as exc:
            if "Unrecognized configuration class" in str(exc):
                raise ValueError(f"{exc}\n--model {type(self).__name__}: {MASKED_LM_HINT}") from exc
            raise
        model = getattr(self, "_model", None)
        config = getattr(model, "config", None)
        causal = getattr(getattr(self, "AUTO_MODEL_CLASS", None), "__name__", "") == "AutoModelForCausalLM"
        if causal and getattr(config, "model_type", None) in ENCODER_MODEL_TYPES and not config.is_decoder:
            raise ValueError(
                f"{config.name_or_path or 'the model'} is an encoder-only {config.model_type} model: {MASKED_LM_HINT}"
            )

    def prefix_token_id(self: Any) -> int:
        token = original_prefix.fget(self)
        if token is None:
            raise ValueError(
                "the tokenizer has neither a BOS nor an EOS token, which lm_eval uses as the context of empty-context "
                "log-likelihood requests (e.g. StereoSet intrasentence): pass --model_args prefix_token_id=<id>, or "
                f"use a causal LM whose tokenizer defines one ({MASKED_LM_HINT})"
            )
        return token

    __init__._lm_eval_stereo = True  # type: ignore[attr-defined]
    cls.__init__ = __init__
    cls.prefix_token_id = property(prefix_token_id)
