"""``models/served_prefix.py`` without a server: which answers read from a server's prefix cache can be scored, the
opt-in each log-likelihood request carries, the re-sent answers never stored, the probe's verdict on a server, the
batch size it refuses. The backend against a real ``vllm serve`` with the plugin, and a proxy that drops what a
server may drop: ``tests/backends/test_vllm_served.py``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lm_eval_stereo.models.served_prefix import LocalCompletionsPrefix, Resend, _ResendsNotStored, cached_tokens, usable
from lm_eval_stereo.vllm_plugin import OPT_IN

NOWHERE = "http://127.0.0.1:9/v1/completions"


def answer(cached: int | None, values: list, tops: list | None = None, choices: int = 1) -> dict:
    """A one-prompt completions answer with its usage (``cached``: the prompt tokens read from the cache)."""
    tops = tops if tops is not None else [None] + [{"t": v} for v in values[1:]]
    choice = {"index": 0, "logprobs": {"token_logprobs": values, "top_logprobs": tops}}
    usage = {} if cached is None else {"prompt_tokens_details": {"cached_tokens": cached}}
    return {"choices": [dict(choice, index=n) for n in range(choices)], "usage": usage}


#: a prompt of 3 context and 2 continuation tokens, and the generated token's entry
VALUES = [None, -0.1, -0.2, -0.5, -0.25, -9.0]


def test_cached_tokens_are_read_from_the_usage_details():
    assert cached_tokens(answer(32, VALUES)) == 32 and cached_tokens(answer(0, VALUES)) == 0
    assert cached_tokens(answer(None, VALUES)) is None
    assert cached_tokens({"usage": {"prompt_tokens_details": {"cached_tokens": True}}}) is None
    assert cached_tokens({"usage": None}) is None and cached_tokens("no answer") is None


def test_an_answer_is_usable_where_its_cache_stops_before_the_context_end_and_its_continuation_is_whole():
    assert usable(answer(2, VALUES), 3)  # the context's last token (index 2) was computed
    assert not usable(answer(3, VALUES), 3)  # it was read from the cache: its logits are not there
    assert not usable(answer(None, VALUES), 3)  # no usage: what was read is unknown
    assert not usable(answer(0, [None, -0.1, -0.2, None, -0.25, -9.0]), 3)  # a continuation value missing
    assert not usable(answer(0, VALUES, tops=[None, {}, {}, {}, {}, {}]), 3)  # its top log-probabilities missing
    assert not usable(answer(0, VALUES, choices=2), 3)


class Hook:
    def __init__(self) -> None:
        self.stored: list = []

    def add_partial(self, attr: str, req: object, res: object) -> None:
        self.stored.append((attr, req, res))


def test_an_answer_to_be_re_sent_is_never_stored():
    hook = Hook()
    dropping = _ResendsNotStored(hook)
    dropping.add_partial("loglikelihood", ("a", " b"), Resend())
    dropping.add_partial("loglikelihood", ("a", " c"), (-1.0, True))
    assert hook.stored == [("loglikelihood", ("a", " c"), (-1.0, True))]


@pytest.fixture
def backend(tiny_causal: Path) -> LocalCompletionsPrefix:
    """The backend of a server that is not there (nothing here sends a request), the tiny model's tokenizer."""
    return LocalCompletionsPrefix(model=str(tiny_causal), base_url=NOWHERE, tokenizer=str(tiny_causal),
                                  tokenizer_backend="huggingface", max_length=64)  # fmt: skip


def test_log_likelihood_requests_carry_the_opt_in_while_it_is_on_and_generation_never(backend):
    backend._opt_in = True
    assert backend._create_payload([[1, 2, 3]], generate=False)["vllm_xargs"] == {OPT_IN: 1}
    assert "vllm_xargs" not in backend._create_payload([[1, 2, 3]], generate=True, gen_kwargs={"until": []})
    backend._opt_in = False
    assert "vllm_xargs" not in backend._create_payload([[1, 2, 3]], generate=False)


def test_opted_in_answers_are_scored_where_usable_and_marked_for_re_sending_where_not(backend):
    """One prompt per request (the backend's batch size): its answer scored (-0.5 + -0.25, greedy), or marked."""
    backend._opt_in = True
    tokens = [[1, 2, 3, 4, 5]]

    def parsed(output: dict) -> list:
        return backend.parse_logprobs(outputs=output, tokens=tokens, ctxlens=[3])

    ((value, greedy),) = parsed(answer(2, VALUES))
    assert math.isclose(value, -0.75) and greedy is True
    assert [type(answer_) for answer_ in parsed(answer(3, VALUES)) + parsed(answer(None, VALUES))] == [Resend] * 2
    backend._opt_in = False  # not opted in: lm_eval's own reading, whatever the usage says
    ((plain, _),) = parsed(answer(None, VALUES))
    assert math.isclose(plain, -0.75)


@pytest.mark.parametrize(
    ("answers", "reads", "lacking"),
    [
        ([answer(0, VALUES), answer(512, VALUES)], True, ""),
        ([answer(0, VALUES), answer(0, VALUES)], False, "it read nothing from its prefix cache for a request that"),
        ([answer(None, VALUES), answer(None, VALUES)], False, "its answers carry no usage.prompt_tokens_details"),
        ([answer(0, VALUES), None], False, "the probe request failed"),
        (ConnectionError("refused"), False, "the probe request failed (ConnectionError)"),
    ],
    ids=["reads", "no-plugin", "no-details", "no-answer", "unreachable"],
)
def test_the_probe_says_whether_the_server_reads_its_cache_and_what_it_lacks(backend, answers, reads, lacking):
    """Two answers to one opted-in prompt (the server's answers given here; a real server's in
    ``tests/backends/test_vllm_served.py``): the second's cached tokens decide."""
    sent = []

    def model_call(messages, generate):
        sent.append((len(messages[0]), backend._opt_in, generate))
        if isinstance(answers, Exception):
            raise answers
        return answers[len(sent) - 1]

    backend.model_call = model_call
    verdict = backend.server_reads_cache()
    assert verdict[0] is reads and verdict[1].startswith(lacking)
    assert sent[0] == (backend.max_length - 1, True, False)  # the window less one token, opted in, not generation
    assert backend._opt_in is False


def test_more_than_one_prompt_per_request_is_refused_in_one_line(tiny_causal, capsys):
    with pytest.raises(SystemExit) as stopped:
        LocalCompletionsPrefix(model=str(tiny_causal), base_url=NOWHERE, tokenizer=str(tiny_causal),
                               tokenizer_backend="huggingface", batch_size=2)  # fmt: skip
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "lm-eval-stereo: --model local-completions-prefix: batch_size=2: vLLM reports the cached tokens of a "
        "request's last prompt only, so each prompt is sent alone; use num_concurrent for parallel requests"
    )
