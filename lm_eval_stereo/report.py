"""Cross-model comparison of lm_eval results: collect the runs below some folders, tabulate the headline metrics.

``lm_eval`` writes ``<output_path>/<model_name_sanitized>/results_<timestamp>.json``. The report reads every such
file below the given paths, keeps the newest run per model and task (or every run with ``all_runs``), and gives one
table per task or group: one row per model, one column per headline metric (a metric that carries a bootstrap CI,
``<m>_ci_low``/``<m>_ci_high``) with its 95% CI, then the counts that say what was measured. Groups such as
``stereoset_multi`` hold lm_eval's means over their members; their counts are recomputed as totals over the members
(shares as the share of the pooled items). Warnings (:mod:`lm_eval_stereo.report_checks`) say where a headline
misleads; :mod:`lm_eval_stereo.report_html` draws the figures.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from lm_eval_stereo.report_ideals import declared, ideal_for
from lm_eval_stereo.report_runs import Finding, Run, is_nan, is_number, load_runs

#: bookkeeping counts, summed over the members of a group
COUNT_METRICS = (
    "count", "ties", "unscored", "n_generations", "n_classified", "undetected", "pairs", "identical_pairs",
    "overlength_pairs", "no_shared_pairs", "nan_pairs", "roundtrip_mismatches", "unscorable_tokens",
)  # fmt: skip
#: bookkeeping shares, pooled over the members of a group (weighted by each member's items)
SHARE_METRICS = ("undetermined", "empty", "unclassified_share", "detection_yield")


@dataclass(frozen=True)
class Estimate:
    """A metric's value with its 95% CI and lm_eval's stderr, each None when the results have none."""

    value: Any
    low: float | None = None
    high: float | None = None
    stderr: float | None = None


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

    def __post_init__(self) -> None:
        self.values = self.run.values(self.task)
        self.members = self.run.members(self.task)

    @property
    def headlines(self) -> list[str]:
        """The headline metrics (:func:`_headlines`); for a group, those of its members that the group aggregates."""
        if self.members:
            names: dict[str, None] = {}
            for member in self.members:
                names.update(dict.fromkeys(_headlines(self.run.values(member))))
            return [name for name in names if name in self.values]
        return _headlines(self.values)

    def estimate(self, name: str) -> Estimate:
        """Value, CI and stderr of one metric (a group has no CI: a mean of interval bounds is not an interval)."""
        low, high = self.values.get(f"{name}_ci_low"), self.values.get(f"{name}_ci_high")
        return Estimate(
            self.values.get(name),
            float(low) if is_number(low) else None,
            float(high) if is_number(high) else None,
            self.run.stderr(self.task, name),
        )

    @property
    def items(self) -> tuple[int, int] | None:
        return self.run.items(self.task)

    @property
    def counts(self) -> dict[str, float]:
        """Bookkeeping counts and shares; for a group, totals (and pooled shares) over its members."""
        if not self.members:
            names = COUNT_METRICS + SHARE_METRICS
            return {name: self.values[name] for name in names if is_number(self.values.get(name))}
        members = [self.run.values(member) for member in self.members]
        weights = [_weight(values, self.run.items(member)) for values, member in zip(members, self.members)]
        counts: dict[str, float] = {}
        for name in COUNT_METRICS:
            present = [values[name] for values in members if is_number(values.get(name))]
            if present:
                counts[name] = sum(value for value in present if not math.isnan(value))
        for name in SHARE_METRICS:
            pairs = [(values[name], w) for values, w in zip(members, weights) if is_number(values.get(name))]
            pairs = [(share, w) for share, w in pairs if not math.isnan(share)]
            if pairs and sum(w for _, w in pairs) > 0:
                counts[name] = sum(share * w for share, w in pairs) / sum(w for _, w in pairs)
        return counts


def _headlines(values: dict[str, Any]) -> list[str]:
    """The metrics with a bootstrap CI; for a task without any (stereotype leakage: a regression with p-values),
    its numeric metrics that a benchmark declares with a direction or an ideal."""
    with_ci = [name for name in values if f"{name}_ci_low" in values and f"{name}_ci_high" in values]
    if with_ci:
        return with_ci
    known = declared()
    return [name for name in values if name in known and is_number(values[name])]


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

    def cell(self, task: str, row: Row) -> Cell | None:
        return self.cells.get((task, row.key))

    def task_cells(self, task: str) -> list[Cell]:
        return [cell for row in self.rows if (cell := self.cell(task, row))]


def _labels(runs: list[Run], all_runs: bool) -> dict[str, str]:
    """A unique row label per row key: the ``pretrained`` argument, the whole identity only where two models share
    it, and with ``all_runs`` the run's date and file."""
    identities = {run.identity: run.model_args.get("pretrained") or run.identity for run in runs}
    shared = {short for short in identities.values() if list(identities.values()).count(short) > 1}
    labels = {}
    for run in runs:
        label = run.identity if identities[run.identity] in shared else identities[run.identity]
        if all_runs:
            label += f" @ {datetime.fromtimestamp(run.date):%Y-%m-%d %H:%M:%S} ({run.path.name})"
        labels[_row_key(run, all_runs)] = label
    return labels


def _row_key(run: Run, all_runs: bool) -> str:
    return f"{run.identity} @ {run.path}" if all_runs else run.identity


def build_report(paths: list[str | Path], all_runs: bool = False) -> Report:
    """Collect the runs below ``paths`` and pick, per model and task, the newest run (every run with ``all_runs``)."""
    from lm_eval_stereo.report_checks import check

    runs, skipped = load_runs(paths)
    runs.sort(key=lambda run: (run.date, str(run.path)))
    labels = _labels(runs, all_runs)
    rows: dict[str, Row] = {}
    cells: dict[tuple[str, str], Cell] = {}
    for run in runs:  # oldest first: a newer run replaces an older one's cells
        key = _row_key(run, all_runs)
        row = rows.setdefault(key, Row(key, labels[key], run.model, run.model_args))
        for task in run.tasks:
            cells[(task, key)] = Cell(task, row, run)
    ordered = sorted(rows.values(), key=lambda row: row.label)
    report = Report(ordered, sorted({task for task, _ in cells}), cells, runs, skipped)
    report.warnings += check(report)
    return report


# --- presentation ---------------------------------------------------------------------------------------------------


def format_value(value: Any, sign: str = "") -> str:
    """A number as the tables show it: integers as they are, floats with four decimals (three significant digits
    below 0.001 in magnitude, e.g. an S_JSD of 2.31e-05), NaN as ``nan``; ``sign="+"`` always shows the sign."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:{sign}.3g}" if 0 < abs(value) < 1e-3 else f"{value:{sign}.4f}"
    return str(value)


def format_estimate(name: str, estimate: Estimate) -> str:
    """``value ± stderr [low, high] Δ+d``: stderr and CI where the results have them, Δ for target metrics."""
    text = format_value(estimate.value)
    if text == "nan" and all(is_nan(bound) for bound in (estimate.low, estimate.high)):
        return text
    if estimate.stderr is not None:
        text += f" ± {format_value(estimate.stderr)}"
    if estimate.low is not None and estimate.high is not None:
        text += f" [{format_value(estimate.low)}, {format_value(estimate.high)}]"
    ideal = ideal_for(name)
    if ideal and is_number(estimate.value) and (distance := ideal.distance(float(estimate.value))) is not None:
        text += f" Δ{format_value(distance, '+')}"
    return text


def metric_header(name: str) -> str:
    """Column title: the name with ↑/↓ where the ideal is an end of the range, ``(ideal x)`` where it is not."""
    ideal = ideal_for(name)
    if ideal is None:
        return name
    return f"{name} {ideal.arrow}" if ideal.arrow else f"{name} (ideal {ideal.value:g})"


@dataclass(frozen=True)
class Table:
    """A task's comparison table: headers and one row of cell texts per model."""

    task: str
    headers: list[str]
    rows: list[list[str]]
    numeric: bool = True  # numbers after the first column (right-aligned)


def task_table(report: Report, task: str) -> Table:
    """One row per model: its headline metrics with CIs, then items and the bookkeeping counts."""
    cells = report.task_cells(task)
    headlines = list(dict.fromkeys(name for cell in cells for name in cell.headlines))
    counts = [name for name in (*COUNT_METRICS, *SHARE_METRICS) if any(name in cell.counts for cell in cells)]
    headers = ["model", *map(metric_header, headlines), "items", *map(metric_header, counts)]
    rows = []
    for cell in cells:
        items = cell.items
        shown_items = "" if items is None else f"{items[0]}" + (f" of {items[1]}" if items[0] < items[1] else "")
        row = [cell.row.label]
        row += [format_estimate(name, cell.estimate(name)) if name in cell.values else "" for name in headlines]
        row += [shown_items, *(format_value(cell.counts[name]) if name in cell.counts else "" for name in counts)]
        rows.append(row)
    return Table(task, headers, rows)


def task_note(report: Report, task: str) -> str:
    """What a group row means (empty for a task)."""
    members = next((cell.members for cell in report.task_cells(task) if cell.members), ())
    if not members:
        return ""
    return (
        f"Group of {', '.join(members)}: metrics are lm_eval's means over the members (no CI); "
        "items and counts are totals over the members, shares are those of the pooled items."
    )


LEGEND = (
    "Values with 95% bootstrap CI in brackets (± lm_eval's stderr where the run has one). "
    "↑/↓: higher/lower is better. Metrics whose ideal lies in the middle of their range are shown with "
    "(ideal x) and the signed distance Δ to it, never with an arrow. items: documents scored "
    '("of N" when fewer than the full set).'
)


def _markdown_table(table: Table) -> list[str]:
    escape = lambda text: text.replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(map(escape, table.headers)) + " |"]
    lines.append("|" + "|".join(["---"] + ["---:" if table.numeric else "---"] * (len(table.headers) - 1)) + "|")
    lines += ["| " + " | ".join(map(escape, row)) + " |" for row in table.rows]
    return lines


PROVENANCE_HEADERS = [
    "model",
    "task",
    "version",
    "options",
    "normalization",
    "n-shot",
    "limit",
    "items",
    "lm_eval",
    "model and arguments",
    "results file",
]


def provenance_table(report: Report) -> Table:
    """Where each number came from, per model and task: version, options, normalisation, n-shot, limit, items,
    lm_eval version, the model with its arguments and the results file."""
    rows = []
    for task in report.tasks:
        for cell in report.task_cells(task):
            run, items = cell.run, cell.items
            normalization = cell.values.get("normalization")
            rows.append(
                [
                    cell.row.label,
                    task,
                    run.version(task),
                    ", ".join(f"{key}={value}" for key, value in run.options(task).items()),
                    "" if normalization is None else str(normalization),
                    str((run.data.get("n-shot") or {}).get(task, "")),
                    run.limit or "",
                    "" if items is None else f"{items[0]} of {items[1]}",
                    str(run.data.get("lm_eval_version", "?")),
                    run.identity,
                    str(run.path),
                ]
            )
    return Table("provenance", PROVENANCE_HEADERS, rows, numeric=False)


def render_markdown(report: Report) -> str:
    """The comparison as markdown: legend, file warnings, one table per task with its warnings, provenance."""
    lines = [
        "# Bias report",
        "",
        f"{len(report.rows)} model(s), {len(report.tasks)} task(s) and group(s), {len(report.runs)} results file(s).",
        LEGEND,
    ]
    file_warnings = [finding for finding in report.warnings if not finding.task]
    if file_warnings:
        lines += ["", *(f"- ⚠ {finding.message}" for finding in file_warnings)]
    for task in report.tasks:
        lines += ["", f"## {task}", ""]
        if note := task_note(report, task):
            lines += [note, ""]
        lines += _markdown_table(task_table(report, task))
        findings = [finding for finding in report.warnings if finding.task == task]
        if findings:
            lines += ["", *(f"- ⚠ {f.model}: {f.kind}: {f.message}" for f in findings)]
    lines += ["", "## Provenance", "", *_markdown_table(provenance_table(report))]
    return "\n".join(lines)


def _finite(value: Any) -> Any:
    """NaN and infinities as None, so that the JSON is standard."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def report_json(report: Report) -> dict[str, Any]:
    """The report as plain data: models, per task and model the estimates and counts with their source, warnings."""
    tasks: dict[str, Any] = {}
    for task in report.tasks:
        tasks[task] = {}
        for cell in report.task_cells(task):
            metrics = {}
            for name in cell.headlines:
                estimate, ideal = cell.estimate(name), ideal_for(name)
                metrics[name] = {
                    "value": _finite(estimate.value),
                    "ci_low": _finite(estimate.low),
                    "ci_high": _finite(estimate.high),
                    "stderr": _finite(estimate.stderr),
                    "ideal": ideal.value if ideal else None,
                    "direction": ideal.direction if ideal else None,
                }
            items = cell.items
            tasks[task][cell.row.label] = {
                "metrics": metrics,
                "counts": {name: _finite(value) for name, value in cell.counts.items()},
                "items": None if items is None else {"effective": items[0], "original": items[1]},
                "members": list(cell.members),
                "version": cell.run.version(task),
                "results_file": str(cell.run.path),
            }
    return {
        "models": [{"label": row.label, "model": row.model, "model_args": row.model_args} for row in report.rows],
        "tasks": tasks,
        "warnings": [asdict(finding) for finding in report.warnings],
    }
