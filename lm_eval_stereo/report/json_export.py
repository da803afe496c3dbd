"""The report as plain data (``lm-eval-stereo report --json``): NaN and infinities as null; ``lm_eval_tasks`` lists
the tasks and groups of lm_eval's own (capability) among ``tasks``, their directions from ``higher_is_better``."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from lm_eval_stereo.report.capability import is_lm_eval_task
from lm_eval_stereo.report.model import Report


def _finite(value: Any) -> Any:
    """NaN and infinities as None, so that the JSON is standard."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def report_json(report: Report) -> dict[str, Any]:
    """The report as plain data: models, per task and model the estimates and counts with their source, warnings."""
    tasks: dict[str, Any] = {}
    for task in report.tasks:
        tasks[task] = {}
        for cell in report.task_cells(task):
            metrics = {}
            for name in cell.headlines:
                estimate, ideal = cell.estimate(name), cell.ideal(name)
                metrics[name] = {
                    "value": _finite(estimate.value),
                    "ci_low": _finite(estimate.low),
                    "ci_high": _finite(estimate.high),
                    "stderr": _finite(estimate.stderr),
                    "ideal": ideal.value if ideal else None,
                    "direction": ideal.direction if ideal else None,
                }
            items = cell.items
            tasks[task][cell.row.label] = {
                "metrics": metrics,
                "counts": {name: _finite(value) for name, value in cell.counts.items()},
                "items": None if items is None else {"effective": items[0], "original": items[1]},
                "members": list(cell.members),
                "version": cell.run.version(task),
                "results_file": str(cell.run.path),
            }
    return {
        "models": [{"label": row.label, "model": row.model, "model_args": row.model_args} for row in report.rows],
        "tasks": tasks,
        "lm_eval_tasks": [task for task in report.tasks if is_lm_eval_task(task)],
        "warnings": [asdict(finding) for finding in report.warnings],
    }
