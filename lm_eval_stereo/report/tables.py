"""The report's tables, shared by the markdown and the HTML page, none wider than :data:`MAX_COLUMNS`.

- the results, the report's first screen: per model one row per task (a benchmark in one language, the task id
  where a benchmark has several in one language): its primary headline (:attr:`Cell.primary`, the one its metric set
  declares) with its 95% CI and verdict, marks as in the summary;
- the caveats: one line per kind of warning naming the tasks it concerns (:meth:`WarningGroup.line`), numbered where
  they qualify a value of the results or the summary (``†n`` next to the value);
- the summary (every headline, with ``--details``): with up to four models one row per benchmark headline (a task's headline metrics that no benchmark
  declares a ``detail`` view) and one column per model, with more one row per model; each value with its 95% CI,
  its verdict against a middle ideal in the metric's words (:mod:`lm_eval_stereo.report.verdicts`), the models it
  differs from significantly (``>B``: higher than model B, ``<B``: lower; Holm-adjusted paired p < 0.05) and a
  footnote mark per warning that qualifies it;
- per task: its headline metrics (views included) and bookkeeping counts, one row per model;
- the paired comparisons: model against model, language against language within a model;
- the provenance of every number.

A table with more columns is split into consecutive tables that repeat the first (row label) column.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable
from dataclasses import dataclass

from lm_eval_stereo.core.metrics import BOOKKEEPING
from lm_eval_stereo.report.checks import WarningGroup, group_warnings
from lm_eval_stereo.report.formatting import format_estimate, format_value, metric_header
from lm_eval_stereo.report.model import Cell, Report, Row, leaf_tasks, summary_columns
from lm_eval_stereo.report.naming import headline_title, metric_title
from lm_eval_stereo.report.paired import ALPHA, MCNEMAR, STOP_AFTER, Comparison, PairedResult
from lm_eval_stereo.report.precision import dtype_text
from lm_eval_stereo.report.verdicts import describe

#: the most columns a table has (the row label included), so that a page fits a laptop screen
MAX_COLUMNS = 8
#: with up to this many models the summary has one row per headline and one column per model
TRANSPOSE_MAX_MODELS = 4


@dataclass(frozen=True)
class Table:
    """A table: title, headers and one row of cell texts per row."""

    task: str
    headers: list[str]
    rows: list[list[str]]
    numeric: bool = True  # numbers after the first column (right-aligned)


def split(table: Table, max_columns: int = MAX_COLUMNS, keep: int = 1, groups: list[str] | None = None) -> list[Table]:
    """The table as consecutive tables of at most ``max_columns`` columns, each repeating the first ``keep``.

    ``groups`` names a group per column after the first ``keep`` (e.g. the task of a summary column): a group is kept
    in one table where it fits, tables being filled greedily in column order."""
    width = max_columns - keep
    labels = groups or [str(i) for i in range(len(table.headers) - keep)]
    chunks: list[list[int]] = [[]]
    for label in dict.fromkeys(labels):
        members = [keep + i for i, other in enumerate(labels) if other == label]
        for column in members:
            whole_group_fits = len(chunks[-1]) + len(members) <= width or len(members) > width
            if len(chunks[-1]) == width or (column == members[0] and chunks[-1] and not whole_group_fits):
                chunks.append([])
            chunks[-1].append(column)
    parts = []
    for chunk in chunks:
        columns = list(range(keep)) + chunk
        headers = [table.headers[i] for i in columns]
        parts.append(Table(table.task, headers, [[row[i] for i in columns] for row in table.rows], table.numeric))
    return parts


def model_letters(report: Report) -> dict[str, str]:
    """A short name per model row (A, B, ..., Z, AA, ...) for the significance markers and the paired tables."""
    letters = {}
    for index, row in enumerate(report.rows):
        name, rest = "", index
        while True:
            name = string.ascii_uppercase[rest % 26] + name
            rest = rest // 26 - 1
            if rest < 0:
                break
        letters[row.label] = name
    return letters


def _markers(report: Report, row: Row, task: str, metric: str, letters: dict[str, str]) -> str:
    if report.paired is None:
        return ""
    found = report.paired.significant(task, metric, row.label)
    return " ".join(f"{'>' if c.difference > 0 else '<'}{letters[other]}" for other, c in found)


def primary_cells(report: Report) -> list[Cell]:
    """The cells of the first screen, in table order (tasks, then models): every plugin task's cell that has a
    primary headline in its results."""
    return [cell for task in leaf_tasks(report) for cell in report.task_cells(task) if cell.primary is not None]


def caveat_notes(report: Report) -> dict[str, int]:
    """A footnote number per kind of warning that qualifies a value of the results or the summary, in the order
    they show them."""
    shown = [(cell, cell.primary) for cell in primary_cells(report)]
    shown += [(cell, name) for task, name in summary_columns(report) for cell in report.task_cells(task)]
    notes: dict[str, int] = {}
    for cell, name in shown:
        for finding in report.caveats(cell, name or ""):
            notes.setdefault(finding.kind, len(notes) + 1)
    return notes


def caveat_marks(report: Report, cell: Cell, name: str, notes: dict[str, int]) -> list[str]:
    """The footnote marks of the kinds of warning that qualify metric ``name`` of a cell, each once."""
    numbers = sorted({notes[finding.kind] for finding in report.caveats(cell, name) if finding.kind in notes})
    return [f"†{number}" for number in numbers]


def warning_groups(report: Report) -> list[tuple[str, WarningGroup]]:
    """The warnings grouped by kind (:func:`~lm_eval_stereo.report.checks.group_warnings`), each with its footnote
    mark (``†n``, empty where it qualifies no value shown): the numbered kinds first, in their order."""
    notes = caveat_notes(report)
    groups = group_warnings(report.warnings)
    ordered = sorted(groups, key=lambda group: notes.get(group.kind, len(notes) + 1))
    return [(f"†{notes[group.kind]}" if group.kind in notes else "", group) for group in ordered]


def caveat_lines(report: Report) -> list[str]:
    """One line per kind of warning: its mark, then what it says of the tasks it concerns, naming them."""
    labels = [row.label for row in report.rows]
    return [" ".join(filter(None, [mark, group.line(labels)])) for mark, group in warning_groups(report)]


def _estimate_text(cell: Cell, name: str, words: str | None) -> str:
    """Estimate [CI], with Δ to a middle ideal where there is no verdict (``words``)."""
    return format_estimate(cell.estimate(name), cell.ideal(name), stderr=False, delta=not words)


def _companion_text(cell: Cell, name: str) -> str:
    """ "; 0.211 over determinate answers": the figure the declaration shows next to the metric, empty where none."""
    companion = cell.companion_figure(name)
    return "" if companion is None else f"; {format_value(companion[1])} {companion[0]}"


def summary_text(report: Report, cell: Cell, name: str, letters: dict[str, str], notes: dict[str, int]) -> str:
    """A summary value: estimate [CI], the verdict in the metric's words (Δ to a middle ideal where there is no
    verdict), the figure shown beside it, the significant paired differences and the caveats' footnote marks."""
    words = describe(cell, name)
    text = _estimate_text(cell, name, words) + (f": {words}" if words else "") + _companion_text(cell, name)
    marks = [_markers(report, cell.row, cell.task, name, letters), *caveat_marks(report, cell, name, notes)]
    return " ".join([text, *filter(None, marks)])


def results_table(report: Report) -> Table | None:
    """The first screen: per model one row per task, its primary headline (its name and ideal), value [95% CI] and
    verdict with the caveats' marks; the model column only where there are several. None without plugin tasks."""
    cells = primary_cells(report)
    if not cells:
        return None
    letters, notes = model_letters(report), caveat_notes(report)
    several = len(report.rows) > 1
    rows = []
    for cell in cells:
        name = cell.primary or ""
        words = describe(cell, name)
        value = _estimate_text(cell, name, words) + _companion_text(cell, name)
        value = " ".join(filter(None, [value, _markers(report, cell.row, cell.task, name, letters)]))
        verdict = " ".join(filter(None, [words, *caveat_marks(report, cell, name, notes)]))
        bench = cell.declaration.benchmark if cell.declaration else None
        recorded = cell.run.language(cell.task)
        only = bench.languages[0] if bench is not None and len(bench.languages) == 1 else ""
        where = [cell.task, bench.title if bench else "", recorded[0] if recorded else only]
        header = metric_header(metric_title(cell, name), cell.ideal(name))
        rows.append([*where, *([cell.row.label] if several else []), header, value, verdict])
    headers = [
        "task",
        "benchmark",
        "language",
        *(["model"] if several else []),
        "headline",
        "value [95% CI]",
        "verdict",
    ]
    return Table("results", headers, rows, numeric=False)


def ideal_text(report: Report, task: str, name: str) -> str:
    """The ideal of a summary headline: ↑/↓ for an end of the range, the value for a middle ideal."""
    ideal = report.ideal(task, name)
    if ideal is None:
        return ""
    return ideal.arrow or f"{ideal.value:g}"


def headline_header(report: Report, task: str, name: str) -> str:
    """ "StereoSet de · SS (stereoset_multi_de)": the headline for a person with its task id."""
    return f"{headline_title(report.task_cells(task)[0], name)} ({task})"


def summary_tables(report: Report) -> list[Table]:
    """Up to :data:`TRANSPOSE_MAX_MODELS` models: one row per benchmark headline (its name for a person with the task
    id, its ideal), one column per model; more models: one row per model, one column per headline, split to
    :data:`MAX_COLUMNS`."""
    columns = summary_columns(report)
    letters, notes = model_letters(report), caveat_notes(report)

    def text(row: Row, task: str, name: str) -> str:
        cell = report.cell(task, row)
        return "" if cell is None or name not in cell.values else summary_text(report, cell, name, letters, notes)

    if len(report.rows) <= TRANSPOSE_MAX_MODELS:
        headers = ["headline (task)", "ideal", *(row.label for row in report.rows)]
        rows = [
            [headline_header(report, task, name), ideal_text(report, task, name)]
            + [text(row, task, name) for row in report.rows]
            for task, name in columns
        ]
        return [Table("summary", headers, rows)]
    headers = ["model"]
    headers += [
        f"{headline_header(report, task, name)} {ideal_text(report, task, name)}".strip() for task, name in columns
    ]
    rows = [[row.label, *(text(row, task, name) for task, name in columns)] for row in report.rows]
    return split(Table("summary", headers, rows), groups=[task for task, _ in columns])


def task_tables(report: Report, task: str) -> list[Table]:
    """One row per model: its headline metrics with CIs, then items, the bookkeeping counts and the backend whose run
    they come from (``hf`` and ``hf-prefix`` runs of one model share a row, but only ``hf-prefix`` scores the
    reference's tokens where strings cannot say them) (split)."""
    cells = report.task_cells(task)
    headlines = list(dict.fromkeys(name for cell in cells for name in cell.headlines))
    counts = [entry.name for entry in BOOKKEEPING if any(entry.name in cell.counts for cell in cells)]
    headers = ["model", *(metric_header(name, report.ideal(task, name)) for name in headlines), "items"]
    headers += [*(metric_header(name, report.ideal(task, name)) for name in counts), "backend"]
    rows = []
    for cell in cells:
        items = cell.document_counts
        shown_items = "" if items is None else f"{items[0]}" + (f" of {items[1]}" if items[0] < items[1] else "")
        row = [cell.row.label]
        row += [
            format_estimate(cell.estimate(name), cell.ideal(name)) if name in cell.values else "" for name in headlines
        ]
        row += [shown_items, *(format_value(cell.counts[name]) if name in cell.counts else "" for name in counts)]
        rows.append([*row, cell.run.model])
    return split(Table(task, headers, rows))


def task_note(report: Report, task: str) -> str:
    """What a group row means (empty for a task)."""
    members = next((cell.members for cell in report.task_cells(task) if cell.members), ())
    if not members:
        return ""
    return (
        f"Group of {', '.join(members)}: metrics are lm_eval's means over the members (no CI); "
        "items and counts are totals over the members, shares are those of the pooled items."
    )


def format_p(p: float) -> str:
    """A p-value: three significant digits, ``< 1e-4`` below that."""
    if math.isnan(p):
        return "nan"
    return "< 0.0001" if p < 1e-4 else f"{p:.3g}"


def _statistics(comparison: Comparison) -> list[str]:
    """Difference with its CI (``*`` when significant after Holm), p and Holm's p."""
    bounds = f"[{format_value(comparison.low)}, {format_value(comparison.high)}]"
    difference = f"{format_value(comparison.difference, '+')} {bounds}" + (" *" if comparison.significant else "")
    return [difference, format_p(comparison.p), format_p(comparison.p_holm)]


def _test(comparison: Comparison) -> str:
    if comparison.test == MCNEMAR and comparison.discordant is not None:
        return f"{MCNEMAR} ({comparison.discordant[0]}/{comparison.discordant[1]} discordant)"
    return f"{comparison.test} ({comparison.permutations})"


PAIRED_LEGEND = (
    "Paired comparisons on the items both runs scored: difference A − B with its 95% paired bootstrap CI "
    "(the same resampled items for both, seeded, within the metric's strata where its own bootstrap has them); "
    "p from an exact McNemar test where the metric is the mean of a 0/1 item score (discordant items high in A only / "
    "in B only), else from a paired sign-flip permutation test (permutations used in brackets; it stops once "
    f"{STOP_AFTER} permutations reach the observed difference); p Holm: Holm-adjusted over all comparisons of the table; "
    f"* marks p Holm < {ALPHA:g}."
)


LANGUAGE_LEGEND = (
    "One model on the translations of the same items (tasks of one metric set and scoring in different languages, "
    "as the tasks recorded; items matched by parallel id, or the units the benchmark declares for pairing), A − B = "
    "first language minus second: paired bootstrap CI, exact McNemar or sign-flip permutation p and "
    "Holm over all language comparisons, as for the models; the McNemar counts are the items whose judgement flips "
    "between the two languages (listed by --json)."
)


def _items(comparison: Comparison, result: PairedResult) -> str:
    """The matched items, with those left out and the bootstrap resamples where the difference was undefined."""
    notes = [f"{result.left_out} unscored in one run left out"] if result.left_out else []
    if comparison.undefined:
        notes.append(f"CI without {comparison.undefined} undefined resamples")
    return f"{comparison.n}" + (f" ({'; '.join(notes)})" if notes else "")


def _comparison_table(
    title: str,
    headers: list[str],
    results: list[PairedResult],
    lead: Callable[[PairedResult, Comparison], list[str]],
    tail: Callable[[PairedResult, Comparison], list[str]],
) -> list[Table]:
    """One row per comparison: the ``lead`` cells, difference [CI], p, Holm's p, the ``tail`` cells."""
    rows = [[*lead(r, c), *_statistics(c), *tail(r, c)] for r in results for c in r.comparisons]
    return [Table(title, headers, rows, numeric=False)] if rows else []


def model_comparison_tables(report: Report) -> list[Table]:
    """Model against model: one row per task, metric and pair of models."""
    letters = model_letters(report)
    return _comparison_table(
        "model vs model",
        ["task", "metric", "A − B", "difference [95% CI]", "p", "p Holm", "test", "items"],
        report.paired.models if report.paired else [],
        lambda r, c: [r.task, c.metric, f"{letters[r.a]} − {letters[r.b]}"],
        lambda r, c: [_test(c), _items(c, r)],
    )


def language_comparison_tables(report: Report) -> list[Table]:
    """Language against language within a model: one row per model, benchmark, metric and pair of languages."""
    letters = model_letters(report)
    return _comparison_table(
        "language vs language",
        ["model", "benchmark", "metric", "A − B", "difference [95% CI]", "p", "p Holm", "test (flips); items"],
        report.paired.languages if report.paired else [],
        lambda r, c: [letters[r.model], r.task, c.metric, " − ".join(r.languages)],
        lambda r, c: [f"{_test(c)}; {_items(c, r)} items"],
    )


RANK_LEGEND = (
    "Where a benchmark ranks units in every language (e.g. stereotypes by their mean score), each language's ranking "
    "against the reference language's on the items both scored: Spearman's rank correlation rho (1: the same order) "
    "with its 95% bootstrap CI (the matched items resampled, the same for both languages, seeded, within the "
    "statistic's strata; resamples where rho is undefined are counted and left out)."
)


def rank_agreement_tables(report: Report) -> list[Table]:
    """One row per model, benchmark and language: rho against the reference language with its CI."""
    letters = model_letters(report)
    rows = []
    for r in report.paired.rankings if report.paired else []:
        bounds = f"[{format_value(r.low)}, {format_value(r.high)}]"
        notes = f" ({r.undefined} undefined resamples left out)" if r.undefined else ""
        rows.append(
            [
                letters[r.model],
                r.benchmark,
                " vs ".join(r.languages),
                f"{format_value(r.rho)} {bounds}",
                f"{r.units}",
                f"{r.n}{notes}",
            ]  # fmt: skip
        )
    headers = ["model", "benchmark", "language vs reference", "rho [95% CI]", "units ranked", "items"]
    return [Table("rank agreement", headers, rows, numeric=False)] if rows else []


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
    "dtype",
    "computed by",
    "results file",
]


def computed_by(cell: Cell) -> str:
    """Who computed the cell's headlines and their intervals (:meth:`Cell.provenance`): one sentence where all
    headlines share it, else the headlines of each."""
    by: dict[str, list[str]] = {}
    for name in cell.headlines:
        by.setdefault(cell.provenance(name).describe(), []).append(name)
    if len(by) == 1:
        return next(iter(by))
    return "; ".join(f"{', '.join(names)}: {text}" for text, names in by.items())


def provenance_tables(report: Report) -> list[Table]:
    """Where each number came from, per model and task: version, options, normalisation, n-shot, limit, items,
    lm_eval version, the model with its arguments, the dtype it was scored in (:mod:`~lm_eval_stereo.report.
    precision`) and the results file (split, model and task repeated)."""
    rows = []
    for task in report.tasks:
        for cell in report.task_cells(task):
            run, items = cell.run, cell.document_counts
            normalization = cell.values.get("normalization")
            rows.append(
                [
                    cell.row.label,
                    task,
                    run.version(task),
                    ", ".join(f"{key}={value}" for key, value in run.options(task).items()),
                    "" if normalization is None else str(normalization),
                    run.n_shot(task),
                    run.limit or "",
                    "" if items is None else f"{items[0]} of {items[1]}",
                    run.lm_eval_version or "?",
                    run.scored_by,
                    dtype_text(run),
                    computed_by(cell),
                    str(run.path),
                ]
            )
    return split(Table("provenance", PROVENANCE_HEADERS, rows, numeric=False), keep=2)
