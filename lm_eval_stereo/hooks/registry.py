"""``lm_eval.models``: lm_eval 0.4.13 registers its built-in backends when ``lm_eval.models`` is imported and has no
entry point for a plugin's. The plugin's backends (``--model hf-mlm``, ``hf-prefix``, ``replay``, ``vllm-prefix``,
``local-completions-prefix``) are registered in lm_eval's ``model_registry`` right after, by name and a lazy
``module:Class`` target, so that ``lm_eval run --model hf-mlm`` finds them without importing them (nor torch) until a
run asks for one. Registration is lm_eval's extension point: this adds names and changes none of lm_eval's.
"""

from __future__ import annotations

from typing import Any

#: plugin model names and their lazy ``module:Class`` targets
PLUGIN_MODELS: dict[str, str] = {
    "hf-mlm": "lm_eval_stereo.models.masked_lm:HFMaskedLM",
    "hf-prefix": "lm_eval_stereo.models.hf_prefix:HFPrefixLM",
    "replay": "lm_eval_stereo.models.replay:ReplayLM",
    "vllm-prefix": "lm_eval_stereo.models.vllm_prefix:VLLMPrefix",
    "local-completions-prefix": "lm_eval_stereo.models.served_prefix:LocalCompletionsPrefix",
}


def register(registry: Any, name: str) -> None:
    """Register the plugin's model ``name`` lazily in lm_eval's model ``registry`` (once)."""
    if name not in registry:
        registry.register(name, target=PLUGIN_MODELS[name])
