"""``models/router.py``: in a run that holds the plugin's tasks, each request goes to the backend lm_eval's task made
it for, as given and first, or to the plugin's view where a plugin task made it; the answers come back in the
requests' order; ``--use_cache`` keeps the two apart in one database; data-parallel ranks make the same calls.

The backend here is a recorder (an lm_eval ``LM`` whose view is a test mixin registered for it), so that each call is
seen; the routing through ``lm_eval`` on real backends is tests/hooks/test_stock_tasks.py."""

from __future__ import annotations

from typing import ClassVar

import pytest
import torch
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM, CachingLM

from lm_eval_stereo.core.answer_record import PLUGIN_KEYS
from lm_eval_stereo.models import view
from lm_eval_stereo.models.router import PluginRouter, ViewCache


class Recorder(LM):
    """An lm_eval backend that records each call it answers, and answers ``stock:<prompt>``."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str, list[str]]] = []

    def _answer(self, who: str, request_type: str, requests: list) -> list:
        self.calls.append((who, request_type, [request.args[0] for request in requests]))
        self.cache_hook.add_partial(request_type, requests[0].args, f"{who}:{requests[0].args[0]}")
        return [f"{who}:{request.args[0]}" for request in requests]

    def loglikelihood(self, requests, disable_tqdm=False):
        return self._answer("stock", "loglikelihood", requests)

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        return self._answer("stock", "loglikelihood_rolling", requests)

    def generate_until(self, requests, disable_tqdm=False):
        return self._answer("stock", "generate_until", requests)


class RecorderMixin(view.PluginMixin):
    """The plugin's view of a :class:`Recorder`: answers ``view:<prompt>``."""

    OVERRIDES: ClassVar[dict[str, str]] = {"generate_until": "requests, disable_tqdm"}
    LOSES: ClassVar[str] = "the test's answers"

    def generate_until(self, requests, disable_tqdm=False):
        return self._answer("view", "generate_until", requests)


@pytest.fixture(autouse=True)
def recorder_view(monkeypatch):
    monkeypatch.setattr(view, "MIXINS", ((f"{__name__}:Recorder", f"{__name__}:RecorderMixin"), *view.MIXINS))
    monkeypatch.setattr(view, "_VIEW_CLASSES", {})


def request(task: str, prompt: str) -> Instance:
    return Instance("generate_until", {}, (prompt, {"until": ["\n"]}), 0, metadata=(task, 0, 1))


REQUESTS = [request("ours", "a"), request("local", "b"), request("ours", "c"), request("local", "d")]


def test_lm_eval_s_requests_go_first_to_the_backend_as_given_the_plugin_s_to_the_view_answers_in_order():
    backend = Recorder()
    router = PluginRouter(backend, frozenset({"ours"}))
    assert router.generate_until(REQUESTS) == ["view:a", "stock:b", "view:c", "stock:d"]
    assert backend.calls == [("stock", "generate_until", ["b", "d"]), ("view", "generate_until", ["a", "c"])]
    assert router.rank == 0 and router.world_size == 1  # everything else is the backend's


def test_a_call_of_one_kind_of_requests_is_one_call():
    backend = Recorder()
    router = PluginRouter(backend, frozenset({"ours"}))
    local = [r for r in REQUESTS if r.task_name == "local"]
    assert router.generate_until(local) == ["stock:b", "stock:d"]
    assert router.generate_until(REQUESTS[::2]) == ["view:a", "view:c"]
    assert backend.calls == [("stock", "generate_until", ["b", "d"]), ("view", "generate_until", ["a", "c"])]


def test_a_backend_that_is_its_own_view_answers_every_request_in_one_call(monkeypatch):
    monkeypatch.setattr(view, "MIXINS", view.MIXINS[1:])  # the recorder's mixin no longer registered
    backend = Recorder()
    router = PluginRouter(backend, frozenset({"ours"}))
    assert router.plugin_lm is backend
    assert router.generate_until(REQUESTS) == ["stock:a", "stock:b", "stock:c", "stock:d"]
    assert backend.calls == [("stock", "generate_until", ["a", "b", "c", "d"])]


def test_a_masked_lm_request_the_backend_cannot_serve_stops_in_one_line(capsys):
    router = PluginRouter(Recorder(), frozenset({"gest_en_mlm"}))
    masked = Instance("masked_span", {}, ("left", "span", "right", "all"), 0, metadata=("gest_en_mlm", 0, 1))
    with pytest.raises(SystemExit):
        router.masked_span([masked])
    assert capsys.readouterr().err == (
        "lm-eval-stereo: task(s) gest_en_mlm make 'masked_span' requests (masked-LM scoring), which Recorder cannot "
        "serve: run them with --model hf-mlm --model_args pretrained=<masked LM>\n"
    )
    assert not hasattr(router, "MULTIMODAL")  # what neither has stays missing (lm_eval reads it with a default)


def test_use_cache_keeps_the_view_s_answers_and_lm_eval_s_apart_in_one_database(tmp_path):
    """One prompt asked by a task of each kind: the view's answer and the backend's are stored under keys of their
    own (the view's answers as they are scored, through the backend's cache hook, too), and a resumed run reads each
    for its own kind, asking the backend nothing."""
    same = [request("ours", "x"), request("local", "x"), request("ours", "y")]
    path = str(tmp_path / "cache")
    backend = Recorder()
    first = PluginRouter(CachingLM(backend, path), frozenset({"ours"}))
    assert isinstance(first.plugin_lm, ViewCache) and first.plugin_lm.cache_db == path
    assert first.generate_until(same) == ["view:x", "stock:x", "view:y"]
    store = first.lm.dbdict.store
    assert sum(key.startswith(PLUGIN_KEYS) for key in store) == 2 and len(store) == 3
    again = Recorder()
    resumed = PluginRouter(CachingLM(again, path), frozenset({"ours"}))
    assert resumed.generate_until(same) == ["view:x", "stock:x", "view:y"] and again.calls == []


class Rank(Recorder):
    """One rank of two in a data-parallel run; the other rank's halves have :attr:`other` requests."""

    def __init__(self, other: tuple[int, int]) -> None:
        super().__init__()
        self.other = other

    @property
    def world_size(self) -> int:
        return 2

    @property
    def device(self) -> str:
        return "cpu"

    def all_gather(self, tensor: torch.Tensor) -> torch.Tensor:
        return torch.cat([tensor, torch.tensor(self.other)])


@pytest.mark.parametrize(
    ("mine", "other", "calls"),
    [
        # both ranks hold both kinds: no padding
        (REQUESTS, (1, 1), [("stock", ["b", "d"]), ("view", ["a", "c"])]),
        # this rank holds none of the plugin's requests, the other does: one of lm_eval's through the view, dropped
        (REQUESTS[1::2], (0, 3), [("stock", ["b", "d"]), ("view", ["b"])]),
        # this rank holds only the plugin's, the other lm_eval's too: one of the plugin's through the backend
        (REQUESTS[::2], (2, 0), [("stock", ["a"]), ("view", ["a", "c"])]),
        # neither rank holds the plugin's requests: one call, as lm_eval makes it
        (REQUESTS[1::2], (2, 0), [("stock", ["b", "d"])]),
    ],
)
def test_data_parallel_ranks_make_the_same_calls(mine, other, calls):
    backend = Rank(other)
    answers = PluginRouter(backend, frozenset({"ours"})).generate_until(mine)
    assert answers == [f"{'view' if r.task_name == 'ours' else 'stock'}:{r.args[0]}" for r in mine]
    assert [(who, prompts) for who, _, prompts in backend.calls] == calls
