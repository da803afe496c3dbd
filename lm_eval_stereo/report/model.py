"""What the report is made of: rows (models), cells (one model's results for one task or group) and estimates.

A cell's headline metrics are those its declaration gives an interval (:meth:`Declaration.has_interval`; detail views
among them are shown with the benchmark's details), never found by name; a group's counts are totals over its members
and its shares those of the pooled items.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lm_eval_stereo.core.metrics import BOOKKEEPING
from lm_eval_stereo.results.declarations import Declaration
from lm_eval_stereo.results.ideals import Ideal
from lm_eval_stereo.results.lm_eval_tasks import capability_ideal, capability_metrics
from lm_eval_stereo.results.provenance import Provenance, provenance
from lm_eval_stereo.results.run import Finding, Run, is_number

if TYPE_CHECKING:
    from lm_eval_stereo.report.paired import Paired


@dataclass(frozen=True)
class Estimate:
    """A metric's value with its 95% CI and lm_eval's stderr, each None when the results have none; ``undefined``:
    the bootstrap resamples on which the metric was undefined and which its CI leaves out (None where the results
    do not record it: another kind of interval, or results written before it was recorded)."""

    value: Any
    low: float | None = None
    high: float | None = None
    stderr: float | None = None
    undefined: int | None = None


@dataclass(frozen=True)
class Row:
    """One row of every table: a model, or with ``all_runs`` one run of a model."""

    key: str
    label: str
    model: str
    model_args: dict[str, str]


@dataclass
class Cell:
    """One row's results for one task or group, all from one run."""

    task: str
    row: Row
    run: Run
    values: dict[str, Any] = field(init=False)
    members: tuple[str, ...] = field(init=False)
    #: the benchmark and metric sets that computed the cell (:mod:`lm_eval_stereo.results.declarations`)
    declaration: Declaration | None = field(init=False)
    #: the row's other cells, ``{task: (values, config)}``, whichever results file holds them (set by the report)
    other_tasks: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.values = self.run.values(self.task)
        self.members = self.run.members(self.task)
        self.declaration = self.run.declaration(self.task)

    @property
    def undeclared(self) -> bool:
        """Whether no benchmark of the plugin declares the cell's task or group (lm_eval's capability tasks, a user's
        own YAML task): shown with lm_eval's values and stderrs. lm_eval's bias tasks that a benchmark declares
        (``bbq``, ``crows_pairs``) are declared."""
        return self.declaration is None

    @property
    def headlines(self) -> list[str]:
        """The headline metrics (:func:`_headlines`); for a group, those of its members that the group aggregates;
        for one of lm_eval's own tasks or groups, its numeric metrics."""
        if self.undeclared:
            return capability_metrics(self.run, self.task)
        if self.members:
            names: dict[str, None] = {}
            for member in self.members:
                names.update(dict.fromkeys(_headlines(self.run.values(member), self.declaration)))
            return [name for name in names if name in self.values]
        return _headlines(self.values, self.declaration)

    @property
    def primary(self) -> str | None:
        """The headline the report's first screen shows: the one its metric set declares primary where the results
        hold it, else the first headline that is not a detail view; None for lm_eval's own tasks and groups."""
        if self.declaration is None or self.members:
            return None
        declared = self.declaration.primary
        if declared is not None and declared in self.values:
            return declared
        return next((name for name in self.headlines if not self.is_detail(name)), None)

    def ideal(self, name: str) -> Ideal | None:
        """How ``name`` is best: the benchmark's declaration, for lm_eval's own tasks the results' higher_is_better."""
        if self.declaration is None:
            return capability_ideal(self.run, self.task, name)
        return self.declaration.ideal(name)

    def is_detail(self, name: str) -> bool:
        """Whether the benchmark declares ``name`` a view of a headline (shown in the details, not the summary)."""
        return self.declaration is not None and self.declaration.is_detail(name)

    def companion_figure(self, name: str) -> tuple[str, float] | None:
        """The figure the declaration shows next to metric ``name`` (label, value), None where there is none (GerBBQ+
        accuracy: the accuracy over determinate answers); one that reads other tasks also gets the row's other cells
        (:attr:`other_tasks`: the same model's other results, from this results file or another)."""
        metric = self.declaration.metric(name) if self.declaration else None
        if metric is None or metric.companion_figure is None:
            return None
        config = self.run.task_config(self.task)
        figure = metric.companion_figure
        if figure.reads_other_tasks:
            value = figure.compute(self.values, config, self.other_tasks)
        else:
            value = figure.compute(self.values, config)
        return None if value is None or not math.isfinite(value) else (figure.label, value)

    def estimate(self, name: str) -> Estimate:
        """Value, CI and stderr of one metric (a group has no CI: a mean of interval bounds is not an interval); the CI
        is read where the declaration gives the metric one."""
        bounds = self.declaration.interval_names(name) if self.declaration else None
        low, high = (self.values.get(bounds[0]), self.values.get(bounds[1])) if bounds else (None, None)
        counted = self.declaration.undefined_name(name) if self.declaration and not self.members else None
        undefined = self.values.get(counted) if counted else None
        if undefined is not None and not is_number(undefined):  # the resamples the CI rests on are unknown: no CI
            low = high = None
        return Estimate(
            self.values.get(name),
            float(low) if is_number(low) else None,
            float(high) if is_number(high) else None,
            self.run.stderr(self.task, name),
            int(undefined) if is_number(undefined) and math.isfinite(undefined) else None,
        )

    def provenance(self, name: str) -> Provenance:
        """Who computed metric ``name`` of the cell and its interval (:mod:`lm_eval_stereo.results.provenance`)."""
        return provenance(self.run, self.task, name)

    @property
    def document_counts(self) -> tuple[int, int] | None:
        """(effective, original) documents of the cell (:meth:`Run.document_counts`)."""
        return self.run.document_counts(self.task)

    @property
    def counts(self) -> dict[str, float]:
        """Bookkeeping counts and shares; for a group, totals (and pooled shares) over its members."""
        if not self.members:
            names = [entry.name for entry in BOOKKEEPING]
            return {name: self.values[name] for name in names if is_number(self.values.get(name))}
        members = [self.run.values(member) for member in self.members]
        weights = [_weight(values, self.run.document_counts(member)) for values, member in zip(members, self.members)]
        counts: dict[str, float] = {}
        for name in (entry.name for entry in BOOKKEEPING if entry.pooling == "sum"):
            present = [values[name] for values in members if is_number(values.get(name))]
            if present:
                counts[name] = sum(value for value in present if not math.isnan(value))
        for name in (entry.name for entry in BOOKKEEPING if entry.pooling == "share"):
            pairs = [(values[name], w) for values, w in zip(members, weights) if is_number(values.get(name))]
            pairs = [(share, w) for share, w in pairs if not math.isnan(share)]
            if pairs and sum(w for _, w in pairs) > 0:
                counts[name] = sum(share * w for share, w in pairs) / sum(w for _, w in pairs)
        return counts


def _headlines(values: dict[str, Any], declaration: Declaration) -> list[str]:
    """The metrics of the results that the declaration gives an interval, in the results' order; for a task without
    any (stereotype leakage: a regression with p-values), its numeric metrics that its benchmark declares with a
    direction or an ideal (not a detail view)."""
    with_ci = [name for name in values if declaration.has_interval(name)]
    if with_ci:
        return with_ci
    return [name for name in values if declaration.is_headline(name) and is_number(values[name])]


def _weight(values: dict[str, Any], items: tuple[int, int] | None) -> float:
    """A member's items for pooling its shares: its ``count``, else its generations, else its documents."""
    for name in ("count", "n_generations"):
        if is_number(values.get(name)) and math.isfinite(values[name]):
            return float(values[name])
    return float(items[0]) if items else 0.0


@dataclass
class Report:
    """Rows (models), tasks and the cell of each, with the runs read and the warnings found."""

    rows: list[Row]
    tasks: list[str]
    cells: dict[tuple[str, str], Cell]
    runs: list[Run]
    warnings: list[Finding]
    #: paired comparisons (:mod:`lm_eval_stereo.report.comparisons`), None when not computed
    paired: Paired | None = None

    def cell(self, task: str, row: Row) -> Cell | None:
        return self.cells.get((task, row.key))

    def task_cells(self, task: str) -> list[Cell]:
        return [cell for row in self.rows if (cell := self.cell(task, row))]

    def is_undeclared_task(self, task: str) -> bool:
        """Whether no benchmark of the plugin declares ``task`` in any run that holds it (:attr:`Cell.undeclared`)."""
        return all(cell.undeclared for cell in self.task_cells(task))

    def ideal(self, task: str, name: str) -> Ideal | None:
        """How metric ``name`` of ``task`` is best (the first cell that declares it)."""
        return next((ideal for cell in self.task_cells(task) if (ideal := cell.ideal(name))), None)

    def is_detail(self, task: str, name: str) -> bool:
        """Whether ``name`` of ``task`` is a declared view of a headline."""
        return any(cell.is_detail(name) for cell in self.task_cells(task))

    def caveats(self, cell: Cell, name: str) -> list[Finding]:
        """The warnings that qualify metric ``name`` of a cell (:attr:`Finding.caveat`)."""
        return [finding for finding in self.warnings if finding.qualifies(cell.task, cell.row.label, name)]


def leaf_tasks(report: Report) -> list[str]:
    """The tasks of the report that are not groups."""
    return [task for task in report.tasks if not any(cell.members for cell in report.task_cells(task))]


def summary_columns(report: Report) -> list[tuple[str, str]]:
    """(task, metric) of every benchmark headline: each task's headline metrics except declared detail views."""
    columns = []
    for task in leaf_tasks(report):
        names = dict.fromkeys(name for cell in report.task_cells(task) for name in cell.headlines)
        columns += [(task, name) for name in names if not report.is_detail(task, name)]
    return columns
