"""``make demo``'s task lists come from the benchmarks' declarations (``Benchmark.demo_tasks``, read by
``scripts/demo_tasks.py``): each names tasks of its own folder, of the protocol its run uses."""

from __future__ import annotations

import subprocess
import sys

import pytest
from demo_tasks import demo_tasks
from lm_eval_runner import REPO
from readme_tables import GENERATION, LOGLIKELIHOOD, MASKED, catalogue

from lm_eval_stereo import tasks_path
from lm_eval_stereo.core import registry

#: the protocols each run may use: the tiny model is a causal LM (no masked-LM task); SmolLM2 scores with hf-prefix,
#: then generates with the chat template
PROTOCOLS = {
    "tiny": {LOGLIKELIHOOD, GENERATION},
    "scoring": {LOGLIKELIHOOD},
    "scoring_more": {LOGLIKELIHOOD},
    "generation": {GENERATION},
}


def test_each_benchmark_names_its_own_tasks_of_the_runs_protocol() -> None:
    assert set(PROTOCOLS) == set(registry.DEMO_RUNS)
    for bench in registry.benchmarks():
        tasks = catalogue(tasks_path() / bench.name)
        for run, names in bench.demo_tasks.items():
            for name in names:
                assert bench.owns(name) and tasks.leaves(name), (bench.name, name)
                assert set(tasks.protocols([name])) <= PROTOCOLS[run], (bench.name, run, name)
        causal = set(tasks.protocols()) - {MASKED}
        assert bool(bench.demo_tasks.get("tiny")) == bool(causal), f"{bench.name}: the tiny run covers it"


def test_the_makefile_reads_the_lists_from_the_script() -> None:
    proc = subprocess.run(
        [sys.executable, "scripts/demo_tasks.py", "tiny"], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert proc.returncode == 0 and proc.stdout.strip().split(",") == demo_tasks("tiny")
    assert demo_tasks("tiny")[0] == registry.benchmarks()[0].demo_tasks["tiny"][0]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    for variable, run in (("TINY_TASKS", "tiny"), ("DEMO_TASKS", "scoring"), ("DEMO_GEN_TASKS", "generation")):
        assert f"{variable} ?= $(call DEMO_TASKS_OF,{run})" in makefile
    with pytest.raises(ValueError, match="demo_tasks of unknown runs"):
        registry.Benchmark("x", "X", (), (), {}, (), demo_tasks={"warm-up": ("x",)})
