"""``core/window.py`` on its own: which requests are beyond a window, what is sent, how the answers come back marked
and what the cache hook stores while they are scored. A model here is any object with ``max_length`` and lm_eval's
``cache_hook`` (the backends call it from their own scoring: ``models/hf_mixin.py``, ``vllm_mixin.py``,
``hf_prefix.py``, ``vllm_prefix.py``); the backends' windows are checked through ``lm_eval``:
``tests/reliability/test_run_arguments_and_cache_files.py`` for ``hf``, ``tests/backends/test_vllm.py`` for ``vllm``
and ``vllm-prefix``, ``tests/backends/test_hf_prefix.py``."""

from __future__ import annotations

import logging
import math

import pytest

from lm_eval_stereo.core import window
from lm_eval_stereo.core.token_split import MarkingCacheHook, ReferenceTokensAnswer
from lm_eval_stereo.core.truncation import UNFIT, unscored, was_truncated

#: (cache key, context token ids, continuation token ids), a window of 6 tokens: fits (3 + 2), too long in all
#: (5 + 3: the context is cut), continuation alone too long (1 + 6: not sent), no cache key (4 + 1: fits)
REQUESTS = [
    (("a", " b"), [1, 2, 3], [4, 5]),
    (("c", " d"), [1, 2, 3, 4, 5], [6, 7, 8]),
    (("e", " f"), [1], [2, 3, 4, 5, 6, 7]),
    (None, [1, 2, 3, 4], [5]),
]
WINDOW = 6


class Hook:
    """lm_eval's cache hook as a backend calls it: what was stored."""

    def __init__(self) -> None:
        self.stored: list[tuple[str, object, object]] = []

    def add_partial(self, attr: str, req: object, res: object) -> None:
        self.stored.append((attr, req, res))


class Model:
    """What ``score_within_window`` reads of a backend: its ``max_length`` and ``cache_hook``."""

    def __init__(self, max_length: int) -> None:
        self.max_length, self.cache_hook = max_length, Hook()


def test_beyond_window_names_the_unfit_and_the_shortened_in_one_warning(caplog):
    with caplog.at_level(logging.WARNING, logger=window.__name__):
        unfit, shortened = window.beyond_window(REQUESTS, WINDOW, "vllm", 7)
    assert (unfit, shortened) == ({2}, {1})
    (record,) = caplog.records
    assert record.getMessage().startswith(
        "vllm: 2 request(s) longer than the model's window of 7 tokens: 1 scored on their context cut from the left, "
        "1 not scored (the continuation alone is longer); counted per task as 'truncated': raise max_length"
    )
    caplog.clear()
    assert window.beyond_window(REQUESTS[:1] + REQUESTS[3:], WINDOW, "hf", 7) == (set(), set())
    assert caplog.records == []


def test_only_the_fitting_requests_are_sent_and_their_answers_come_back_marked():
    model, sent = Model(max_length=7), []
    hooks_while_scoring = []

    def score(requests: list) -> list:
        sent.extend(requests)
        hooks_while_scoring.append((model.cache_hook, model.__dict__.get(window.WITHIN_WINDOW)))
        for request in requests:  # as lm_eval's backends store an answer: those with a cache key
            if request[0] is not None:
                model.cache_hook.add_partial("loglikelihood", request[0], (-float(len(request[2])), True))
        return [(-float(len(request[2])), True) for request in requests]

    original_hook = model.cache_hook
    answers = window.score_within_window(model, REQUESTS, WINDOW, score, "hf", exact=frozenset({0}))
    assert sent == [REQUESTS[0], REQUESTS[1], REQUESTS[3]]  # the unfit one is never sent
    assert answers[0] == (-2.0, True) and isinstance(answers[0], ReferenceTokensAnswer)
    assert answers[1] == (-3.0, True) and was_truncated(answers[1]) and not unscored(answers[1])
    assert answers[2] is UNFIT and unscored(answers[2]) and math.isnan(answers[2][0])
    assert answers[3] == (-1.0, True) and not was_truncated(answers[3])
    # while scoring: the marking hook and the flag that lets a backend's own window check pass; both gone after
    ((hook, flag),) = hooks_while_scoring
    assert isinstance(hook, MarkingCacheHook) and flag is True
    assert model.cache_hook is original_hook and window.WITHIN_WINDOW not in model.__dict__
    stored = {req: res for _, req, res in original_hook.stored}
    assert stored.keys() == {("a", " b"), ("c", " d")}
    assert isinstance(stored[("a", " b")], ReferenceTokensAnswer) and not was_truncated(stored[("a", " b")])
    assert was_truncated(stored[("c", " d")])


def test_a_failing_score_leaves_the_model_as_it_was():
    model = Model(max_length=7)
    hook = model.cache_hook

    def score(requests: list) -> list:
        raise RuntimeError("engine gone")

    with pytest.raises(RuntimeError, match="engine gone"):
        window.score_within_window(model, REQUESTS, WINDOW, score, "vllm")
    assert model.cache_hook is hook and window.WITHIN_WINDOW not in model.__dict__


def test_nothing_fits_nothing_is_sent():
    def score(requests: list) -> list:
        raise AssertionError("nothing should be sent")

    assert window.score_within_window(Model(3), REQUESTS[2:3], 2, score, "vllm") == [UNFIT]
