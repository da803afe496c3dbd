"""``lm_eval.loggers.evaluation_tracker``: lm_eval 0.4.13 writes a run's results and samples into
``--output_path/<model name>/``, the model name as the model arguments give it (``pretrained=``, a served model's
``model=``) with ``/`` and a few other characters replaced (``sanitize_model_name``), and each task's samples into
``samples_<task name>_<date>.jsonl``, the task name as its YAML gives it. A model named ``..`` (``model=..`` of a
served model, ``pretrained=..``) writes its files one folder above ``--output_path``; a task named ``a/../../x``
anywhere a path can reach.

- ``sanitize_model_name`` (the name this module calls): a name made of dots only (``.``, ``..``) becomes as many
  underscores, a folder inside ``--output_path``;
- ``EvaluationTracker.save_results_samples``: a ``/`` or ``\\`` in a task's name becomes ``__`` (as
  ``sanitize_model_name`` writes it) in the samples file's name, a file inside the run's folder.

Every other name is left as lm_eval writes it.
"""

from __future__ import annotations

import functools
import re
from types import ModuleType
from typing import Any

from lm_eval_stereo.hooks import wrap

#: a name of dots only, which a path reads as this folder or the one above it
DOTS_ONLY = re.compile(r"\.+")
#: what separates folders in a path, on any system
SEPARATORS = re.compile(r"[/\\]+")


def model_folder_wrapper(original: Any) -> Any:
    """``sanitize_model_name`` whose name of dots only becomes underscores."""

    @functools.wraps(original)
    def sanitize_model_name(model_name: str) -> str:
        name = original(model_name)
        return "_" * len(name) if DOTS_ONLY.fullmatch(name) else name

    sanitize_model_name._lm_eval_stereo = True  # type: ignore[attr-defined]
    return sanitize_model_name


def samples_file_wrapper(original: Any) -> Any:
    """``save_results_samples`` whose task name has no path separator."""

    @functools.wraps(original)
    def save_results_samples(self: Any, task_name: str, samples: Any) -> Any:
        return original(self, SEPARATORS.sub("__", str(task_name)), samples)

    save_results_samples._lm_eval_stereo = True  # type: ignore[attr-defined]
    return save_results_samples


def install(module: ModuleType) -> None:
    """Keep every file of a run inside ``--output_path``, whatever the model's and the tasks' names."""
    wrap(module, "sanitize_model_name", model_folder_wrapper)
    wrap(module.EvaluationTracker, "save_results_samples", samples_file_wrapper)
