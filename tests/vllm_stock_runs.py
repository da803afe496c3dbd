"""Three runs of lm_eval's own greedy tasks on one in-process ``--model vllm`` engine (``python vllm_stock_runs.py
OUTPUT MODEL_ARGS SAMPLES_JSON INCLUDE_PATH``, run by :mod:`test_vllm_stock_tasks` with the vLLM venv's interpreter,
``LM_EVAL_STEREO_AUTOLOAD=0``), each written as lm_eval's command line writes it under ``OUTPUT/<run>``, with its
console table (``table.md``):

- ``off``: stock lm_eval (the plugin's start-up hook off: nothing of lm_eval changed);
- ``on``: the same tasks after the plugin's hooks are installed in this process (:func:`lm_eval_stereo._autoload.activate`);
- ``mixed``: the same tasks beside the plugin's ``PLUGIN_TASKS``.

One engine for all three: an engine start costs more CPU than the runs together.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: the plugin's tasks of the mixed run: a log-likelihood one and a greedy generation
PLUGIN_TASKS = {"gest_en": [0, 1], "kobbq_gen": [0, 1]}


def save(results: dict, folder: Path) -> None:
    """``results`` written as lm_eval's command line writes them, and its console table."""
    import lm_eval.utils
    from lm_eval.loggers import EvaluationTracker

    tracker = EvaluationTracker(output_path=str(folder))
    tracker.general_config_tracker.model_name_sanitized = "smollm2"
    logged = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=logged)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=logged[task])
    (folder / "table.md").write_text(lm_eval.utils.make_table(results), encoding="utf-8")


def main(output: Path, model_args: str, samples: dict[str, list[int]], include_path: str) -> None:
    import lm_eval.evaluator
    from lm_eval.api.registry import get_model
    from lm_eval.tasks import TaskManager

    from lm_eval_stereo.core import engines

    with engines.shut_down_engines_started_within():
        lm = get_model("vllm").create_from_arg_string(model_args, {"batch_size": "auto"})
        engines.record(lm)
        for run in ("off", "on", "mixed"):
            if run == "on":
                from lm_eval_stereo._autoload import activate

                activate()  # lm_eval's modules are imported: their hooks installed now
            asked = {**samples, **(PLUGIN_TASKS if run == "mixed" else {})}
            manager = TaskManager(include_path=include_path, include_defaults=False)
            results = lm_eval.evaluator.simple_evaluate(
                model=lm, tasks=list(asked), samples=asked, log_samples=True, task_manager=manager
            )
            results["config"]["model"] = "vllm"
            save(results, output / run)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4])
