"""MBBQ's sentences on docs/REAL_MODELS.md (:mod:`lm_eval_stereo.core.findings`)."""

from __future__ import annotations

import math
import re

from lm_eval_stereo.core.findings import FindingsCell, FindingsKit, language_code


def _defined(cell: FindingsCell, name: str) -> bool:
    value = cell.values.get(name)
    return isinstance(value, float) and math.isfinite(value)


def findings(kit: FindingsKit) -> list[str]:
    """Per model and protocol: each language's accuracies against the 1/3 of chance and its bias scores against 0
    (the report's verdicts, 95% CIs), beside the control set's accuracy of the same language."""
    lines = []
    for label in kit.labels:
        for prefix, protocol in (("mbbq", "log-likelihood"), ("mbbq_gen", "generation")):
            cells = {
                language_code(task): cell
                for task in kit.tasks
                if re.fullmatch(rf"{prefix}_[a-z]+", task) and (cell := kit.cell(task, label))
            }
            if not cells:
                continue
            words = {"above": "above", "below": "below", "consistent": "consistent with"}
            parts = []
            for lang, cell in cells.items():
                control = kit.cell(f"{prefix}_control_{lang}", label)
                undefined = "undefined: no scored answer of that kind in the sample"
                accuracies = ", ".join(
                    (
                        f"{name} {kit.estimate(cell, name)} ({words[kit.against_chance(cell, name, 1 / 3)]} chance"
                        if _defined(cell, name)
                        else f"{name} ({undefined}"
                    )
                    + (f"; control set {kit.estimate(control, name)}" if control and _defined(control, name) else "")
                    + ")"
                    for name in ("acc_amb", "acc_dis")
                )
                biases = "; ".join(
                    f"{name} {kit.estimate(cell, name)}: {kit.describe(cell, name)}"
                    if _defined(cell, name)
                    else f"{name} ({undefined})"
                    for name in ("bias_amb", "bias_dis")
                )
                undetermined = cell.values.get("undetermined")
                extra = f"; undetermined {undetermined:.3f} of answers" if undetermined else ""
                parts.append(f"{lang}: {accuracies}; {biases}{extra}")
            lines.append(f"- **MBBQ ({protocol}), {kit.name(label)}.** " + ". ".join(parts) + ".")
    return lines
