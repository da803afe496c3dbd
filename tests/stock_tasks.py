"""Small tasks of lm_eval's own kind, one of each output type, written as a user writes them outside the project
(``dataset_path: json`` over local rows, lm_eval's default metrics): the tasks lm_eval must run exactly as stock
lm_eval runs them whether the plugin is installed or not (tests/hooks/test_stock_tasks.py, tests/backends/test_vllm_stock_tasks.py),
and how a run of them is compared with stock lm_eval's (:func:`assert_stock`).

- ``stock_mc``: multiple choice, one of whose contexts (:data:`LONG_WORDS` words) is longer than the tiny models'
  window of 512 tokens (stock ``hf`` cuts it from the left; the plugin's tasks would have it marked and counted);
- ``stock_until_newline``: greedy generation until a newline;
- ``stock_rolling``: rolling log-likelihood (word and byte perplexity, bits per byte);
- ``stock_sampled``: sampled generation with ``repeats: 3`` (stock lm_eval sends one seed for all three).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lm_eval_runner import LmEvalRun

from lm_eval_stereo._autoload import AUTOLOAD_ENV

#: the words of the long context: about 700 tokens of the tiny models' byte-level BPE
LONG_WORDS = 700
#: the tasks, by name
TASKS = ("stock_mc", "stock_until_newline", "stock_rolling", "stock_sampled")
#: lm_eval's own bias tasks of the comparisons (their rows from the offline mirror:
#: :func:`lm_eval_stereo.tasks.lm_eval_bias.offline_tasks.write_offline_tasks`)
BIAS_TASKS = ("bbq", "crows_pairs_english")

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
    {"prompt": "The box is EMPTY. Kim is", "target": "here"},
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


# --- a run of them compared with stock lm_eval's ------------------------------------------------------------

#: the results fields that differ between any two runs: times and durations
VOLATILE = ("date", "start_time", "end_time", "total_evaluation_time_seconds")
#: what else differs between two processes: the address in a function's repr (lm_eval writes a task's few-shot
#: functions into its config as ``<function doc_to_choice at 0x7f...>``)
ADDRESS = re.compile(r" at 0x[0-9a-f]+>")
#: the environment of a run with the plugin off
OFF = {AUTOLOAD_ENV: "0"}


#: the parts of a results file kept per task
PER_TASK = ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "task_hashes")


def per_task(results: dict, tasks: tuple[str, ...]) -> str:
    """The parts of a results file (:data:`PER_TASK`) that concern ``tasks``, as JSON without function addresses."""
    parts = {part: {task: value for task, value in results.get(part, {}).items() if task in tasks} for part in PER_TASK}
    return ADDRESS.sub(" at 0x...>", json.dumps(parts, sort_keys=True))


def whole(results: dict) -> str:
    """A results file as JSON without :data:`VOLATILE` fields and function addresses."""
    kept = {key: value for key, value in results.items() if key not in VOLATILE}
    return ADDRESS.sub(" at 0x...>", json.dumps(kept, sort_keys=True))


def _cell(text: str) -> str | float:
    """A table cell as its number where it is one: lm_eval's table writer gives every number of a column the
    column's decimals, so a row beside other tasks' rows may print ``0`` as ``0.0000``."""
    try:
        number = float(text)
    except ValueError:
        return text
    return text if number != number else number  # NaN as its text: equal to itself


def table_rows(stdout: str, tasks: tuple[str, ...]) -> dict[str, list[list[str | float]]]:
    """lm_eval's console table: per task of ``tasks``, its rows' cells (a task's metric rows follow its named row)."""
    rows: dict[str, list[list[str | float]]] = {}
    task = ""
    for line in stdout.splitlines():
        if not line.startswith("|") or set(line) <= {"|", "-", ":"}:
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        task = cells[0].lstrip("- ").strip() or task
        if task in tasks:
            rows.setdefault(task, []).append([_cell(cell) for cell in cells[1:]])
    return rows


def assert_stock(run: LmEvalRun, stock: LmEvalRun, tasks: tuple[str, ...]) -> None:
    """``run``'s results, samples and console rows of ``tasks`` equal ``stock``'s (the plugin off)."""
    assert run.returncode == 0 and stock.returncode == 0, run.stderr[-3000:] + stock.stderr[-3000:]
    assert set(tasks) <= set(stock.results["results"])
    if set(run.results["results"]) == set(stock.results["results"]):
        assert whole(run.results) == whole(stock.results)
    assert per_task(run.results, tasks) == per_task(stock.results, tasks)  # a mixed run: lm_eval's tasks' parts
    for task in tasks:
        assert run.samples[task] == stock.samples[task], task
        assert not {"unanswered,none", "cut_answers,none", "truncated,none"} & set(run.results["results"][task])
    rows = table_rows(stock.stdout, tasks)
    assert set(rows) == set(tasks) and table_rows(run.stdout, tasks) == rows
