"""Collect the lm_eval runs below some paths into a :class:`~lm_eval_stereo.report.model.Report`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from lm_eval_stereo.core.bootstrap import DEFAULT_SEED
from lm_eval_stereo.report.checks import check
from lm_eval_stereo.report.comparisons import paired_comparisons
from lm_eval_stereo.report.model import Cell, Report, Row
from lm_eval_stereo.report.naming import model_labels
from lm_eval_stereo.report.paired import PERMUTATIONS
from lm_eval_stereo.results.declarations import undeclared_held
from lm_eval_stereo.results.lm_eval_tasks import hidden_tasks
from lm_eval_stereo.results.run import Finding, Run, load_runs
from lm_eval_stereo.results.selection import RunSelection, select_runs


def _labels(selection: RunSelection, all_runs: bool, overrides: Mapping[str, str] | None) -> dict[str, str]:
    """A unique row label per row key: the model's name (:func:`~lm_eval_stereo.report.naming.model_labels`), then the
    recorded facts that tell its runs apart (``[model_dtype=torch.bfloat16]``, :meth:`RunSelection.apart`), with
    ``all_runs`` followed by the run's date and file."""
    names = model_labels(selection.runs, overrides)
    labels = {}
    for run in selection.runs:
        apart = selection.apart(run)
        label = names[run.identity] + (f" [{apart}]" if apart else "")
        if all_runs:
            label += f" @ {datetime.fromtimestamp(run.date):%Y-%m-%d %H:%M:%S} ({run.path.name})"
        labels[_row_key(run, all_runs, selection)] = label
    return labels


def _row_key(run: Run, all_runs: bool, selection: RunSelection) -> str:
    key = selection.key(run)
    return f"{key} @ {run.path}" if all_runs else key


def _visible_tasks(run: Run) -> list[str]:
    """The tasks of a run the report shows: all but the members of lm_eval's own groups (left to their group)."""
    hidden = hidden_tasks(run)
    return [task for task in run.tasks if task not in hidden]


def build_report(
    paths: list[str | Path],
    all_runs: bool = False,
    *,
    paired: bool = True,
    seed: int = DEFAULT_SEED,
    permutations: int = PERMUTATIONS,
    labels: Mapping[str, str] | None = None,
) -> Report:
    """Collect the runs below ``paths`` and pick, per model and task, the newest run (every run with ``all_runs``);
    with ``paired``, compare models and languages on their matched items (runs logged with ``--log_samples``).
    The members of lm_eval's own groups (``mmlu_stem``, ...) are left to their group; ``labels`` names models by
    their ``pretrained`` argument (``--label``)."""
    runs, skipped = load_runs(paths)
    selection = select_runs(runs, all_runs, _visible_tasks)
    row_labels = _labels(selection, all_runs, labels)
    rows: dict[str, Row] = {}
    for run in selection.runs:  # a row per model (per run with all_runs), named after its oldest run
        key = _row_key(run, all_runs, selection)
        rows.setdefault(key, Row(key, row_labels[key], run.model, run.model_args))
    cells: dict[tuple[str, str], Cell] = {}
    for run, tasks in selection.chosen:
        row = rows[_row_key(run, all_runs, selection)]
        for task in tasks:
            cells[(task, row.key)] = Cell(task, row, run)
    _link_other_tasks(cells)
    ordered = sorted(rows.values(), key=lambda row: row.label)
    report = Report(ordered, sorted({task for task, _ in cells}), cells, selection.runs, skipped)
    report.warnings += selection.warnings
    if all(report.is_undeclared_task(task) for task in report.tasks):
        report.warnings.append(_no_bias_benchmark(report))
    report.warnings += check(report)
    if paired:
        report.paired = paired_comparisons(report, seed=seed, permutations=permutations)
    return report


def _link_other_tasks(cells: Mapping[tuple[str, str], Cell]) -> None:
    """Give every cell its row's other cells (values and config), for the figures a declaration shows beside a
    headline from a companion task (MBBQ's control set beside its bias set), when the tasks ran in separate calls."""
    by_row: dict[str, dict[str, Cell]] = {}
    for (task, key), cell in cells.items():
        by_row.setdefault(key, {})[task] = cell
    for (task, key), cell in cells.items():
        cell.other_tasks = {
            other: (companion.values, companion.run.task_config(other))
            for other, companion in by_row[key].items()
            if other != task
        }


def _no_bias_benchmark(report: Report) -> Finding:
    """Said first when the results hold no task of the plugin: only lm_eval's own tasks (or none) are reported, or
    why a plugin benchmark's tasks were read as lm_eval's own (:func:`undeclared_held`)."""
    held = undeclared_held((cell.run, cell.task) for cell in report.cells.values())
    message = f"no bias benchmark of lm-eval-stereo in these {len(report.runs)} results file(s): they hold {held}"
    return Finding("", "", "no bias benchmark", message)
