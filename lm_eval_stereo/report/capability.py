"""lm_eval's own tasks in the report: the capability benchmarks (``hellaswag``, ``mmlu``, a local YAML task) that
users run beside the bias benchmarks, read from the same results files.

A task or group is the plugin's when a YAML of the plugin's task folder declares its name (``task:``, ``group:`` or
``tag:``) or the name continues one of the plugin's group names (``stereotype_leakage_de`` of another version of
the plugin: no task of lm_eval 0.4.13 is named so); every other one is lm_eval's own. Its metrics are all its numeric values (``<metric>,<filter>`` keys),
shown as value ± lm_eval's ``<metric>_stderr`` (lm_eval gives no bootstrap CI), with the direction lm_eval wrote in
the results' ``higher_is_better`` (none where it wrote ``null`` or nothing). A group (``mmlu``) is shown as lm_eval
aggregates it; its members and subgroups (``mmlu_stem``, ``mmlu_abstract_algebra``, ...) are left to it and not
shown on their own.
"""

from __future__ import annotations

import re
from functools import cache

from lm_eval_stereo.report.ideals import Ideal
from lm_eval_stereo.report.runs import Run, is_number

#: a name declared by a task YAML: ``task: x``, ``group: x``, ``tag: x`` (also as a list entry ``- task: x``)
_DECLARED = re.compile(r"^\s*(?:-\s*)?(?:task|group|tag):\s*([A-Za-z0-9_.\-]+)\s*$", re.MULTILINE)
_GROUP = re.compile(r"^group:\s*([A-Za-z0-9_.\-]+)\s*$", re.MULTILINE)
#: ``acc[flexible-extract]``: a metric of a second filter, as :meth:`Run.metrics` names it
_FILTER_SUFFIX = re.compile(r"\[[^\]]*\]$")


@cache
def _declared() -> tuple[frozenset[str], tuple[str, ...]]:
    """Every task, group and tag name the plugin's task YAMLs declare, and the group names as ``<group>_`` prefixes."""
    from lm_eval_stereo import tasks_path

    names: set[str] = set()
    prefixes: set[str] = set()
    for path in tasks_path().rglob("*"):
        if path.is_file() and (path.suffix == ".yaml" or path.name.endswith("_yaml")):
            text = path.read_text(encoding="utf-8")
            names.update(_DECLARED.findall(text))
            prefixes.update(f"{group}_" for group in _GROUP.findall(text))
    return frozenset(names), tuple(sorted(prefixes))


def plugin_tasks() -> frozenset[str]:
    """Every task, group and tag name the plugin's task YAMLs declare."""
    return _declared()[0]


def is_lm_eval_task(task: str) -> bool:
    """Whether ``task`` is one of lm_eval's own tasks or groups (or a user's), not a bias benchmark of the plugin."""
    names, prefixes = _declared()
    return task not in names and not task.startswith(prefixes)


def hidden_tasks(run: Run) -> set[str]:
    """lm_eval's tasks and groups of ``run`` that are members (at any depth) of one of lm_eval's groups in it."""
    groups = run.data.get("group_subtasks") or {}
    hidden: set[str] = set()

    def walk(group: str) -> None:
        for member in groups.get(group) or ():
            if is_lm_eval_task(member) and member not in hidden:
                hidden.add(member)
                walk(member)

    for group in groups:
        if is_lm_eval_task(group):
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
