"""Every benchmark of the registry scores the same whatever the batch size: its tasks of ``make demo`` (its declaration's
``demo_tasks``: the SmolLM2 demo's one-language tasks, else the tiny demo's, :func:`demo_tasks`) through ``lm_eval`` on
the tiny seeded model, their first :data:`DOCS` documents, once with batch size 1 and once with :data:`BATCH`,
generation greedy (``--gen_kwargs do_sample=False``). Per benchmark: every request's answer (log-likelihoods within
:data:`TOLERANCE`, greedy flags and texts equal), every item score and every metric (within :data:`TOLERANCE`, NaN
where NaN).

One pair of runs for all benchmarks, parametrised over the registry (a new benchmark is checked from its own
declaration); the masked-LM backend's own batching is checked on its requests in ``tests/backends/test_masked_lm.py``, and
data parallelism in ``tests/backends/test_data_parallel.py``.
"""

from __future__ import annotations

import fnmatch
import math
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval

import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
from lm_eval_stereo.core.registry import benchmarks

#: documents per task
DOCS = 2
#: the larger batch size (the runs' items share batches with others, padded to the longest)
BATCH = 8
#: largest difference allowed between the two runs' numbers (float32: padding changes the order of the sums; 1e-6
#: was the largest seen)
TOLERANCE = 1e-4
#: benchmarks that declare no task for the demo: lm_eval's own bias tasks (their scoring is lm_eval's)
WITHOUT_TINY_TASKS = ("lm_eval_bias",)
#: the SmolLM2 demo's runs, whose tasks are one language each (the tiny demo's are whole groups)
ONE_LANGUAGE_RUNS = ("scoring", "scoring_more", "generation")


def demo_tasks(bench) -> list[str]:
    """A benchmark's tasks here: those of the SmolLM2 demo's runs, else those of the tiny demo."""
    tasks = [task for run in ONE_LANGUAGE_RUNS for task in bench.demo_tasks.get(run, ())]
    return list(dict.fromkeys(tasks or bench.demo_tasks.get("tiny", ())))


def all_tasks() -> list[str]:
    return list(dict.fromkeys(task for bench in benchmarks() for task in demo_tasks(bench)))


@pytest.fixture(scope="module")
def batch_runs(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[int, LmEvalRun]:
    """Batch size -> the run of every benchmark's tiny tasks."""
    runs = {}
    for batch_size in (1, BATCH):
        args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal}", "--tasks", ",".join(all_tasks())]
        args += ["--limit", str(DOCS), "--batch_size", str(batch_size), "--log_samples"]
        args += ["--gen_kwargs", "do_sample=False,max_gen_toks=8"]
        runs[batch_size] = run_lm_eval(args, tmp_path_factory.mktemp(f"batch_{batch_size}"))
    return runs


def number(value) -> float | None:
    """``value`` as a number (a log-likelihood is logged as text), None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def close(one, two) -> bool:
    """Numbers within :data:`TOLERANCE` (NaN where NaN), containers element by element, the rest equal."""
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(close(one[k], two[k]) for k in one)
    if isinstance(one, (list, tuple)) and isinstance(two, (list, tuple)):
        return len(one) == len(two) and all(close(a, b) for a, b in zip(one, two))
    first, second = number(one), number(two)
    if one == two or first is None or second is None:
        return one == two
    return (math.isnan(first) and math.isnan(second)) or abs(first - second) <= TOLERANCE


def test_every_benchmark_but_lm_eval_s_own_is_checked():
    without = sorted(bench.name for bench in benchmarks() if not bench.demo_tasks.get("tiny"))
    assert without == sorted(WITHOUT_TINY_TASKS)


@pytest.mark.parametrize("benchmark", sorted(b.name for b in benchmarks() if b.name not in WITHOUT_TINY_TASKS))
def test_a_benchmarks_answers_item_scores_and_metrics_do_not_depend_on_the_batch_size(batch_runs, benchmark):
    (bench,) = (b for b in benchmarks() if b.name == benchmark)
    single, batched = batch_runs[1], batch_runs[BATCH]
    tasks = sorted(t for t in single.samples if any(fnmatch.fnmatch(t, p) for p in bench.task_patterns))
    assert tasks and tasks == sorted(t for t in batched.samples if t in tasks), (benchmark, tasks)
    compared = 0
    for task in tasks:
        ones = {s["doc_id"]: s for s in single.samples[task]}
        many = {s["doc_id"]: s for s in batched.samples[task]}
        assert ones.keys() == many.keys() and len(ones) == DOCS, task
        for doc, sample in ones.items():
            assert close(sample["resps"], many[doc]["resps"]), (task, doc, sample["resps"], many[doc]["resps"])
            for name in sample["metrics"]:
                assert close(sample[name], many[doc][name]), (task, doc, name)
            compared += 1
        one, two = single.results["results"][task], batched.results["results"][task]
        assert one.keys() == two.keys(), task
        assert all(close(one[key], two[key]) for key in one), task
    assert compared >= DOCS * len(tasks)
