"""``models/vllm_prefix.py`` without an engine (in the vLLM venv, which it imports: :mod:`vllm_prefix_parts`): the
order requests are sent in, when an answer read from the cache is used and when it is re-sent, the block sizes the
CPU takes, whether the engine arguments turn prefix caching off. The backend on an engine, against ``vllm`` and
``hf``: ``tests/backends/test_vllm_prefix.py``."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from lm_eval_runner import TESTS
from vllm_replicas import ENV, VLLM_BIN
from vllm_tier import MARKS

pytestmark = MARKS
SCRIPT = TESTS / "vllm_prefix_parts.py"


@pytest.fixture(scope="module")
def parts() -> dict:
    proc = subprocess.run([str(VLLM_BIN / "python"), str(SCRIPT)], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_requests_sharing_a_context_are_sent_one_after_the_other(parts):
    # [[3, 1], [1, 2, 3], [1, 2], [2], [1, 2, 4]]: sorted, each after the one it shares the longest prefix with
    assert parts["dispatch_order"] == [2, 1, 4, 3, 0]


def test_an_answer_read_from_the_cache_is_used_only_where_the_cache_stops_before_the_context_end(parts):
    """Context [1, 2], continuation [5, 7]: its log-likelihood -0.5 + -0.25, greedy (each token its position's most
    likely); re-sent (None) where the cache reached the context's last token, where the engine gave no cache count, and
    where a continuation position or its token's entry is missing."""
    answers = parts["answers"]
    assert answers.pop("cached_before_the_context_end") == [-0.75, True]
    assert answers == dict.fromkeys(answers, None) and len(answers) == 5


def test_the_cpu_takes_multiples_of_32_and_a_refused_size_ends_in_one_line(parts):
    assert parts["smallest_block_size"] == parts["block_size_32"] == 32 and parts["block_size_64"] == 64
    refused = "lm-eval-stereo: --model vllm-prefix: block_size={} "
    assert parts["block_size_16"] == {
        "exit": 2,
        "line": refused.format(16) + "is refused by vLLM's CPU attention (CPU_ATTN), which takes multiples of 32; the "
        "smallest, 32, shares the most",
    }
    for name, given in (("block_size_zero", "0"), ("block_size_text", "big")):
        assert parts[name] == {"exit": 2, "line": refused.format(given) + "is not a positive integer"}


def test_prefix_caching_is_on_unless_the_engine_arguments_turn_it_off(parts):
    assert (parts["caching_default"], parts["caching_off"], parts["caching_off_bool"]) == (True, False, False)
