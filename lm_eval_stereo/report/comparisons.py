"""The report's paired comparisons: model against model on the same items, language against language within a model.

Per-item data comes from ``lm_eval --log_samples``: ``samples_<task>_<timestamp>.jsonl`` beside
``results_<timestamp>.json``; a plugin task logs its whole item under its first metric. Items are matched by their
key (model against model) or by their parallel id across the tasks that are translations of each other, as the tasks
recorded (:meth:`lm_eval_stereo.results.run.Run.language`: one metric set and scoring, different languages; the id
is the key without its ``<lang>/`` prefix). Each headline metric that a benchmark's resampling statistic computes is
compared by :mod:`lm_eval_stereo.report.paired`. A metric set that declares a pairing unit
(:class:`~lm_eval_stereo.core.metrics.PairingUnit`) is compared on those units instead of its items, with that unit's
metrics. Holm's correction runs over all model comparisons shown, and separately over all language comparisons shown.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from math import nan
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS, DEFAULT_SEED
from lm_eval_stereo.core.metrics import MetricSet
from lm_eval_stereo.report.model import Cell, Report
from lm_eval_stereo.report.paired import (
    PERMUTATIONS,
    Comparison,
    NotComparable,
    Paired,
    PairedResult,
    RankCorrelation,
    align,
    compare,
    with_holm,
)
from lm_eval_stereo.report.rankings import rank_correlation
from lm_eval_stereo.results import samples
from lm_eval_stereo.results.run import Run

Items = dict[str, dict[str, Any]]


def samples_path(run: Run, task: str) -> Path:
    """Where lm_eval's ``--log_samples`` put the samples of ``task`` for this results file
    (:func:`lm_eval_stereo.results.samples.samples_path`)."""
    return samples.samples_path(run.path, task)


def _pairing_set(cell: Cell) -> MetricSet | None:
    """The metric set whose declaration says how the cell's items are compared."""
    return cell.declaration.metric_set if cell.declaration else None


class _Source:
    """Items of the report's cells as the run read them (:meth:`Run.logged`), as the declared pairing units where
    the metric set declares them; each missing or unreadable samples file said once."""

    def __init__(self, paired: Paired) -> None:
        self.paired = paired
        self._items: dict[tuple[Path, str], Items | None] = {}
        self._missing: set[Path] = set()

    def items(self, cell: Cell) -> Items | None:
        key = (cell.run.path, cell.task)
        if key not in self._items:
            logged = cell.run.logged(cell.task)
            items = logged.items
            if not logged.exists:
                with_interval = cell.declaration is not None and any(map(cell.declaration.has_interval, cell.values))
                if with_interval and cell.run.path not in self._missing:
                    self._missing.add(cell.run.path)
                    self.paired.without_samples_by_model.setdefault(cell.row.label, []).append(str(cell.run.path))
            elif logged.error is not None:
                self.paired.notes.append(f"{logged.error} (no paired statistics for {cell.row.label} on {cell.task})")
            if logged.skipped:
                self.paired.notes.append(
                    f"{len(logged.skipped)} malformed line(s) of {logged.path} skipped ({'; '.join(logged.skipped[:3])}"
                    f"{'; ...' if len(logged.skipped) > 3 else ''}): {cell.row.label} on {cell.task} compared on "
                    f"its other {len(items or {})} items"
                )
            metric_set = _pairing_set(cell)
            if items and metric_set is not None and metric_set.pairing is not None:
                items = metric_set.pairing.units(items.values())
            self._items[key] = items
        return self._items[key]

    def plan(self, cell_a: Cell, cell_b: Cell) -> tuple[MetricSet, list[str]] | None:
        """The metric set whose resampling statistics compare the two cells' items, and the metrics to compare:
        the headlines both report, or the interval metrics of the declared pairing unit (None: not comparable)."""
        metric_set = _pairing_set(cell_a)
        if metric_set is None:
            return None
        if metric_set.pairing is not None:
            units = metric_set.pairing.metric_set
            return units, [metric.name for metric in units.metrics if metric.has_interval]
        return metric_set, [name for name in cell_a.headlines if name in cell_b.headlines]


def _compare(
    metric_set: MetricSet, names: list[str], items_a: Items, items_b: Items, what: str, paired: Paired
) -> tuple[list[Comparison], int]:
    comparisons: list[Comparison] = []
    left_out = 0
    for resampling in metric_set.resampling:
        try:
            aligned = align(items_a, items_b, resampling)
        except NotComparable as exc:
            paired.notes.append(f"{what}: {exc}")
            continue
        left_out = max(left_out, aligned.left_out)
        comparisons += compare(
            aligned, resampling, names, iters=paired.iters, seed=paired.seed, permutations=paired.permutations
        )
    order = {name: index for index, name in enumerate(names)}
    return sorted(comparisons, key=lambda comparison: order[comparison.metric]), left_out


def _parallel(items: Items, lang: str) -> Items:
    """Items by parallel id: the key without the language's ``<lang>/`` prefix."""
    return {key.removeprefix(f"{lang}/"): item for key, item in items.items()}


def paired_comparisons(
    report: Report, *, iters: int = DEFAULT_ITERS, seed: int = DEFAULT_SEED, permutations: int = PERMUTATIONS
) -> Paired:
    """Model against model on every task, language against language within every model (see the module docstring)."""
    paired = Paired(permutations=permutations, iters=iters, seed=seed)
    source = _Source(paired)
    leaves = [task for task in report.tasks if not any(cell.members for cell in report.task_cells(task))]
    for task in leaves:
        cells = [cell for cell in report.task_cells(task) if source.items(cell)]
        for cell_a, cell_b in combinations(cells, 2):
            plan = source.plan(cell_a, cell_b)
            if plan is None:
                continue
            metric_set, names = plan
            what = f"{task}: {cell_a.row.label} vs {cell_b.row.label}"
            found, left_out = _compare(metric_set, names, source.items(cell_a), source.items(cell_b), what, paired)
            if found:
                paired.models.append(PairedResult(task, "", cell_a.row.label, cell_b.row.label, tuple(found), left_out))
    for row in report.rows:
        families: dict[str, list[tuple[str, Cell]]] = {}
        for task in leaves:
            cell = report.cell(task, row)
            found = cell.run.language(task) if cell is not None else None
            if found is not None and source.items(cell):
                families.setdefault(found[1], []).append((found[0], cell))
        for members in families.values():
            family = _family_name(members)
            unparallel = []
            for (lang_a, cell_a), (lang_b, cell_b) in combinations(members, 2):
                plan = source.plan(cell_a, cell_b) if lang_a != lang_b else None
                if plan is None:
                    continue
                metric_set, names = plan
                items_a, items_b = _parallel(source.items(cell_a), lang_a), _parallel(source.items(cell_b), lang_b)
                what = f"{row.label}: {cell_a.task} vs {cell_b.task}"
                if not set(items_a) & set(items_b):
                    unparallel.append(f"{lang_a}-{lang_b}")
                    continue
                found, left_out = _compare(metric_set, names, items_a, items_b, what, paired)
                if found and set(items_a) != set(items_b):
                    paired.notes.append(_unshared(what, cell_a.task, cell_b.task, items_a, items_b))
                _rank_agreement(metric_set, (lang_a, cell_a), (lang_b, cell_b), items_a, items_b, family, paired)
                if found:
                    paired.languages.append(
                        PairedResult(
                            family, row.label, cell_a.task, cell_b.task, tuple(found), left_out, (lang_a, lang_b)
                        )
                    )
            if unparallel:
                paired.notes.append(
                    f"{row.label}: {_family_tasks(family, members)} share no item ids ({', '.join(unparallel)}): not "
                    "translations of the same items, no language comparison"
                )
    paired.models = _holm(paired.models)
    paired.languages = _holm(paired.languages)
    return paired


def _unshared(what: str, task_a: str, task_b: str, items_a: Items, items_b: Items) -> str:
    """The items of two translations that only one of them has: counted, and left out of their comparison."""
    only_a, only_b = len(set(items_a) - set(items_b)), len(set(items_b) - set(items_a))
    shared = len(set(items_a) & set(items_b))
    return (
        f"{what}: {only_a} items only in {task_a} and {only_b} only in {task_b} (unshared), left out; compared on "
        f"the {shared} both have"
    )


def _rank_agreement(
    metric_set: MetricSet,
    first: tuple[str, Cell],
    second: tuple[str, Cell],
    items_a: Items,
    items_b: Items,
    family: str,
    paired: Paired,
) -> None:
    """The ranking of the language that is not the declared reference against the reference's, when one of the two
    is (:mod:`lm_eval_stereo.report.rankings`)."""
    agreement = metric_set.rank_agreement
    if agreement is None or agreement.reference not in (first[0], second[0]) or first[0] == second[0]:
        return
    if first[0] == agreement.reference:
        first, second, items_a, items_b = second, first, items_b, items_a
    for resampling in metric_set.resampling:
        try:
            aligned = align(items_a, items_b, resampling)
        except NotComparable:
            continue
        if not set(agreement.metrics) <= set(resampling.statistic(aligned.data_a)):
            continue
        rho, units, interval = rank_correlation(aligned, resampling, agreement.metrics, iters=paired.iters,
                                                seed=paired.seed)  # fmt: skip
        low, high, undefined = (interval.low, interval.high, interval.undefined) if interval else (nan, nan, 0)
        paired.rankings.append(
            RankCorrelation(
                family,
                first[1].row.label,
                first[1].task,
                second[1].task,
                (first[0], second[0]),
                rho,
                low,
                high,
                units,
                len(aligned.keys),
                undefined,
            )  # fmt: skip
        )
        return


def _family_name(members: list[tuple[str, Cell]]) -> str:
    """How the report names a family of translations: the task name its members share before ``_<lang>``
    (``stereoset_multi``), else the id of their metric set."""
    stems = {cell.task.removesuffix(f"_{lang}") for lang, cell in members}
    if len(stems) == 1 and all(cell.task.endswith(f"_{lang}") for lang, cell in members):
        return stems.pop()
    metric_set = _pairing_set(members[0][1])
    return metric_set.id if metric_set is not None else members[0][1].task


def _family_tasks(family: str, members: list[tuple[str, Cell]]) -> str:
    """The tasks of a family for a sentence: ``stereoset_multi_<lang> tasks``, else their names."""
    if all(cell.task == f"{family}_{lang}" for lang, cell in members):
        return f"{family}_<lang> tasks"
    return ", ".join(cell.task for _, cell in members)


def _holm(results: list[PairedResult]) -> list[PairedResult]:
    """The results with Holm-adjusted p-values over all their comparisons."""
    flat = with_holm([comparison for result in results for comparison in result.comparisons])
    adjusted, start = [], 0
    for result in results:
        end = start + len(result.comparisons)
        adjusted.append(replace(result, comparisons=tuple(flat[start:end])))
        start = end
    return adjusted
