"""``lm_eval.tasks.manager``: lm_eval 0.4.13 has no plugin mechanism for tasks; its ``TaskManager`` indexes its own
task folder and the ``include_path`` a caller passes, nothing else. The plugin's tasks must be found by every
``TaskManager`` (``lm_eval run --tasks gest_en``, ``lm_eval ls tasks``, a Python caller of ``simple_evaluate``)
without a flag, so ``TaskManager.__init__`` gets the plugin's task folder put first in ``include_path``
(:func:`task_manager_init`). lm_eval's own tasks are indexed as before.

With ``LM_EVAL_STEREO_ONLY_PLUGIN_TASKS=1`` it indexes the plugin's tasks and ``--include_path`` only, not lm_eval's own
~14,000 task files (start-up about 10 s faster on a 2-core CPU; lm_eval's own tasks are then unknown to that run).
"""

from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Any

#: ``1``: index only the plugin's tasks and ``--include_path`` (``TaskManager(include_defaults=False)``)
ONLY_PLUGIN_TASKS_ENV = "LM_EVAL_STEREO_ONLY_PLUGIN_TASKS"


def _same_path(a: Any, b: Path) -> bool:
    try:
        return Path(a).resolve() == b
    except (TypeError, OSError):
        return False


def task_manager_init(original: Any) -> Any:
    """``TaskManager.__init__`` that indexes the plugin's tasks before any user ``include_path`` (and, with
    :data:`ONLY_PLUGIN_TASKS_ENV` set to ``1``, not lm_eval's own unless the caller asks for them)."""
    from lm_eval_stereo import tasks_path

    signature = inspect.signature(original)
    ours = tasks_path().resolve()

    @functools.wraps(original)
    def __init__(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        given = bound.arguments.get("include_path")
        paths = [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given]
        if not any(_same_path(p, ours) for p in paths):
            bound.arguments["include_path"] = [str(ours), *paths]
        if os.environ.get(ONLY_PLUGIN_TASKS_ENV) == "1" and "include_defaults" not in bound.arguments:
            bound.arguments["include_defaults"] = False
        original(*bound.args, **bound.kwargs)

    return __init__
