"""``--model local-completions-prefix``: a re-sent answer is checked like the first (issue 60;
:func:`lm_eval_stereo.core.prefix_cache.check_resent`).

A request whose answer read cached continuation tokens is re-sent with the prefix cache opted out. A server that
still answers it from its cache (``usage.prompt_tokens_details.cached_tokens`` reaching the continuation) cannot be
scored either: the run stops in one line naming the endpoint, never scoring the answer as it came back (before: up
to 82 nats off, exit status 0). No real server shows this on demand (``vllm serve`` with the plugin's vLLM plugin
honours the opt-out: tests/backends/test_vllm_prefix.py), so the fault-injecting stand-in (tests/openai_stand_in.py,
``cache_after_opt_out``) simulates one: every echoed answer says it read its whole prompt from the cache.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval_runner import run_lm_eval

from lm_eval_stereo.vllm_plugin import OPT_IN


@pytest.fixture
def stand_in():
    from openai_stand_in import serve_stand_in

    with serve_stand_in() as server:
        yield server


@pytest.mark.parametrize("concurrent", [1, 2])
def test_a_server_that_reads_its_cache_after_the_opt_out_stops_the_run_in_one_line(
    stand_in, tiny_causal: Path, tmp_path: Path, concurrent: int
):
    """One request at a time (lm_eval reads each answer outside its retries) and two at once (inside them, through
    asyncio: the answers still in flight are left unread, no trace at exit)."""
    stand_in.set_fault("cache_after_opt_out")
    url = f"{stand_in.base}/v1/completions"
    model_args = f"model=stand-in-model,base_url={url},tokenizer={tiny_causal},num_concurrent={concurrent}"
    args = ["--model", "local-completions-prefix", "--model_args", model_args]
    run = run_lm_eval([*args, "--tasks", "gest_en", "--limit", "1"], tmp_path, check=False)
    assert run.returncode == 2 and run.results == {}, run.stderr[-3000:]
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"lm-eval-stereo: {url} answered a request re-sent without the prefix cache's opt-in from its prefix cache all "
        "the same ("
    ), last
    assert last.endswith(
        "the continuation's log-probabilities were not computed, and it is not scored; no results written. Run --model "
        "local-completions against it, or start it with prefix caching off (--no-enable-prefix-caching)"
    ), last
    assert "Traceback" not in run.stderr and "never retrieved" not in run.stderr and "scored uncached" not in run.stderr
    scoring = [body for body in stand_in.requests if isinstance(body.get("prompt"), list)][2:]  # after the two probes
    opted_in = [OPT_IN in (body.get("vllm_xargs") or {}) for body in scoring]
    assert opted_in == sorted(opted_in, reverse=True) and opted_in.count(True) > 1 and not opted_in[-1], opted_in
