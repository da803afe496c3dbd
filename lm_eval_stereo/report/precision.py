"""The precision a run was scored in, and the warning where one task's numbers come from runs of different precision.

A run's dtype is its ``dtype=`` model argument (``torch_dtype=`` of older command lines); without one (or with
``dtype=auto``) the model was loaded in its config's dtype, which lm_eval records as ``config.model_dtype`` for its
``hf`` family (``hf-prefix`` included): then ``default (model config: float32)``, else ``default (model config)``.
bfloat16 moves per-request log-likelihoods by nats where float32 does not (``make bench``, docs/RUNNING.md,
"Precision"), so a task whose models (or runs of one model) were scored in different precisions gets a ``precision``
warning on every cell: numbers of different precision are never compared unawares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lm_eval_stereo.results.run import Finding, Run

if TYPE_CHECKING:
    from lm_eval_stereo.report.model import Report

#: spellings of one precision (``torch.`` prefixes are dropped first)
ALIASES = {
    "float": "float32",
    "fp32": "float32",
    "half": "float16",
    "fp16": "float16",
    "bf16": "bfloat16",
    "double": "float64",
    "fp64": "float64",
}
#: the model arguments a dtype is read from, in order
DTYPE_ARGS = ("dtype", "torch_dtype")
UNKNOWN = "default (model config)"


def normalise(value: object) -> str:
    """``torch.bfloat16``, ``bf16``, ``BFloat16`` -> ``bfloat16``; other values lower-cased as they are."""
    text = str(value).strip().lower().removeprefix("torch.")
    return ALIASES.get(text, text)


def precision(run: Run) -> str | None:
    """The dtype ``run`` was scored in (normalised), or None where neither its arguments nor lm_eval say."""
    for key in DTYPE_ARGS:
        value = run.model_args.get(key)
        if value and normalise(value) != "auto":
            return normalise(value)
    loaded = run.number_facts.get("model_dtype")
    return normalise(loaded) if loaded else None


def dtype_text(run: Run) -> str:
    """The dtype as the provenance shows it: the ``dtype=`` argument, else the model config's as lm_eval loaded it,
    else ``default (model config)``."""
    stated = any(run.model_args.get(key) and normalise(run.model_args[key]) != "auto" for key in DTYPE_ARGS)
    found = precision(run)
    if stated:
        return str(found)
    return f"default (model config: {found})" if found else UNKNOWN


def precision_findings(report: Report) -> list[Finding]:
    """A ``precision`` warning on every cell of a task whose cells were scored in more than one known precision
    (groups are left to their members, as :func:`lm_eval_stereo.report.checks.check_cell` does)."""
    findings = []
    for task in report.tasks:
        cells = [cell for cell in report.task_cells(task) if not (cell.members and not cell.undeclared)]
        known = {cell.row.label: precision(cell.run) for cell in cells}
        distinct = sorted({value for value in known.values() if value})
        if len(distinct) < 2:
            continue
        for cell in cells:
            mine = known[cell.row.label] or "an unknown dtype"
            others = "; ".join(
                f"{label}: {value or 'unknown'}" for label, value in known.items() if label != cell.row.label
            )
            message = (
                f"scored in {mine}, other runs of this task in another precision ({others}): numbers of different "
                "precision differ beyond rounding (docs/RUNNING.md, Precision); compare them only at equal dtype"
            )
            findings.append(Finding(cell.row.label, task, "precision", message, f"{mine}; models differ in dtype"))
    return findings


def precision_line(report: Report) -> str | None:
    """One line for the provenance when the report's runs were scored in more than one precision, else None."""
    by_label: dict[str, dict[str, None]] = {}
    for task in report.tasks:
        for cell in report.task_cells(task):
            by_label.setdefault(cell.row.label, {})[dtype_text(cell.run)] = None
    known = {precision(cell.run) for task in report.tasks for cell in report.task_cells(task)} - {None}
    if len(known) < 2:
        return None
    listed = "; ".join(f"{label}: {' / '.join(texts)}" for label, texts in by_label.items())
    return (
        f"⚠ The runs were scored in different precisions ({listed}). bfloat16 moves per-request log-likelihoods by "
        "up to nats against float32 (docs/RUNNING.md, Precision): compare numbers only at equal dtype."
    )
