"""Names for a person: a task as its benchmark and language ("StereoSet de"), a headline as the task and the metric's
declared label ("StereoSet de · SS"); the task id goes with them wherever they are shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lm_eval_stereo.report.model import Cell


def language(cell: Cell) -> str:
    """The task's language as it recorded it (:meth:`~lm_eval_stereo.results.run.Run.language`) where its benchmark
    has several; empty otherwise."""
    bench = cell.declaration.benchmark if cell.declaration else None
    found = cell.run.language(cell.task)
    return found[0] if found is not None and bench is not None and len(bench.languages) > 1 else ""


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
