"""The two tiers of the suite: ``make test`` runs both, ``make test-quick`` the quick one (``-m "not engine"`` with
``LM_EVAL_TESTS_TIER=quick``).

The ``engine`` tier is every test that starts a model server (``vllm serve``, ``transformers serve``, the load
balancer: :mod:`model_server`), a vLLM engine (the vLLM venv's ``lm_eval``), or an ``lm_eval`` run of a real
pretrained model (a folder under ``.cache/real-models``: :func:`lm_eval_runner.lm_eval_command`). Each of these
places calls :func:`starting`: in the quick tier a test that reaches one without the marker fails, naming what it
started and the marker it lacks, so a new engine test cannot slip into the inner loop unnoticed.
"""

from __future__ import annotations

import os

import pytest

#: the marker of the engine tier (registered in ``conftest.py``)
ENGINE = "engine"
#: ``quick`` while ``make test-quick`` runs
TIER_ENV = "LM_EVAL_TESTS_TIER"


def starting(what: str) -> None:
    """Where a test starts an engine or a server: in the quick tier, fail the test (it lacks the marker)."""
    if os.environ.get(TIER_ENV) == "quick":
        pytest.fail(
            f"{what} started in the quick tier: mark the test `@pytest.mark.{ENGINE}` "
            f"(or its file `pytestmark = pytest.mark.{ENGINE}`): make test-quick starts no engine or server",
            pytrace=False,
        )
