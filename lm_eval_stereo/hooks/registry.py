"""``lm_eval.models``: lm_eval 0.4.13 registers its built-in backends when ``lm_eval.models`` is imported and has no
entry point for a plugin's. The plugin's backends (``--model hf-mlm``, ``hf-prefix``, ``replay``) are registered in
lm_eval's ``model_registry`` right after, by name and a lazy ``module:Class`` target, so that ``lm_eval run --model
hf-mlm`` finds them without importing them (nor torch) until a run asks for one. This adds names; it changes none of
lm_eval's.
"""

from __future__ import annotations

from types import ModuleType

#: plugin model names and their lazy ``module:Class`` targets
PLUGIN_MODELS: dict[str, str] = {
    "hf-mlm": "lm_eval_stereo.models.masked_lm:HFMaskedLM",
    "hf-prefix": "lm_eval_stereo.models.hf_prefix:HFPrefixLM",
    "replay": "lm_eval_stereo.models.replay:ReplayLM",
    "vllm-prefix": "lm_eval_stereo.models.vllm_prefix:VLLMPrefix",
    "local-completions-prefix": "lm_eval_stereo.models.served_prefix:LocalCompletionsPrefix",
}


def install(module: ModuleType | None = None) -> None:
    """Register the plugin models lazily next to lm_eval's built-in ones."""
    from lm_eval.api.registry import model_registry

    for name, target in PLUGIN_MODELS.items():
        if name not in model_registry:
            model_registry.register(name, target=target)
