"""The parts of ``--model vllm-prefix`` that run without an engine, checked in the vLLM venv (``python
vllm_prefix_parts.py``, run by ``tests/backends/test_vllm_prefix_parts.py``): prints one JSON object of what each part
gave, for the test to assert on."""

from __future__ import annotations

import json
from types import SimpleNamespace


def outcome(call) -> object:
    """What ``call()`` returns, or the one line it ends with (``fail`` exits with status 2)."""
    import contextlib
    import io

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return call()
    except SystemExit as stop:
        return {"exit": stop.code, "line": err.getvalue().strip()}


def main() -> dict:
    from lm_eval_stereo.models import vllm_prefix

    backend = object.__new__(vllm_prefix.VLLMPrefix)  # no engine: only the methods that need none
    logprobs = {5: -0.5, 6: -1.5, 7: -0.25, 9: -3.0}

    def output(cached, positions):
        return SimpleNamespace(num_cached_tokens=cached, prompt_logprobs=positions)

    tokens = [1, 2, 5, 7]  # context [1, 2], continuation [5, 7]
    full = [None, {2: -0.1}, {5: logprobs[5], 6: logprobs[6]}, {7: logprobs[7], 9: logprobs[9]}]
    answers = {
        "cached_before_the_context_end": backend._answer(tokens, output(1, [None, None, *full[2:]]), 2),
        "cached_up_to_the_context_end": backend._answer(tokens, output(2, full), 2),
        "no_cache_count": backend._answer(tokens, output(None, full), 2),
        "a_continuation_position_missing": backend._answer(tokens, output(0, [None, {2: -0.1}, None, full[3]]), 2),
        "the_token_not_among_its_logprobs": backend._answer(tokens, output(0, [*full[:3], {9: -3.0}]), 2),
        "too_few_positions": backend._answer(tokens, output(0, full[:3]), 2),
    }
    return {
        "dispatch_order": vllm_prefix.VLLMPrefix.dispatch_order([[3, 1], [1, 2, 3], [1, 2], [2], [1, 2, 4]]),
        "answers": {name: list(answer) if answer is not None else None for name, answer in answers.items()},
        "smallest_block_size": vllm_prefix.smallest_block_size(),
        "block_size_32": outcome(lambda: vllm_prefix.check_block_size("32")),
        "block_size_64": outcome(lambda: vllm_prefix.check_block_size(" 64 ")),
        "block_size_16": outcome(lambda: vllm_prefix.check_block_size(16)),
        "block_size_zero": outcome(lambda: vllm_prefix.check_block_size("0")),
        "block_size_text": outcome(lambda: vllm_prefix.check_block_size("big")),
        "caching_default": backend._prefix_caching_on({}),
        "caching_off": backend._prefix_caching_on({"enable_prefix_caching": "False"}),
        "caching_off_bool": backend._prefix_caching_on({"enable_prefix_caching": False}),
    }


if __name__ == "__main__":
    print(json.dumps(main()))
