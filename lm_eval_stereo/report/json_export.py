"""The report as plain data (``lm-eval-stereo report --json``): NaN and infinities as null; ``undeclared_tasks``
lists the tasks and groups no benchmark declares (lm_eval's capability tasks, a user's own) among ``tasks``, their
directions from ``higher_is_better``. Every
metric carries its ``verdict`` against a middle ideal (``above``/``below``/``consistent``, null for directed metrics,
those without a CI and those whose CI rests on too few resamples), ``ci_undefined`` (the bootstrap resamples on which
it was undefined, left out of its CI; null where the results do not record it), the short ``caveats`` of the warnings that qualify it, the figure shown ``beside`` it and its ``provenance``: who
computed the value and who its interval (:mod:`lm_eval_stereo.results.provenance`: codes, the metric set, the lm_eval
version and a sentence)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from lm_eval_stereo.report.checks import group_warnings
from lm_eval_stereo.report.model import Report, summary_columns
from lm_eval_stereo.report.paired import ALPHA, MCNEMAR, SIGN_FLIP, STOP_AFTER, PairedResult
from lm_eval_stereo.report.tables import primary_cells
from lm_eval_stereo.report.verdicts import cell_verdict
from lm_eval_stereo.results.fields import Unusable


def _finite(value: Any) -> Any:
    """NaN and infinities as None, so that the JSON is standard; so is a value the reader could not use (its warning
    names it)."""
    if isinstance(value, Unusable):
        return None
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _paired_result(result: PairedResult, languages: bool) -> dict[str, Any]:
    """One pair of runs: what was compared (A − B) and per metric the statistics; languages list the flips."""
    comparisons = []
    for c in result.comparisons:
        entry = {
            "metric": c.metric,
            "difference": _finite(c.difference),
            "ci_low": _finite(c.low),
            "ci_high": _finite(c.high),
            "ci_undefined": c.undefined,
            "p": _finite(c.p),
            "p_holm": _finite(c.p_holm),
            "significant": c.significant,
            "test": c.test,
            "items": c.n,
            "permutations": c.permutations if c.test == SIGN_FLIP else None,
            "discordant": list(c.discordant) if c.discordant is not None else None,
        }
        if languages and c.test == MCNEMAR:
            entry["flips"] = [{"item": key, "a": a, "b": b} for key, a, b in c.flips]
        comparisons.append(entry)
    head = {"benchmark": result.task, "model": result.model} if languages else {"task": result.task}
    return {**head, "a": result.a, "b": result.b, "left_out": result.left_out, "comparisons": comparisons}


def _paired(report: Report) -> dict[str, Any] | None:
    paired = report.paired
    if paired is None:
        return None
    return {
        "method": {
            "difference": "A - B on the items both runs scored, 95% paired percentile bootstrap CI",
            "bootstrap_iters": paired.iters,
            "seed": paired.seed,
            "tests": {
                MCNEMAR: "metrics that are the mean of a 0/1 item score",
                SIGN_FLIP: f"other metrics; at most {paired.permutations} permutations, stopping after "
                f"{STOP_AFTER} reach the observed difference (Besag-Clifford)",
            },
            "multiple_testing": "Holm over all model comparisons, and separately over all language comparisons",
            "alpha": ALPHA,
        },
        "models": [_paired_result(result, languages=False) for result in paired.models],
        "languages": [_paired_result(result, languages=True) for result in paired.languages],
        "rankings": [{key: _finite(value) for key, value in asdict(ranking).items()} for ranking in paired.rankings],
        "without_samples": paired.without_samples,
        "not_compared": paired.notes,
    }


def report_json(report: Report) -> dict[str, Any]:
    """The report as plain data: models, summary columns, per task and model the estimates and counts with their
    source, the paired comparisons, and the warnings (also grouped by kind)."""
    tasks: dict[str, Any] = {}
    for task in report.tasks:
        tasks[task] = {}
        for cell in report.task_cells(task):
            metrics = {}
            for name in cell.headlines:
                estimate, ideal, companion = cell.estimate(name), cell.ideal(name), cell.companion_figure(name)
                metrics[name] = {
                    "value": _finite(estimate.value),
                    "ci_low": _finite(estimate.low),
                    "ci_high": _finite(estimate.high),
                    "stderr": _finite(estimate.stderr),
                    "ci_undefined": estimate.undefined,
                    "ideal": ideal.value if ideal else None,
                    "direction": ideal.direction if ideal else None,
                    "verdict": cell_verdict(cell, name),
                    "caveats": [finding.caveat for finding in report.caveats(cell, name)],
                    "beside": None if companion is None else {"label": companion[0], "value": companion[1]},
                    "provenance": cell.provenance(name).as_json(),
                }
            items = cell.document_counts
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
        "results": [{"task": c.task, "model": c.row.label, "metric": c.primary} for c in primary_cells(report)],
        "summary": [{"task": task, "metric": name} for task, name in summary_columns(report)],
        "tasks": tasks,
        "undeclared_tasks": [task for task in report.tasks if report.is_undeclared_task(task)],
        "paired": _paired(report),
        "warnings": [asdict(finding) for finding in report.warnings],
        "warnings_by_kind": {
            group.kind: {"meaning": group.meaning, "tasks": group.tasks} for group in group_warnings(report.warnings)
        },
    }
