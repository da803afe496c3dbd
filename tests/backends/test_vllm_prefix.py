"""``--model vllm-prefix``: vLLM's prefix cache for log-likelihood requests, in process, for real on vLLM's CPU build
(``make vllm-venv``), SmolLM2-135M-Instruct in float32, on the log-likelihood families of the vLLM tier
(:data:`~vllm_tier.LL_DOCS`), every run on the session's one engine (:mod:`vllm_tier`, :mod:`vllm_engine`):

- ``vllm-prefix`` scores the documents twice: reading a cache emptied first, then reading the cache that run left
  (most prompts then cached but for their last token). Both equal the ``--model vllm`` run of the same documents on the
  same engine (lm_eval's own scoring, ``VLLM._loglikelihood_tokens``, the cache skipped: :func:`vllm_tier.vllm_ll`)
  request by request within :data:`SAME_ENGINE_TOLERANCE` (0.0 was measured: the cache holds the very numbers the
  request would compute), with the same greedy flags, item scores, metrics and token-boundary flags, and ``hf``'s
  within :data:`~vllm_tier.TOLERANCE` (the vLLM tier's); prompt tokens were read from the cache, and the requests
  whose cache reached their continuation were re-sent and counted (``requests_resent``).
- a ``block_size`` the CPU refuses ends the run in one line before any engine starts.

The served prefix backend (``local-completions-prefix``) is tested in ``tests/backends/test_vllm_served.py``.
"""

from __future__ import annotations

import pytest
from lm_eval_runner import LmEvalRun
from vllm_tier import (
    LL_DOCS,
    MARKS,
    TOLERANCE,
    assert_close_metrics,
    assert_item_scores_equal,
    assert_log_likelihoods_equal,
    samples_arg,
)

from lm_eval_stereo.core.prefix_cache import RESENT

pytestmark = MARKS
#: per-request difference allowed between vllm-prefix and lm_eval's vllm scoring on the same engine (0.0 measured)
SAME_ENGINE_TOLERANCE = 1e-5


def counts_aside(metrics: dict) -> dict:
    """A task's metrics without the re-sent count (``hf`` has none)."""
    return {key: value for key, value in metrics.items() if not key.startswith(f"{RESENT},")}


def resent(run: LmEvalRun) -> dict[str, int]:
    return {task: metrics[f"{RESENT},none"] for task, metrics in run.results["results"].items() if task in LL_DOCS}


@pytest.fixture(scope="module")
def prefix_runs(vllm_engine, offline_tasks, tmp_path_factory) -> dict[str, LmEvalRun]:
    """``vllm-prefix`` on :data:`~vllm_tier.LL_DOCS`: ``prefix`` on a cache emptied first, then ``warm`` on the cache
    it left; each run with its ``prompt_tokens``."""
    args = ["--model", "vllm-prefix", "--model_args", vllm_engine.model_args, "--batch_size", "auto"]
    args += [*offline_tasks, *samples_arg(LL_DOCS)]
    return {
        name: vllm_engine.run(args, tmp_path_factory.mktemp(f"vllm_prefix_{name}"), reset_prefix_cache=name == "prefix")
        for name in ("prefix", "warm")
    }


@pytest.mark.parametrize("run", ["prefix", "warm"])
@pytest.mark.parametrize("task", sorted(LL_DOCS))
def test_cached_runs_equal_vllm_per_request_and_hf_item_by_item(prefix_runs, vllm_ll, hf_ll, run, task):
    ours = prefix_runs[run]
    assert_log_likelihoods_equal(ours, vllm_ll, task, SAME_ENGINE_TOLERANCE)
    assert_log_likelihoods_equal(ours, hf_ll, task, TOLERANCE)
    assert_item_scores_equal(ours, vllm_ll, task, SAME_ENGINE_TOLERANCE)
    assert_item_scores_equal(ours, hf_ll, task, TOLERANCE)
    assert_close_metrics(counts_aside(ours.results["results"][task]), counts_aside(hf_ll.results["results"][task]))


def test_the_cache_was_read_and_the_requests_it_reached_re_sent_and_counted(prefix_runs, vllm_ll):
    prefix, warm = prefix_runs["prefix"], prefix_runs["warm"]
    assert prefix.prompt_tokens["cached"] > 0.3 * prefix.prompt_tokens["sent"], prefix.prompt_tokens
    assert vllm_ll.prompt_tokens == {}  # lm_eval's vllm scoring: nothing through the prefix path
    assert set(resent(prefix)) == set(resent(warm)) == set(LL_DOCS)  # every log-likelihood task has its count
    assert all(f"{RESENT},none" not in vllm_ll.results["results"][task] for task in LL_DOCS)
    assert 0 < sum(resent(prefix).values()) <= sum(resent(warm).values())


def test_a_block_size_the_cpu_refuses_ends_in_one_line(smollm2, vllm_engine, tmp_path):
    model_args = f"pretrained={smollm2},dtype=float32,block_size=16"
    run = vllm_engine.run(["--model", "vllm-prefix", "--model_args", model_args, "--tasks", "gest_en", "--limit", "1"],
                          tmp_path, check=False)  # fmt: skip
    assert run.returncode == 2, run.stderr[-3000:]
    assert run.stderr.strip().splitlines()[-1] == (
        "lm-eval-stereo: --model vllm-prefix: block_size=16 is refused by vLLM's CPU attention (CPU_ATTN), which "
        "takes multiples of 32; the smallest, 32, shares the most"
    )
    assert "Traceback" not in run.stderr and "EngineCore" not in run.stderr  # refused before any engine started
