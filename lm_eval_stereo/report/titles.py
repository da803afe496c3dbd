"""Names for a person: a task as its benchmark and language ("StereoSet de"), a headline as the task and the metric's
declared label ("StereoSet de · SS"); the task id goes with them wherever they are shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lm_eval_stereo.report.model import Cell


def language(cell: Cell) -> str:
    """The task's language: its config's ``dataset_kwargs`` (``lang``/``language``), else the task id's last part
    where the benchmark declares that language; empty when neither says."""
    config = ((cell.run.data.get("configs") or {}).get(cell.task)) or {}
    kwargs = config.get("dataset_kwargs") or {}
    found = kwargs.get("lang") or kwargs.get("language") if isinstance(kwargs, dict) else None
    if isinstance(found, str):
        return found
    bench = cell.declaration.benchmark if cell.declaration else None
    suffix = cell.task.rsplit("_", 1)[-1]
    return suffix if bench is not None and suffix in bench.languages else ""


def task_title(cell: Cell) -> str:
    """ "StereoSet de": the benchmark's title and the task's language; the task id for lm_eval's own tasks."""
    bench = cell.declaration.benchmark if cell.declaration else None
    if bench is None:
        return cell.task
    return f"{bench.title} {language(cell)}".strip()


def metric_title(cell: Cell, name: str) -> str:
    """The metric's declared label ("SS"), else its name."""
    metric = cell.declaration.metric(name) if cell.declaration else None
    return metric.title if metric is not None and metric.name == name else name


def headline_title(cell: Cell, name: str) -> str:
    """ "StereoSet de · SS"."""
    return f"{task_title(cell)} · {metric_title(cell, name)}"
