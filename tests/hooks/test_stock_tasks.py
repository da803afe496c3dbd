"""Beside the plugin's tasks, lm_eval stays lm_eval: lm_eval's own tasks give, through ``lm_eval``, exactly what stock
lm_eval gives, whether the plugin is installed or off (``LM_EVAL_STEREO_AUTOLOAD=0``), and whether the run holds the
plugin's tasks too.

Compared: every value of the results file but its times, durations and the paths of its files
(:data:`stock_tasks.VOLATILE`); every field of every logged sample; the console table's rows. The tasks: small tasks of each
output type written as a user writes them (:mod:`stock_tasks`: multiple choice with a context longer than the model's
window, greedy generation until a newline, rolling log-likelihood, sampled generation with ``repeats: 3``) and
lm_eval's own ``bbq`` and ``crows_pairs_english`` on the offline mirror's rows
(:mod:`lm_eval_stereo.tasks.lm_eval_bias.offline_tasks`). Tolerance: none (the same requests, in the same order,
answered by the same backend: equal to the bit).

- ``hf`` (the tiny seeded model, on the CPU; its sampled generation seeded by lm_eval's seeds): plugin off, plugin
  on, and plugin on with two of the plugin's tasks in the same run (a log-likelihood one and a sampled generation).
- Served (``local-chat-completions``, ``local-completions``), against the fault-injecting stand-in
  (tests/openai_stand_in.py) for what a real server shows only sometimes: a server that returns the stop string in
  its text and honours ``seed`` (stock lm_eval keeps the text after the stop string and sends one seed to every
  repeat; the plugin's tasks in the same run get the text cut and ``seed + k``), and one that answers HTTP 500 to every
  retry (stock lm_eval ends the run with an error; so must the run with the plugin, with no number written).
- ``vllm`` in process and the real ``vllm serve`` replicas: tests/backends/test_vllm_stock_tasks.py (the engine tier).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval
from stock_tasks import BIAS_TASKS, OFF, TASKS, assert_stock, table_rows, write_stock_tasks

from lm_eval_stereo.tasks.lm_eval_bias.offline_tasks import write_offline_tasks

STOCK = (*TASKS, *BIAS_TASKS)
#: the plugin's tasks of the mixed runs: a log-likelihood task, and a sampled generation (10 repeats of each prompt,
#: until a newline)
PLUGIN_TASKS = ("gest_en", "stereotype_leakage_gen_en")
SAMPLED_PLUGIN_TASK = "stereotype_leakage_gen_en"
#: documents per task
LIMIT = 4


@pytest.fixture(scope="module")
def include_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = write_stock_tasks(tmp_path_factory.mktemp("stock_tasks"))
    write_offline_tasks(folder)
    return folder


def hf_args(tiny_causal: Path, include_path: Path, tasks: tuple[str, ...]) -> list[str]:
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "4", "--tasks", ",".join(tasks), "--include_path", str(include_path)]
    return [*args, "--limit", str(LIMIT), "--log_samples"]


@pytest.fixture(scope="module")
def hf_runs(tiny_causal: Path, include_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, LmEvalRun]:
    """The ``hf`` runs: plugin off, on, and on with the plugin's tasks beside lm_eval's."""
    out = tmp_path_factory.mktemp("stock_hf")
    return {
        "off": run_lm_eval(hf_args(tiny_causal, include_path, STOCK), out / "off", env=OFF),
        "on": run_lm_eval(hf_args(tiny_causal, include_path, STOCK), out / "on"),
        "mixed": run_lm_eval(hf_args(tiny_causal, include_path, (*STOCK, *PLUGIN_TASKS)), out / "mixed"),
    }


def test_hf_lm_eval_s_tasks_are_stock_lm_eval_s_with_the_plugin_installed(hf_runs):
    on, off = hf_runs["on"], hf_runs["off"]
    assert_stock(on, off, STOCK)
    assert on.stdout == off.stdout  # the whole console output, the table byte for byte
    mc = off.samples["stock_mc"]
    assert len(mc) == LIMIT and len(json.dumps(mc[1]["arguments"])) > 3000  # the context longer than the window
    assert "longer than the model's window" not in on.stderr
    sampled = [sample["resps"][0] for sample in off.samples["stock_sampled"]]
    assert all(len(texts) == 3 for texts in sampled)  # lm_eval's repeats: three samples of each prompt


def test_hf_lm_eval_s_tasks_are_stock_beside_the_plugin_s_tasks(hf_runs):
    """In one run with the plugin's tasks (a log-likelihood and a sampled generation task), lm_eval's tasks still get
    what stock lm_eval gives them alone: their requests go to the backend as given, first, in their order, with the
    random state a stock run has; the plugin's tasks get their own fields."""
    mixed = hf_runs["mixed"]
    assert_stock(mixed, hf_runs["off"], STOCK)
    assert mixed.metric("gest_en", "count") == LIMIT
    assert all(mixed.metric(task, "truncated") == 0 for task in PLUGIN_TASKS)
    assert set(table_rows(mixed.stdout, PLUGIN_TASKS)) == set(PLUGIN_TASKS)


# --- served: the fault-injecting stand-in -------------------------------------------------------------------------


@pytest.fixture
def stand_in():
    from openai_stand_in import serve_stand_in

    with serve_stand_in() as server:
        yield server


def chat_args(stand_in, include_path: Path, tasks: tuple[str, ...]) -> list[str]:
    args = ["--model", "local-chat-completions", "--model_args"]
    args += [f"model=stand-in-model,base_url={stand_in.base}/v1/chat/completions,tokenizer_backend=none,max_retries=2"]
    args += ["--apply_chat_template", "--tasks", ",".join(tasks), "--include_path", str(include_path)]
    return [*args, "--limit", str(LIMIT), "--log_samples"]


def completions_args(stand_in, include_path: Path, tiny_causal: Path, tasks: tuple[str, ...]) -> list[str]:
    args = ["--model", "local-completions", "--model_args"]
    args += [f"model=stand-in-model,base_url={stand_in.base}/v1/completions,tokenizer={tiny_causal},max_retries=2"]
    args += ["--tasks", ",".join(tasks), "--include_path", str(include_path)]
    return [*args, "--limit", str(LIMIT), "--log_samples"]


GENERATION = ("stock_until_newline", "stock_sampled")


def test_served_chat_texts_keep_the_stop_string_and_repeats_one_seed_as_in_stock_lm_eval(
    stand_in, include_path, tmp_path
):
    """A chat server that returns the stop string and honours ``seed``: lm_eval's tasks get its text whole and one
    seed for the three repeats, with the plugin off, on, and on beside a plugin task, which gets its texts cut at its
    stop string and ``seed + k`` for its repeats. The key is ``EMPTY``, which one of the prompts holds as a word: the
    samples keep it (a "no key" placeholder is no credential)."""
    from openai_stand_in import AFTER_STOP

    stand_in.set_fault("returns_stop")
    # the key vLLM's documentation gives for "no key": no credential, so a prompt's own word EMPTY stays as it is
    key = {"OPENAI_API_KEY": "EMPTY"}
    off = run_lm_eval(chat_args(stand_in, include_path, GENERATION), tmp_path / "off", env={**OFF, **key})
    on = run_lm_eval(chat_args(stand_in, include_path, GENERATION), tmp_path / "on", env=key)
    sent_alone = len(stand_in.requests)
    mixed = run_lm_eval(
        chat_args(stand_in, include_path, (*GENERATION, SAMPLED_PLUGIN_TASK)), tmp_path / "mixed", env=key
    )
    for run in (on, mixed):
        assert_stock(run, off, GENERATION)
    assert on.stdout == off.stdout
    assert any("The box is EMPTY." in json.dumps(sample) for sample in on.samples["stock_until_newline"])
    texts = [text for sample in off.samples["stock_sampled"] for text in sample["resps"][0]]
    assert texts == ["Ja 1234.\n" + AFTER_STOP] * (3 * LIMIT)  # stock: the stop string kept, one seed
    ours = [text for sample in mixed.samples[SAMPLED_PLUGIN_TASK] for text in sample["resps"][0]]
    # the plugin's task: ten samples of each prompt, seeds 1234 to 1243, each cut at the stop string
    assert sorted(set(ours)) == [f"Ja {seed}." for seed in range(1234, 1244)] and len(ours) == 10 * LIMIT
    stock_prompts = {json.dumps(body["messages"]) for body in stand_in.requests[:sent_alone]}
    stock_seeds = {
        body["seed"] for body in stand_in.requests[sent_alone:] if json.dumps(body["messages"]) in stock_prompts
    }
    assert stock_seeds == {1234}  # lm_eval's tasks in the mixed run: one seed


def test_served_completions_give_lm_eval_s_tasks_what_stock_lm_eval_gives(
    stand_in, include_path, tiny_causal, tmp_path
):
    """``local-completions``: lm_eval's four local tasks (log-likelihoods from the stand-in's echoed prompts,
    generations that return the stop string) with the plugin off and on."""
    stand_in.set_fault("returns_stop")
    args = completions_args(stand_in, include_path, tiny_causal, TASKS)
    off = run_lm_eval(args, tmp_path / "off", env=OFF)
    on = run_lm_eval(args, tmp_path / "on")
    assert_stock(on, off, TASKS)
    assert on.stdout == off.stdout
    assert off.samples["stock_until_newline"][0]["resps"][0][0].endswith("und mehr")


def error_line(run: LmEvalRun) -> str:
    """The last line of ``run``'s traceback: its error (lm_eval's progress bar may be redrawn after it)."""
    return [line for line in run.stderr.splitlines() if line.startswith("requests.exceptions.")][-1]


def test_a_request_failing_every_retry_ends_the_run_as_in_stock_lm_eval(stand_in, include_path, tmp_path):
    """HTTP 500 to every retry: stock lm_eval ends the run with an error and writes no results; the plugin does not
    turn lm_eval's task's failed request into an empty answer and a number, alone or beside its own task."""
    stand_in.set_fault("http_500")
    tasks = ("stock_until_newline",)
    off = run_lm_eval(chat_args(stand_in, include_path, tasks), tmp_path / "off", env=OFF, check=False)
    on = run_lm_eval(chat_args(stand_in, include_path, tasks), tmp_path / "on", check=False)
    mixed_tasks = (*tasks, SAMPLED_PLUGIN_TASK)
    mixed = run_lm_eval(chat_args(stand_in, include_path, mixed_tasks), tmp_path / "mixed", check=False)
    assert off.returncode != 0 and off.results == {}
    for run in (on, mixed):
        assert run.returncode == off.returncode and run.results == {}, run.stderr[-3000:]
        assert "counted as unanswered" not in run.stderr
        assert error_line(run) == error_line(off) and "500 Server Error" in error_line(off)
