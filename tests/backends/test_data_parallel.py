"""``accelerate launch -m lm_eval`` (data parallel, 2 CPU processes) gives the single-process metrics."""

from __future__ import annotations

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
