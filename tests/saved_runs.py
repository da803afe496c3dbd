"""A plugin run saved as lm_eval saves one, without a model: StereoSet English results and logged samples built by
hand (the items the task logs, the metrics its metric set computes from them) and written by lm_eval 0.4.13's own
``EvaluationTracker``, in either form of ``--output_path`` (a folder: ``DIR/<model>/results_<date>.json``; a file:
``DIR/NAME_<date>.json``, the samples beside it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lm_eval.loggers.evaluation_tracker import EvaluationTracker

from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS

TASK = "stereoset_multi_en"
#: what a StereoSet task records in its config metadata (:meth:`lm_eval_stereo.core.summary.SummaryTask.recorded`)
RECORDED = {
    "benchmark": "stereoset_multi",
    "metric_set": "stereoset_multi.scores",
    "key_field": "key",
    "language": "en",
    "scoring": "StereoSetTask",
}


def items(pro_flags: list[int]) -> list[dict[str, Any]]:
    """StereoSet items, one per flag: 1 prefers the stereotype."""
    return [
        {"key": f"en/intrasentence/{i:04d}", "test": "intrasentence", "target": f"t{i % 4}", "bias_type": "race",
         "stereotype": 2.0 if flag else 1.0, "anti-stereotype": 1.0 if flag else 2.0, "unrelated": 0.0}
        for i, flag in enumerate(pro_flags)
    ]  # fmt: skip


def _sample(index: int, item: dict[str, Any]) -> dict[str, Any]:
    """One ``--log_samples`` line of the task: the item under its first metric, as the plugin's tasks log it."""
    return {
        "doc_id": index,
        "doc": {"id": item["key"], "context": f"context {index}"},
        "target": "",
        "arguments": [[f"context {index}", " stereotype"], [f"context {index}", " anti"]],
        "resps": [[[-1.0, False]], [[-2.0, False]]],
        "filtered_resps": [[-1.0, False], [-2.0, False]],
        "filter": "none",
        "metrics": list(METRICS.names),
        "doc_hash": f"doc{index}",
        "prompt_hash": f"prompt{index}",
        "target_hash": "target",
        METRICS.names[0]: item,
    }


def save_run(output_path: Path, pretrained: str, pro_flags: list[int], *, recorded: bool = True) -> Path:
    """Save a StereoSet English run of ``pretrained`` (one item per flag) with lm_eval's ``EvaluationTracker`` at
    ``--output_path output_path``; the results file written. ``recorded=False``: a run of a plugin older than the
    task's recorded metadata (no ``metric_set``, no ``key_field``: :mod:`lm_eval_stereo.results.legacy`)."""
    logged = items(pro_flags)
    metrics = METRICS.compute(logged)
    results = {
        "results": {TASK: {"alias": TASK} | {f"{name},none": value for name, value in metrics.items()}},
        "group_subtasks": {TASK: []},
        "configs": {TASK: {"task": TASK, "metadata": {"version": 1.0, **(RECORDED if recorded else {})}}},
        "versions": {TASK: 1.0},
        "n-shot": {TASK: 0},
        "higher_is_better": {TASK: {}},
        "n-samples": {TASK: {"original": len(logged), "effective": len(logged)}},
        "config": {"model": "hf", "model_args": f"pretrained={pretrained}", "limit": None},
        "lm_eval_version": "0.4.13",
    }
    samples = [_sample(index, item) for index, item in enumerate(logged)]
    tracker = EvaluationTracker(output_path=str(output_path))
    tracker.general_config_tracker.log_experiment_args(
        model_source="hf",
        model_args=f"pretrained={pretrained}",
        system_instruction=None,
        chat_template=None,
        fewshot_as_multiturn=False,
    )
    tracker.save_results_aggregated(results=results, samples={TASK: samples})
    tracker.save_results_samples(task_name=TASK, samples=samples)
    written = sorted(output_path.parent.glob(f"{output_path.stem}_*.json")) if output_path.suffix == ".json" else []
    written = written or sorted((output_path / pretrained.replace("/", "__")).glob("results_*.json"))
    return written[-1]
