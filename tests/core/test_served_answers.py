"""``core/served_answers.py`` on its own: what an OpenAI-compatible server's answer must be before lm_eval reads it.
Each malformed answer is one that lm_eval 0.4.13 would read silently; the checks through ``lm_eval`` against a real
server and the fault-injecting stand-in are in ``tests/backends/test_served.py``."""

from __future__ import annotations

import math

import pytest

from lm_eval_stereo.core.served_answers import (
    ServedAnswerError,
    check_logprobs,
    choices_of,
    is_asked_model,
    mark_cut,
)
from lm_eval_stereo.core.unanswered import CutText, Unanswered

#: two prompts of 4 and 3 tokens, scored from token 2 and token 1
TOKENS = [[11, 12, 13, 14], [21, 22, 23]]
CTXLENS = [2, 1]


def choice(index: int, values: list, tops: list | None = None, **more) -> dict:
    tops = tops if tops is not None else [None] + [{"x": value} for value in values[1:]]
    return {"index": index, "logprobs": {"token_logprobs": values, "top_logprobs": tops}, **more}


def good() -> dict:
    """A well-formed answer: per prompt the tokens sent and the generated one, the first prompt token without one."""
    return {"choices": [choice(0, [None, -1.0, -0.5, -2.0, -0.1]), choice(1, [None, -0.3, -0.2, -1.5])]}


def test_a_well_formed_answer_passes_in_any_choice_order_and_as_one_of_several():
    check_logprobs(good(), TOKENS, CTXLENS)
    answer = good()
    answer["choices"].reverse()  # numbered by index, not by position
    check_logprobs(answer, TOKENS, CTXLENS)
    first, second = good(), good()
    first["choices"], second["choices"] = first["choices"][:1], [dict(second["choices"][1], index=0)]
    check_logprobs([first, second], TOKENS, CTXLENS)


def broken(change) -> dict:
    answer = good()
    change(answer)
    return answer


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"error": "overloaded"}, "an answer without a list of choices (keys error)"),
        ("not json", "an answer without a list of choices (str)"),
        (broken(lambda a: a["choices"].pop()), "1 choices for the 2 prompts sent"),
        (broken(lambda a: a["choices"][1].update(index=5)), "choices numbered [0, 5], not 0 to 1"),
        (
            broken(lambda a: a["choices"][0]["logprobs"]["token_logprobs"].pop()),
            "prompt 1 of 2: 4 log-probabilities for the 4 tokens sent, without the generated token's entry",
        ),
        (
            broken(lambda a: a["choices"][1]["logprobs"]["token_logprobs"].extend([-1.0, -1.0])),
            "prompt 2 of 2: 6 log-probabilities for the 3 tokens sent and the one generated (4 expected)",
        ),
        (
            broken(lambda a: a["choices"][0]["logprobs"]["token_logprobs"].__setitem__(3, 0.5)),
            "prompt 1 of 2: token 4 of 5 has the log-probability 0.5, not a finite number <= 0",
        ),
        (
            broken(lambda a: a["choices"][1]["logprobs"]["token_logprobs"].__setitem__(3, math.nan)),
            "prompt 2 of 2: token 4 of 4 has the log-probability nan",
        ),
        (
            broken(lambda a: a["choices"][0]["logprobs"]["token_logprobs"].__setitem__(2, -math.inf)),
            "prompt 1 of 2: token 3 of 5 has the log-probability -inf",
        ),
        (
            broken(lambda a: a["choices"][0]["logprobs"].pop("top_logprobs")),
            "prompt 1 of 2: no logprobs.token_logprobs and top_logprobs lists",
        ),
        (
            broken(lambda a: a["choices"][1]["logprobs"]["top_logprobs"].__setitem__(2, {})),
            "prompt 2 of 2: top_logprobs missing or malformed for the tokens scored",
        ),
    ],
)
def test_a_malformed_answer_is_named(answer, message):
    with pytest.raises(ServedAnswerError) as raised:
        check_logprobs(answer, TOKENS, CTXLENS)
    assert str(raised.value).startswith(message), str(raised.value)


def test_a_context_position_may_hold_anything_a_scored_one_may_not():
    """Positions before ``ctxlen`` are not scored: a server's None (or anything) there is no error."""
    answer = good()
    answer["choices"][0]["logprobs"]["token_logprobs"][1] = None
    check_logprobs(answer, TOKENS, CTXLENS)
    answer["choices"][0]["logprobs"]["token_logprobs"][2] = None
    with pytest.raises(ServedAnswerError, match="token 3 of 5 has the log-probability None"):
        check_logprobs(answer, TOKENS, CTXLENS)


@pytest.mark.parametrize(
    ("asked", "named", "same"),
    [
        ("gpt-4o", "gpt-4o", True),
        ("gpt-4o", "gpt-4o-2024-08-06", True),  # a version the server appends
        ("org/model", "org/model@main", True),
        ("/models/smollm2", "/models/smollm2", True),
        ("smollm2", "smollm2-other", True),  # a suffix it cannot tell from a version: accepted
        ("smollm2", "other-smollm2", False),
        ("gpt-4o", "gpt-4", False),
        ("gpt-4o", "gpt-4o mini", False),
        (None, "anything", True),  # no model asked
        ("", "anything", True),
    ],
)
def test_the_answering_model_is_the_one_asked_or_it_with_a_version(asked, named, same):
    assert is_asked_model(asked, named) is same


def test_choices_of_an_answer_and_the_texts_cut_at_the_token_limit():
    assert choices_of({"choices": []}) is None and choices_of({}) is None and choices_of("text") is None
    choices = [{"index": 1, "finish_reason": "stop"}, {"index": 0, "finish_reason": "length"}]
    assert choices_of({"choices": choices}) == choices
    texts = mark_cut(["cut here", "whole"], choices)
    assert texts == ["cut here", "whole"] and isinstance(texts[0], CutText) and not isinstance(texts[1], CutText)
    unanswered = Unanswered()
    assert mark_cut([unanswered], [{"index": 0, "finish_reason": "length"}])[0] is unanswered
    assert mark_cut(["a", "b"], choices[:1]) == ["a", "b"]  # not one reason per text: left as they are
