"""``models/view.py`` and its mixins: the plugin's view of one of lm_eval's backends is that backend (its state shared,
nothing loaded twice) with the plugin's behaviour for its own tasks; lm_eval's class is left as it is; a backend
whose methods differ from those a mixin was written for is its own view, said in one line.

What the views do for the plugin's tasks through ``lm_eval`` is tested where users meet it: served answers
(tests/backends/test_served.py), truncation (tests/reliability/test_run_arguments_and_cache_files.py), vLLM
(tests/backends/test_vllm.py)."""

from __future__ import annotations

import importlib

import pytest
from lm_eval.models.huggingface import HFLM
from lm_eval.models.openai_completions import LocalChatCompletion, LocalCompletionsAPI, OpenAIChatCompletion

from lm_eval_stereo.core.signatures import PluginHookWarning
from lm_eval_stereo.hooks import is_wrapped
from lm_eval_stereo.models import view
from lm_eval_stereo.models.hf_mixin import HFMixin
from lm_eval_stereo.models.hf_prefix import HFPrefixLM
from lm_eval_stereo.models.served_mixin import ChatMixin, CompletionsMixin


def test_every_mixin_overrides_methods_lm_eval_has_with_the_parameters_it_has():
    """Each mixin of :data:`view.MIXINS` whose lm_eval class this environment imports (the ``vllm`` one where vLLM is
    installed: tests/backends/test_vllm.py) matches it, and its subclasses the plugin's views reach."""
    checked = []
    for backend, mixin in view.MIXINS:
        module, _, name = backend.partition(":")
        try:
            cls = getattr(importlib.import_module(module), name)
        except ImportError:
            continue
        made = view.mixin_for(cls)
        assert made.__name__ == mixin.rsplit(":", 1)[1] and view.mismatches(made, cls) == [], backend
        checked.append(name)
    assert {"HFLM", "TemplateAPI", "LocalCompletionsAPI", "LocalChatCompletion"} <= set(checked)
    assert view.mismatches(ChatMixin, OpenAIChatCompletion) == []
    assert view.view_class(OpenAIChatCompletion).__mro__[1] is ChatMixin


def test_a_view_shares_its_backend_s_state_and_lm_eval_s_class_is_left_as_it_is():
    backend = object.__new__(HFLM)
    backend.__dict__["_max_length"] = 24
    seen = view.view_of(backend)
    assert isinstance(seen, HFLM) and isinstance(seen, HFMixin) and type(seen).__name__ == "HFLM"
    assert type(backend) is HFLM and vars(HFLM)["_loglikelihood_tokens"].__module__ == "lm_eval.models.huggingface"
    assert not is_wrapped(vars(HFLM)["_loglikelihood_tokens"]) and not is_wrapped(vars(HFLM)["prefix_token_id"])
    seen.__dict__["counted"] = 3
    assert backend.__dict__["counted"] == 3 and seen.max_length == 24
    assert view.view_of(backend).__class__ is type(seen)  # one view class per backend class


def test_the_plugin_s_own_backend_is_its_own_view():
    backend = object.__new__(HFPrefixLM)
    assert view.view_of(backend) is backend and view.view_class(HFPrefixLM) is None


class Changed(HFLM):
    """``HFLM`` as a later lm_eval might have it: ``_loglikelihood_tokens`` with another parameter."""

    def _loglikelihood_tokens(self, requests, disable_tqdm=False, override_bs=None, batch_size=None):
        return []


def test_a_backend_whose_methods_changed_is_its_own_view_with_one_line(monkeypatch):
    monkeypatch.setattr(view, "_VIEW_CLASSES", {})
    backend = object.__new__(Changed)
    with pytest.warns(PluginHookWarning) as caught:
        assert view.view_of(backend) is backend
        assert view.view_of(object.__new__(Changed)) is not None
    assert len(caught) == 1
    assert str(caught[0].message) == (
        "the plugin's tasks run on lm_eval's Changed as it is, without the plugin's changes for them "
        "(Changed._loglikelihood_tokens: lm_eval has (requests, disable_tqdm, override_bs, batch_size), the plugin was "
        f"written for (requests, disable_tqdm, override_bs)): they lose {HFMixin.LOSES}"
    )


def served(cls: type) -> object:
    """A served backend of ``cls`` that was never started (the attributes its payload reads)."""
    backend = object.__new__(cls)
    backend.__dict__.update(model="m", _max_gen_toks=16, _seed=1234, base_url="http://127.0.0.1:9/v1")
    return backend


def test_the_view_s_payload_has_no_empty_stop_and_a_seed_per_repeat_lm_eval_s_is_lm_eval_s():
    backend = served(LocalCompletionsAPI)
    seen = view.view_of(backend)

    def payload(model, prompt: str) -> dict:
        return model._create_payload(prompt, generate=True, gen_kwargs={"until": [], "do_sample": True}, seed=1234)

    assert [payload(seen, prompt).get("seed") for prompt in ("a", "a", "b", "a")] == [1234, 1235, 1234, 1236]
    assert "stop" not in payload(seen, "a")
    assert [payload(backend, "a")["seed"] for _ in range(2)] == [1234, 1234] and payload(backend, "a")["stop"] == []


def test_the_view_reads_answers_for_the_plugin_s_tasks_and_lm_eval_reads_them_for_its_own():
    backend = served(LocalCompletionsAPI)
    seen = view.view_of(backend)
    seen._create_payload("p", generate=True, gen_kwargs={"until": ["\n"]}, seed=1)
    answer = {"model": "m", "choices": [{"index": 0, "text": "Ja.\nmehr", "finish_reason": "length"}]}
    (text,) = seen.parse_generations(outputs=answer)
    assert text == "Ja." and type(text) is str  # cut at the stop string: complete, not marked as cut
    assert backend.parse_generations(outputs=answer) == ["Ja.\nmehr"]
    assert isinstance(view.view_of(served(LocalChatCompletion)), ChatMixin)
    assert isinstance(seen, CompletionsMixin)
