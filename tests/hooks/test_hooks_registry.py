"""``hooks/registry.py``: the plugin's backends are names added to lm_eval's model registry, lazily; lm_eval's names
stay lm_eval's."""

from __future__ import annotations

from lm_eval.api.registry import Registry

from lm_eval_stereo.hooks.registry import PLUGIN_MODELS, register


def test_a_name_is_registered_once_as_a_lazy_target_and_lm_eval_s_names_are_untouched():
    registry = Registry("models")
    registry.register("hf", target="lm_eval.models.huggingface:HFLM")
    for name in PLUGIN_MODELS:
        register(registry, name)
        register(registry, name)  # hooked twice: registered once
    assert {name: registry._objs[name] for name in PLUGIN_MODELS} == PLUGIN_MODELS  # module:Class, nothing imported
    assert registry._objs["hf"] == "lm_eval.models.huggingface:HFLM"
