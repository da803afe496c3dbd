"""The tasks no benchmark of the plugin declares, as the report and the export read them: lm_eval's capability
benchmarks (``hellaswag``, ``mmlu``) and a user's local YAML task, run beside the bias benchmarks and read from the same
results files.

A task or group is declared when its results carry a plugin declaration (a task's config metadata names its benchmark
and metric set; one of lm_eval's bias tasks that a benchmark declares, ``bbq`` or ``crows_pairs``, by its lm_eval
name; a group's leaf tasks all are; :mod:`lm_eval_stereo.results.declarations`); every other one is undeclared. Its
metrics are all its numeric values (``<metric>,<filter>`` keys),
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


def is_undeclared_task(run: Run, task: str) -> bool:
    """Whether no benchmark of the plugin declares ``task`` of ``run``: one of lm_eval's capability tasks or groups,
    or a user's own, shown with lm_eval's values and stderrs. lm_eval's bias tasks that a benchmark declares
    (``bbq``, ``crows_pairs``: :class:`~lm_eval_stereo.core.registry.LmEvalTasks`) are lm_eval tasks, but declared
    (:mod:`lm_eval_stereo.results.declarations`)."""
    return run.declaration(task) is None


def hidden_tasks(run: Run) -> set[str]:
    """The undeclared tasks and groups of ``run`` that are members (at any depth) of an undeclared group in it."""
    groups = run.data.get("group_subtasks") or {}
    hidden: set[str] = set()

    def walk(group: str) -> None:
        for member in run.direct_members(group):
            if is_undeclared_task(run, member) and member not in hidden:
                hidden.add(member)
                walk(member)

    for group in groups:
        if is_undeclared_task(run, group):
            walk(group)
    return hidden


def capability_metrics(run: Run, task: str) -> list[str]:
    """The numeric metrics of one of lm_eval's tasks in ``run``, in the results file's order."""
    return [name for name, value in run.values(task).items() if is_number(value)]


def capability_ideal(run: Run, task: str, name: str) -> Ideal | None:
    """``higher``/``lower`` from the results' ``higher_is_better`` for ``task``; None where it says neither."""
    flag = run.higher_is_better(task).get(_FILTER_SUFFIX.sub("", name))
    if isinstance(flag, bool):
        return Ideal("higher" if flag else "lower")
    return None
