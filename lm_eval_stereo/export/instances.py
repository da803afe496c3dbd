"""The per-item sidecar of a record: one Every Eval Ever instance line per logged item of a plugin task.

Each line names the item (``sample_id`` = its key), holds the document as lm_eval logged it (``input.raw``, the same
for every model, so ``sample_hash`` joins models), the values the task scored (the item as logged), and the
item score that the headline named by the benchmark's :class:`~lm_eval_stereo.core.metrics.ItemScore` averages
(``evaluation.score``, raw), joined to that headline's aggregate result by ``evaluation_result_id``. Where an item
has no right answer, ``metadata.is_correct_means`` says what ``is_correct`` is for the benchmark. Items the headline
leaves out (unscored) get no line and are counted.
"""

from __future__ import annotations

import hashlib
import json

from lm_eval_stereo.export.collect import TaskItems
from lm_eval_stereo.export.eee import PLUGIN_NAMESPACE, SCHEMA_VERSION
from lm_eval_stereo.export.headlines import Omission


def sample_hash(raw: str, reference: list[str]) -> str:
    """The upstream recipe: sha256 of ``{"raw", "reference"}`` as compact sorted JSON."""
    payload = json.dumps({"raw": raw, "reference": reference}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def instance_lines(task_items: TaskItems, evaluation_id: str, model_id: str) -> tuple[list[dict], list[Omission]]:
    """The instance records of one task's items, and an omission counting the items without a score."""
    item_score = task_items.metric_set.item_score
    if item_score is None:
        raise ValueError(f"{task_items.metric_set.id} declares no item score")
    lines: list[dict] = []
    unscored = 0
    for key, item in zip(task_items.keys, task_items.items, strict=True):
        score = item_score.score(item)
        if score is None:
            unscored += 1
            continue
        raw = task_items.documents.get(key, key)
        lines.append(
            {
                "schema_version": SCHEMA_VERSION,
                "evaluation_id": evaluation_id,
                "model_id": model_id,
                "evaluation_name": f"{PLUGIN_NAMESPACE}.{task_items.task}",
                "evaluation_result_id": f"{task_items.task}/{item_score.metric}",
                "sample_id": key,
                "sample_hash": sample_hash(raw, []),
                "interaction_type": "single_turn",
                "input": {"raw": raw, "reference": []},
                "output": {"raw": [json.dumps(item, sort_keys=True, default=str)]},
                "answer_attribution": [
                    {
                        "turn_idx": 0,
                        "source": "output.raw",
                        "extracted_value": repr(score),
                        "extraction_method": f"{task_items.metric_set.id} item score",
                        "is_terminal": True,
                    }
                ],
                "evaluation": {"score": score, "is_correct": bool(item_score.correct(item))},
                "metadata": {
                    "metric": item_score.metric,
                    "metric_set": task_items.metric_set.id,
                    "is_correct_means": item_score.correct_means,
                },
            }
        )
    omitted = [
        Omission(
            task_items.task, item_score.metric, f"no per-item line: {unscored} unscored item(s)", "no per-item lines"
        )
    ]
    return lines, omitted if unscored else []
