"""``accelerate launch -m lm_eval`` (data parallel, 2 CPU processes) gives the single-process metrics."""

from __future__ import annotations

import json

from fixtures_mlm import *  # noqa: F403
from lm_eval_runner import assert_same_metrics, free_port, run_lm_eval

#: task -> how many finite float metrics it reports at least
TASKS = {"stereoset_multi_mlm_en": 20, "gest_en_mlm": 20, "s_jsd_mlm_en": 12}


def test_two_processes_match_one(tiny_bert, tmp_path):  # noqa: F811
    common = [
        "--model",
        "hf-mlm",
        "--model_args",
        f"pretrained={tiny_bert}",
        "--tasks",
        ",".join(TASKS),
        "--limit",
        "8",
    ]
    launch = ["launch", "--cpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no"]
    launch += ["--dynamo_backend", "no", "--main_process_port", str(free_port()), "-m", "lm_eval"]
    parallel = run_lm_eval([*launch, *common], tmp_path / "parallel", executable="accelerate")
    single = run_lm_eval([*common, "--device", "cpu"], tmp_path / "single")
    for task, floats in TASKS.items():
        assert parallel.results["n-samples"][task]["effective"] == 8
        one, two = single.results["results"][task], parallel.results["results"][task]
        assert assert_same_metrics(one, two) >= floats, task


def test_two_processes_with_the_plugin_s_tasks_beside_lm_eval_s_make_the_same_calls(tiny_causal, tmp_path):
    """``hf`` in two processes, an lm_eval task (three documents) beside a plugin task whose one document only the
    first process scores, ``--batch_size auto`` (each call gathers the batch size across the processes): the
    router's halves differ between the processes (the second has no request of the plugin's; it sends one of its
    lm_eval requests through the plugin's half as padding, so that both make the same calls: tests/backends/test_router.py),
    and the run ends with the plugin's task scored. lm_eval's task gives the metrics of a run with the plugin off
    (tolerance 1e-6: lm_eval's own padding of the second process differs with the plugin's task beside it, and with
    it its batches). The plugin-off run is one process (stock lm_eval's own result, and half the start-ups of a
    launch that indexes all of lm_eval's tasks in each process)."""
    from stock_tasks import write_stock_tasks

    folder = write_stock_tasks(tmp_path / "tasks")
    launch = ["launch", "--cpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no"]
    launch += ["--dynamo_backend", "no", "--main_process_port", str(free_port()), "-m", "lm_eval"]
    common = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--batch_size", "auto"]
    common += ["--include_path", str(folder)]
    mixed = {"stock_mc": [0, 2, 3], "gest_en": [0]}
    stock = {"stock_mc": [0, 2, 3]}
    runs = {
        "mixed": run_lm_eval(
            [*launch, *common, "--tasks", ",".join(mixed), "--samples", json.dumps(mixed)],
            tmp_path / "mixed",
            executable="accelerate",
            timeout=600,
        ),
        "off": run_lm_eval(
            [*common, "--device", "cpu", "--tasks", ",".join(stock), "--samples", json.dumps(stock)],
            tmp_path / "off",
            env={"LM_EVAL_STEREO_AUTOLOAD": "0"},
        ),
    }
    assert runs["mixed"].results["n-samples"]["gest_en"]["effective"] == 1
    assert runs["mixed"].metric("gest_en", "count") == 1
    one, two = runs["off"].results["results"]["stock_mc"], runs["mixed"].results["results"]["stock_mc"]
    assert assert_same_metrics(one, two) == 4  # acc, acc_norm and their standard errors
