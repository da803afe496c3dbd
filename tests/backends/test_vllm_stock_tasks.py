"""Beside the plugin's tasks, lm_eval stays lm_eval on vLLM (the engine tier; the rest: tests/hooks/test_stock_tasks.py):
lm_eval's own tasks (:mod:`stock_tasks`, and :data:`BIAS_TASK` on the mirror's rows) give what stock lm_eval gives,
plugin off against on.

Of lm_eval's own bias tasks, whose results the plugin reads, ``crows_pairs_english`` stands for both here: what the
plugin does with their requests does not depend on the task (the router sends every request of lm_eval's tasks to the
backend as it is), and ``bbq`` runs beside it on ``hf`` (tests/hooks/test_stock_tasks.py), where each run builds
its requests from all of its offline rows.

- ``vllm`` in process, on the session's engine (:mod:`vllm_engine`), three runs: stock lm_eval (the session's first on
  the engine, before its server installs the plugin's hooks: ``conftest.FIRST_ON_THE_ENGINE``), the same after the
  plugin's hooks are installed, and the same beside two of the plugin's tasks. Greedy tasks only:
  stock lm_eval's ``vllm`` gives a sampled request no seed of its own, and two stock runs of the sampled task differ
  (two stock runs of the served protocols' sampled tasks differed on 23 of 24 sample fields), so a comparison of them
  would test vLLM, not the plugin. Tolerance: none (one engine, the same requests in the same batches).
- ``vllm serve``: the tier's two replicas behind HAProxy, ``local-completions`` (log-likelihoods from the echoed
  prompts, greedy generation) and ``local-chat-completions`` (greedy generation), the plugin off and on. The texts
  equal; log-likelihoods within 1e-4 (vLLM's numbers depend on the batch a request shares on the server: the
  tier's ``RESUME_TOLERANCE``), the metrics computed from them within 1e-4 too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval
from stock_tasks import ADDRESS, OFF, assert_stock, table_rows, write_stock_tasks
from vllm_replicas import ENV, MAX_MODEL_LEN
from vllm_tier import MARKS

from lm_eval_stereo.tasks.lm_eval_bias.offline_tasks import write_offline_tasks

pytestmark = MARKS

#: lm_eval's greedy tasks and their documents: not ``stock_mc``'s second, whose context of about 700 words is longer
#: than the tiny models' window (tests/hooks/test_stock_tasks.py) but inside this engine's, where its 1,400 prompt
#: tokens would take most of each run's time and test nothing the short ones do not
GREEDY = {"stock_mc": [0, 2, 3], "stock_until_newline": [0, 1, 2, 3], "stock_rolling": [0, 1, 2, 3]}
#: the bias task of the comparisons (see the module docstring)
BIAS_TASK = "crows_pairs_english"
GREEDY |= {BIAS_TASK: [0, 1, 2, 3]}
#: log-likelihoods of the served runs: within this of each other (see the module docstring)
SERVED_TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def include_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = write_stock_tasks(tmp_path_factory.mktemp("stock_tasks"))
    write_offline_tasks(folder)
    return folder


#: the plugin's tasks of the mixed run: a log-likelihood one and a greedy generation
PLUGIN_TASKS = {"gest_en": [0, 1], "kobbq_gen": [0, 1]}


@pytest.fixture(scope="module")
def in_process(vllm_engine, include_path, tmp_path_factory) -> dict[str, LmEvalRun]:
    """The three runs on the session's engine, each through lm_eval's command line (its console table on stdout)."""
    args = ["--model", "vllm", "--model_args", vllm_engine.model_args, "--batch_size", "auto"]
    args += ["--include_path", str(include_path), "--log_samples"]
    runs = {}
    for name, documents, plugin in (
        ("off", GREEDY, False),
        ("on", GREEDY, True),
        ("mixed", GREEDY | PLUGIN_TASKS, True),
    ):
        asked = ["--tasks", ",".join(documents), "--samples", json.dumps(documents)]
        folder = tmp_path_factory.mktemp(f"vllm_stock_{name}")
        runs[name] = vllm_engine.run([*args, *asked], folder, plugin=plugin, env=OFF if not plugin else None)
    return runs


def table(stdout: str) -> list[str]:
    """The lines of lm_eval's console tables in a run's stdout."""
    return [line for line in stdout.splitlines() if line.startswith("|")]


@pytest.mark.parametrize("run", ["on", "mixed"])
def test_vllm_in_process_gives_lm_eval_s_tasks_what_stock_lm_eval_gives(in_process, run):
    assert_stock(in_process[run], in_process["off"], tuple(GREEDY))
    if run == "on":
        assert table(in_process["on"].stdout) == table(in_process["off"].stdout)  # the console table, byte for byte
    else:
        assert in_process["mixed"].metric("gest_en", "count") == 2
        assert set(table_rows(in_process["mixed"].stdout, ("gest_en", "kobbq_gen"))) == {"gest_en", "kobbq_gen"}


def close(one, two) -> bool:
    """Two logged values equal, floats within :data:`SERVED_TOLERANCE` (NaN where NaN), containers element by
    element."""
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(close(one[key], two[key]) for key in one)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(close(a, b) for a, b in zip(one, two))
    if isinstance(one, str) and isinstance(two, str):
        try:
            return close(float(one), float(two))
        except ValueError:
            return one == two
    if isinstance(one, float) and isinstance(two, float):
        return (math.isnan(one) and math.isnan(two)) or abs(one - two) <= SERVED_TOLERANCE
    return one == two


def assert_served_stock(on: LmEvalRun, off: LmEvalRun, tasks: dict[str, list[int]]) -> None:
    for task in tasks:
        assert close(on.results["results"][task], off.results["results"][task]), task
        configs = (json.dumps(run.results["configs"][task], sort_keys=True) for run in (on, off))
        assert ADDRESS.sub("", next(configs)) == ADDRESS.sub("", next(configs)), task
        assert len(on.samples[task]) == len(tasks[task])
        for ours, theirs in zip(on.samples[task], off.samples[task]):
            assert ours.keys() == theirs.keys() and close(ours, theirs), (task, ours["doc_id"])
        assert not {"unanswered,none", "cut_answers,none", "truncated,none"} & set(on.results["results"][task])


SERVED_GREEDY = GREEDY | {BIAS_TASK: [0, 1]}


def test_vllm_serve_completions_and_chat_give_lm_eval_s_tasks_what_stock_lm_eval_gives(
    smollm2, vllm_replicas, include_path, tmp_path
):
    pair = vllm_replicas.ready()
    completions = ["--model", "local-completions", "--model_args"]
    completions += [
        f"model={smollm2},base_url={pair.base}/v1/completions,tokenizer={smollm2},max_length={MAX_MODEL_LEN}"
    ]
    chat = ["--model", "local-chat-completions", "--model_args"]
    chat += [
        f"model={smollm2},base_url={pair.base}/v1/chat/completions,tokenizer_backend=none",
        "--apply_chat_template",
    ]
    for name, model, tasks in (
        ("completions", completions, SERVED_GREEDY),
        ("chat", chat, {"stock_until_newline": [0, 1, 2, 3]}),
    ):
        args = [*model, "--include_path", str(include_path), "--tasks", ",".join(tasks), "--samples", json.dumps(tasks)]
        args += ["--log_samples"]
        off = run_lm_eval(args, tmp_path / f"{name}_off", env={**ENV, **OFF})
        on = run_lm_eval(args, tmp_path / f"{name}_on", env=ENV)
        assert_served_stock(on, off, tasks)
