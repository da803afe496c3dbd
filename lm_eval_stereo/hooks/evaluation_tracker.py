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

Every other name is left as lm_eval writes it. Both saves, ``save_results_aggregated`` and ``save_results_samples``,
write their file whole or not at all, and a write that failed ends the run in one line naming the file and the reason
(:mod:`lm_eval_stereo.core.lm_eval_files`; lm_eval logs it and exits 0, half a file left behind). Files inside
``--output_path``, and written whole, are changes the plugin makes to lm_eval's own tasks too; lm_eval 0.4.13 has no
extension point for where and how it writes.
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any

from lm_eval_stereo.core import lm_eval_files

#: a name of dots only, which a path reads as this folder or the one above it
DOTS_ONLY = re.compile(r"\.+")
#: what separates folders in a path, on any system
SEPARATORS = re.compile(r"[/\\]+")


def model_folder_wrapper(original: Any) -> Any:
    """``sanitize_model_name`` whose name of dots only becomes underscores."""

    @functools.wraps(original)
    def sanitize_model_name(*args: Any, **kwargs: Any) -> str:
        name = original(*args, **kwargs)
        return "_" * len(name) if DOTS_ONLY.fullmatch(name) else name

    return sanitize_model_name


def samples_file_wrapper(original: Any) -> Any:
    """``save_results_samples`` whose task name has no path separator, and whose file is written whole or not at all
    (:func:`lm_eval_stereo.core.lm_eval_files.saved_whole`)."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def save_results_samples(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        task_name = SEPARATORS.sub("__", str(bound.arguments["task_name"]))
        bound.arguments["task_name"] = task_name
        return lm_eval_files.saved_whole(
            tracker=bound.arguments["self"],
            save=lambda: original(*bound.args, **bound.kwargs),
            name=lm_eval_files.samples_name(task_name),
            lines=len(bound.arguments["samples"]),
        )

    return save_results_samples


def results_file_wrapper(original: Any) -> Any:
    """``save_results_aggregated`` whose results file is written whole or not at all
    (:func:`lm_eval_stereo.core.lm_eval_files.saved_whole`)."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def save_results_aggregated(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        return lm_eval_files.saved_whole(
            tracker=bound.arguments["self"],
            save=lambda: original(*bound.args, **bound.kwargs),
            name=lm_eval_files.results_name,
            lines=None,
        )

    return save_results_aggregated
