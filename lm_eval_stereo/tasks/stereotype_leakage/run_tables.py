"""The stereotype-leakage association tables of lm_eval runs, read as the report reads runs.

Runs are the ``results_*.json`` files below the given paths (:mod:`lm_eval_stereo.results.run`); a task is a
leakage task when its results declare this benchmark's regression metric set (older results files: through the
report's name fallback), whatever it is called. Per task the newest
run that logged its samples (``--log_samples``) is taken: newest by lm_eval's ``date`` (the file's modification time
when it has none), ties broken by path, a newer run replacing an older one, as ``lm-eval-stereo report`` picks runs.
Each task's 32 x 30 table (mean over templates) is rebuilt from the ``n_leaks`` items of its samples file. The tables of
one task must come from one model: runs of several models for the same task are an error, not a silent choice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lm_eval_stereo.results.files import UnreadableJson, parse
from lm_eval_stereo.results.run import ReportError, Run, load_run, results_files
from lm_eval_stereo.results.samples import samples_path
from lm_eval_stereo.tasks.stereotype_leakage import metrics
from lm_eval_stereo.tasks.stereotype_leakage.across_runs import RunTable

#: the metric set whose tasks hold an association table (the regression of Eq. 1)
BENCHMARK = "stereotype_leakage"
REGRESSION = f"{BENCHMARK}.regression"


class LeakageInputError(ValueError):
    """The given folders hold no usable stereotype-leakage results."""


def read_tables(*paths: str | Path) -> list[RunTable]:
    """The association tables of the leakage tasks (:data:`REGRESSION`) logged below ``paths``, one per task."""
    where = ", ".join(map(str, paths))
    newest: dict[str, dict[str, tuple[Run, Path]]] = {}  # task -> model -> (run, samples file)
    ran = False
    for run in _runs(paths):  # oldest first: a newer run replaces an older one
        for task in (task for task in run.tasks if _is_regression(run, task)):
            ran = True
            samples = samples_path(run.path, task)
            if samples.is_file():
                newest.setdefault(task, {})[run.identity] = (run, samples)
    if not newest:
        hint = "; rerun lm_eval with --log_samples" if ran else ""
        raise LeakageInputError(f"no logged samples of stereotype-leakage regression tasks below {where}{hint}")
    tables = []
    for task, by_model in sorted(newest.items()):
        if len(by_model) > 1:
            raise LeakageInputError(
                f"{task} was run with {len(by_model)} models below {where} ({'; '.join(sorted(by_model))}): give the "
                "runs of one model (the monolingual model's with --mono)"
            )
        ((run, samples),) = by_model.values()
        cells = [cell for item in _logged_leaks(samples) for cell in metrics.item_cells(item)]
        found = run.language(task)
        if found is None:
            raise LeakageInputError(f"{run.path}: {task} records no target language (a task of one language is due)")
        lang = found[0]
        family = task.removesuffix(f"_{lang}")
        score = run.values(task).get("score")
        tables.append(
            RunTable(task, family, lang, "" if score is None else str(score), metrics.association_table(cells))
        )
    return tables


def _is_regression(run: Run, task: str) -> bool:
    """Whether ``task`` of ``run`` is a leakage task (not a group): its declared metric set is :data:`REGRESSION`, or
    (a results file of older days that reports no metric) this benchmark's task of an undetermined metric set."""
    declaration = run.declaration(task) if not run.members(task) else None
    if declaration is None or declaration.benchmark is None or declaration.benchmark.name != BENCHMARK:
        return False
    metric_set = declaration.metric_set
    return metric_set is None or metric_set.id == REGRESSION


def _runs(paths: tuple[str | Path, ...]) -> list[Run]:
    """Every results file below ``paths``, oldest first; :class:`LeakageInputError` naming an unreadable one (it may be
    the newest run of a task, which must not silently give way to an older one)."""
    try:
        runs = [load_run(path) for path in results_files(list(paths))]
    except ReportError as exc:
        raise LeakageInputError(str(exc)) from None
    return sorted(runs, key=lambda run: (run.date, str(run.path)))


def _logged_leaks(path: Path) -> list[Any]:
    """The ``n_leaks`` field of every logged sample; :class:`LeakageInputError` naming the file and line."""
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LeakageInputError(f"{path}: not a readable samples file ({exc})") from None
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            items.append(parse(line)["n_leaks"])
        except (UnreadableJson, TypeError, KeyError) as exc:
            problem = "no 'n_leaks' field" if isinstance(exc, (KeyError, TypeError)) else f"invalid JSON ({exc})"
            raise LeakageInputError(f"{path}, line {number}: {problem}") from None
    return items
