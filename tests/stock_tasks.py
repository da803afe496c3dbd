"""Small tasks of lm_eval's own kind, one of each output type, written as a user writes them outside the project
(``dataset_path: json`` over local rows, lm_eval's default metrics): the tasks lm_eval must run exactly as stock
lm_eval runs them whether the plugin is installed or not (tests/test_stock_tasks.py).

- ``stock_mc``: multiple choice, one of whose contexts (:data:`LONG_WORDS` words) is longer than the tiny models'
  window of 512 tokens (stock ``hf`` cuts it from the left; the plugin's tasks would have it marked and counted);
- ``stock_until_newline``: greedy generation until a newline;
- ``stock_rolling``: rolling log-likelihood (word and byte perplexity, bits per byte);
- ``stock_sampled``: sampled generation with ``repeats: 3`` (stock lm_eval sends one seed for all three).
"""

from __future__ import annotations

import json
from pathlib import Path

#: the words of the long context: about 700 tokens of the tiny models' byte-level BPE
LONG_WORDS = 700
#: the tasks, by name
TASKS = ("stock_mc", "stock_until_newline", "stock_rolling", "stock_sampled")

QUESTIONS = [
    {"question": "Which animal barks?", "choices": ["dog", "cat", "a very small bird"], "answer": 0},
    {"question": " ".join(["The long story goes on"] * (LONG_WORDS // 5)) + ". Who told it?",
     "choices": ["the sea", "a sailor"], "answer": 1},
    {"question": "Wer ist Ärztin?", "choices": ["die Frau", "der Mann", "unbekannt"], "answer": 2},
    {"question": "What colour is the sky?", "choices": ["blue", "green"], "answer": 0},
]  # fmt: skip
PROMPTS = [
    {"prompt": "Write one word about the sea:", "target": "waves"},
    {"prompt": "Nenne eine Farbe:", "target": "blau"},
    {"prompt": "Count: one, two,", "target": "three"},
    {"prompt": "Kim is", "target": "here"},
]
TEXTS = [
    {"text": "The cat sat on the mat. It was a sunny day, and the garden smelled of rain."},
    {"text": "Die Katze saß auf der Matte. Es war ein sonniger Tag."},
    {"text": "Kedi paspasın üstüne oturdu."},
    {"text": "One two three four five six seven eight nine ten eleven twelve."},
]

#: each task's YAML after its task name and data file
CONFIGS = {
    "stock_mc": (
        QUESTIONS,
        "output_type: multiple_choice\n"
        'doc_to_text: "Question: {{question}}\\nAnswer:"\n'
        'doc_to_choice: "{{choices}}"\n'
        'doc_to_target: "{{answer}}"\n'
        "metric_list:\n  - metric: acc\n  - metric: acc_norm\n",
    ),
    "stock_until_newline": (
        PROMPTS,
        "output_type: generate_until\n"
        'doc_to_text: "{{prompt}}"\n'
        'doc_to_target: "{{target}}"\n'
        'generation_kwargs:\n  until: ["\\n"]\n  do_sample: false\n  max_gen_toks: 12\n'
        "metric_list:\n  - metric: exact_match\n",
    ),
    "stock_rolling": (
        TEXTS,
        "output_type: loglikelihood_rolling\n"
        'doc_to_text: ""\n'
        'doc_to_target: "{{text}}"\n'
        "metric_list:\n  - metric: word_perplexity\n  - metric: byte_perplexity\n  - metric: bits_per_byte\n",
    ),
    "stock_sampled": (
        PROMPTS,
        "output_type: generate_until\n"
        "repeats: 3\n"
        'doc_to_text: "{{prompt}}"\n'
        'doc_to_target: "{{target}}"\n'
        'generation_kwargs:\n  until: ["\\n"]\n  do_sample: true\n  temperature: 1.0\n  max_gen_toks: 12\n'
        "metric_list:\n  - metric: exact_match\n",
    ),
}


def write_stock_tasks(folder: Path) -> Path:
    """Write the tasks of :data:`TASKS` (YAML and rows) into ``folder`` (for ``--include_path``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (rows, config) in CONFIGS.items():
        data = folder / f"{name}.jsonl"
        data.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
        (folder / f"{name}.yaml").write_text(
            f"task: {name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {json.dumps(str(data))}\n"
            f"test_split: test\n{config}",
            encoding="utf-8",
        )
    return folder
