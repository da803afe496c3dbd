"""Which keys of a task's metadata are model arguments: those the user passed in ``--model_args`` (the ``lm_eval``
command line) or as ``simple_evaluate(model_args=...)``.

lm_eval 0.4.13 merges the model arguments into every task's metadata (``model_args | metadata``), so a task sees one
dict and cannot tell ``--model_args block_size=32`` from a misspelt ``--metadata`` option. The start-up hook's
``simple_evaluate`` (:mod:`lm_eval_stereo.hooks.evaluator`) reads the keys the user passed and holds them here while
the run builds its tasks (:func:`passing`); a plugin task accepts each of them as a model argument and checks only
the rest as its options (:func:`lm_eval_stereo.core.options.parse`). No list of backends' arguments: every argument
of every backend (a vLLM engine argument, an API model's ``api_key``) is accepted because the user gave it as one.

A task built where no hooked ``simple_evaluate`` runs (``TaskManager(metadata=...).load`` in a script, lm_eval with
the start-up hook off and ``--include_path``) cannot tell them apart: :func:`given` is None, and the task refuses only
the keys that are near misses of an option (:func:`lm_eval_stereo.core.options.parse`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from lm_eval_stereo.core.values import parse_model_args

_GIVEN: ContextVar[Mapping[str, str] | None] = ContextVar("lm_eval_stereo_model_arguments", default=None)


def given() -> Mapping[str, str] | None:
    """The model arguments of the run being set up, as text (None: not known, outside a hooked
    ``simple_evaluate``)."""
    return _GIVEN.get()


@contextlib.contextmanager
def passing(model_args: Any) -> Iterator[Mapping[str, str]]:
    """Hold ``model_args`` (a dict, ``k=v,...`` text or JSON text; None: none) as the run's model arguments until
    the block ends."""
    arguments = MappingProxyType(parse_model_args(model_args))
    token = _GIVEN.set(arguments)
    try:
        yield arguments
    finally:
        _GIVEN.reset(token)
