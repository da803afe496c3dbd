"""KoBBQ's sentences on docs/REAL_MODELS.md (:mod:`lm_eval_stereo.core.findings`)."""

from __future__ import annotations

import math

from lm_eval_stereo.core.findings import FindingsKit


def findings(kit: FindingsKit) -> list[str]:
    """KoBBQ's accuracies against the 1/3 of chance and its diff-bias scores against 0, from their CIs."""
    words = {"above": "above", "below": "below", "consistent": "consistent with"}
    lines = []
    for task, how in (("kobbq", "by log-likelihood (ours)"), ("kobbq_gen", "generated (the paper's five prompts)")):
        for label in kit.labels:
            cell = kit.cell(task, label)
            if cell is None:
                continue
            if all(math.isnan(cell.values.get(name, math.nan)) for name in ("acc_amb", "acc_dis")):
                lines.append(
                    f"- **KoBBQ {how} ({task}), {kit.name(label)}.** No answer is one of the choices: "
                    f"{kit.count(cell.values['out_of_choice'])} of {kit.count(cell.values['n_generations'])} are "
                    "out-of-choice, so every accuracy and diff-bias is undefined (0/0) and nothing is read from them."
                )
                continue
            accuracy = "; ".join(
                f"`{name}` {kit.estimate(cell, name)}, {words[kit.against_chance(cell, name, 1 / 3)]} the 1/3 of chance"
                for name in ("acc_amb", "acc_dis")
            )
            bias = "; ".join(
                f"`{name}` {kit.estimate(cell, name)}: {kit.describe(cell, name)}" for name in ("bias_amb", "bias_dis")
            )
            line = f"- **KoBBQ {how} ({task}), {kit.name(label)}.** Accuracy {accuracy}. Diff-bias {bias}."
            if cell.values.get("out_of_choice"):
                line += (
                    f" {kit.count(cell.values['out_of_choice'])} of {kit.count(cell.values['n_generations'])} answers are "
                    "none of the choices (out-of-choice) and left out of every score."
                )
            lines.append(line)
    return lines
