"""Plain lm_eval tasks over local JSON-lines files (hub datasets are out of reach): multiple-choice tasks written as
a user's YAML would be (``dataset_path: json``), and groups of them aggregated as lm_eval's ``mmlu`` is."""

from __future__ import annotations

import json
from pathlib import Path

#: shared questions, answers of any length, several scripts
GENERIC_DOCS = [
    {"question": "Which animal barks?", "choices": ["dog", "cat", "a very small bird"], "answer": 0},
    {"question": "Wer ist Ärztin?", "choices": ["die Frau", "der Mann", "unbekannt"], "answer": 2},
    {"question": "What colour is the sky?", "choices": ["blue", "blue-ish grey", "green"], "answer": 0},
    {"question": "Kim?", "choices": ["Kadın", "Kadın çok güzel", "Erkek"], "answer": 1},
    {"question": "Which animal barks?", "choices": ["dog", "bird"], "answer": 0},
]


def write_mc_task(folder: Path, name: str, docs: list[dict], metrics: tuple[str, ...] = ("acc",)) -> Path:
    """``<folder>/<name>.yaml``: a multiple-choice task over ``docs`` (question, choices, answer index)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{name}.jsonl"
    data.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    metric_list = "".join(
        f"  - metric: {metric}\n    aggregation: mean\n    higher_is_better: true\n" for metric in metrics
    )
    (folder / f"{name}.yaml").write_text(
        f"task: {name}\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(data))}\n"
        "test_split: test\n"
        "output_type: multiple_choice\n"
        'doc_to_text: "Question: {{question}}\\nAnswer:"\n'
        'doc_to_choice: "{{choices}}"\n'
        'doc_to_target: "{{answer}}"\n'
        f"metric_list:\n{metric_list}"
    )
    return folder


def write_group(folder: Path, name: str, members: list[str], metric: str = "acc") -> Path:
    """``<folder>/<name>.yaml``: a group of ``members`` whose ``metric`` lm_eval averages weighted by size."""
    tasks = "".join(f"  - {member}\n" for member in members)
    aggregate = f"aggregate_metric_list:\n  - metric: {metric}\n    weight_by_size: true\n"
    (folder / f"{name}.yaml").write_text(f"group: {name}\ntask:\n{tasks}{aggregate}")
    return folder
