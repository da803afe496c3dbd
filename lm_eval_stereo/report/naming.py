"""How the report names things for a person: models (their row labels) and tasks and headlines (their titles).

The row label of each model: its name for a person (:func:`~lm_eval_stereo.results.model_names.model_name`, or the
user's ``--label PRETRAINED=NAME``), told apart where two models would share one.

Two local folders with the same folder name are told apart by as many parent folders as it takes
(``a/smollm2``, ``b/smollm2``); runs of one ``pretrained`` with other arguments by the arguments that differ
(``smollm2 (dtype=float16)``, ``smollm2 (dtype default (float32))`` for the run that passed none). The full
``model_args`` appear in the provenance only.

Names for a person: a task as its benchmark and language ("StereoSet de"), a headline as the task and the metric's
declared label ("StereoSet de · SS"); the task id goes with them wherever they are shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from lm_eval_stereo.results.model_names import is_local_path, model_name
from lm_eval_stereo.results.run import ReportError, Run

if TYPE_CHECKING:
    from lm_eval_stereo.report.model import Cell


def parse_labels(entries: list[str]) -> dict[str, str]:
    """``--label PRETRAINED=NAME`` entries as ``{pretrained: name}``; ReportError for an entry without a name."""
    labels = {}
    for entry in entries:
        pretrained, equals, name = entry.rpartition("=")
        if not equals or not pretrained.strip() or not name.strip():
            raise ReportError(f"--label {entry!r}: expected PRETRAINED=NAME")
        labels[pretrained.strip()] = name.strip()
    return labels


def _pretrained(run: Run) -> str:
    return run.model_args.get("pretrained") or run.identity


def _path_suffixes(pretrained: list[str]) -> dict[str, str] | None:
    """The shortest trailing folders that tell local paths apart (None unless there are several, all local)."""
    if len(pretrained) < 2 or not all(map(is_local_path, pretrained)):
        return None
    parts = {path: PurePosixPath(path.rstrip("/")).parts for path in pretrained}
    for depth in range(2, max(map(len, parts.values())) + 1):
        names = {path: "/".join(found[-depth:]) for path, found in parts.items()}
        if len(set(names.values())) == len(names):
            return names
    return None


def _by_arguments(runs: list[Run], name: str) -> dict[str, str]:
    """``name (key=value, ...)`` with the backend and arguments that are not the same in every run."""
    entries = {run.identity: {"model": run.model, **run.model_args} for run in runs}
    keys = dict.fromkeys(key for entry in entries.values() for key in entry)
    varying = [key for key in keys if len({entry.get(key) for entry in entries.values()}) > 1]
    labels = {}
    runs_by_identity = {run.identity: run for run in runs}
    for identity, entry in entries.items():
        differing = ", ".join(_argument(runs_by_identity[identity], key, entry.get(key)) for key in varying)
        labels[identity] = f"{name} ({differing})"
    return labels


def _argument(run: Run, key: str, value: object) -> str:
    """``key=value``; an argument the run did not pass as its default: ``dtype default (float32)`` where lm_eval
    recorded the dtype the weights were loaded in (``config.model_dtype``), else ``key default``."""
    if value is not None:
        return f"{key}={value}"
    loaded = run.number_facts.get("model_dtype")
    if key in ("dtype", "torch_dtype") and loaded:
        return f"{key} default ({loaded.removeprefix('torch.')})"
    return f"{key} default"


def _shared(labels: Mapping[str, str]) -> set[str]:
    """The labels that more than one identity has."""
    values = list(labels.values())
    return {label for label in values if values.count(label) > 1}


def model_labels(runs: list[Run], overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """A unique label per model identity (see the module docstring); ReportError for an override that names no
    model of the results."""
    overrides = dict(overrides or {})
    by_identity = {run.identity: run for run in runs}
    unknown = sorted(set(overrides) - {_pretrained(run) for run in runs})
    if unknown:
        known = ", ".join(sorted({_pretrained(run) for run in runs}))
        raise ReportError(f"--label {unknown[0]}=...: no model with pretrained={unknown[0]} in the results ({known})")
    names = {
        identity: overrides.get(_pretrained(run)) or model_name(_pretrained(run))
        for identity, run in by_identity.items()
    }
    labels = dict(names)
    for name in _shared(names):
        clash = [identity for identity, other in names.items() if other == name]
        paths = _path_suffixes(sorted({_pretrained(by_identity[identity]) for identity in clash}))
        if paths is not None:
            labels.update({identity: paths[_pretrained(by_identity[identity])] for identity in clash})
    for label in _shared(labels):
        clash = [by_identity[identity] for identity, other in labels.items() if other == label]
        labels.update(_by_arguments(clash, label))
    shared = _shared(labels)
    return {identity: f"{label} ({identity})" if label in shared else label for identity, label in labels.items()}


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
    return metric.title if metric is not None else name


def headline_title(cell: Cell, name: str) -> str:
    """ "StereoSet de · SS"."""
    return f"{task_title(cell)} · {metric_title(cell, name)}"
