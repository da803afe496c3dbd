"""lm_eval's own tasks, as the report and the export read them: the capability benchmarks (``hellaswag``, ``mmlu``, a
local YAML task) that users run beside the bias benchmarks, read from the same results files.

A task or group is the plugin's when its results carry a plugin declaration (a task's config metadata names its
benchmark and metric set; a group's leaf tasks all do; :mod:`lm_eval_stereo.results.declarations`); every other one
is lm_eval's own. Its metrics are all its numeric values (``<metric>,<filter>`` keys),
shown as value ± lm_eval's ``<metric>_stderr`` (lm_eval gives no bootstrap CI), with the direction lm_eval wrote in
the results' ``higher_is_better`` (none where it wrote ``null`` or nothing). A group (``mmlu``) is shown as lm_eval
aggregates it; its members and subgroups (``mmlu_stem``, ``mmlu_abstract_algebra``, ...) are left to it and not
shown on their own.
"""

from __future__ import annotations

import re

from lm_eval_stereo.results.ideals import Ideal
from lm_eval_stereo.results.run import Run, is_number

#: ``acc[flexible-extract]``: a metric of a second filter, as :meth:`Run.metrics` names it
_FILTER_SUFFIX = re.compile(r"\[[^\]]*\]$")


def is_lm_eval_task(run: Run, task: str) -> bool:
    """Whether ``task`` of ``run`` is one of lm_eval's own tasks or groups (or a user's), not a bias benchmark of the
    plugin: no plugin task recorded a declaration for it (:mod:`lm_eval_stereo.results.declarations`)."""
    return run.declaration(task) is None


def hidden_tasks(run: Run) -> set[str]:
    """lm_eval's tasks and groups of ``run`` that are members (at any depth) of one of lm_eval's groups in it."""
    groups = run.data.get("group_subtasks") or {}
    hidden: set[str] = set()

    def walk(group: str) -> None:
        for member in groups.get(group) or ():
            if is_lm_eval_task(run, member) and member not in hidden:
                hidden.add(member)
                walk(member)

    for group in groups:
        if is_lm_eval_task(run, group):
            walk(group)
    return hidden


def capability_metrics(run: Run, task: str) -> list[str]:
    """The numeric metrics of one of lm_eval's tasks in ``run``, in the results file's order."""
    return [name for name, value in run.values(task).items() if is_number(value)]


def capability_ideal(run: Run, task: str, name: str) -> Ideal | None:
    """``higher``/``lower`` from the results' ``higher_is_better`` for ``task``; None where it says neither."""
    flags = (run.data.get("higher_is_better") or {}).get(task) or {}
    flag = flags.get(_FILTER_SUFFIX.sub("", name)) if isinstance(flags, dict) else None
    if isinstance(flag, bool):
        return Ideal("higher" if flag else "lower")
    return None
