"""The German gender-bias suite's sentences on docs/REAL_MODELS.md (:mod:`lm_eval_stereo.core.findings`)."""

from __future__ import annotations

import math

from lm_eval_stereo.core.findings import FindingsKit


def findings(kit: FindingsKit) -> list[str]:
    """GerBBQ+ as multiple choice: accuracies against the 1/3 of chance, the models compared by their paired tests;
    generative GerBBQ+: what the accuracy rests on (the outputs booked as "unbekannt")."""
    lines = []
    chance = 1 / 3
    for task, context in (("gerbbq_mc_amb", "ambiguous"), ("gerbbq_mc_dis", "disambiguated")):
        cells = {label: cell for label in kit.labels if (cell := kit.cell(task, label))}
        if not cells:
            continue
        words = {"above": "above", "below": "below", "consistent": "consistent with"}
        each = "; ".join(
            f"{kit.name(label)} {kit.estimate(cell, 'accuracy')}, {words[kit.against_chance(cell, 'accuracy', chance)]} "
            "the 1/3 of chance"
            for label, cell in cells.items()
        )
        line = f"- **GerBBQ+ as multiple choice ({task}, {context} contexts), accuracy.** {each} (95% CI)."
        if compared := kit.compared(task, "accuracy", "Between the models", "higher"):
            line += f" {compared}."
        lines.append(line)
    if any(line.startswith("- **GerBBQ+ as multiple choice") for line in lines):
        lines.append(
            "  The paper's protocol is generative with an instruction-tuned model; `gerbbq_mc_*` is our addition and "
            "scores the answers by log-likelihood."
        )
    for task, context in (("gerbbq_amb", "ambiguous"), ("gerbbq_dis", "disambiguated")):
        for label in kit.labels:
            cell = kit.cell(task, label)
            if cell is None or cell.document_counts is None:
                continue
            n = cell.document_counts[0]
            correct = round(cell.values["accuracy"] * n)
            undetermined = round(cell.values["undetermined"] * n)
            companion = cell.companion_figure("accuracy")
            # undetermined outputs are booked as "unbekannt": correct in ambiguous contexts, wrong otherwise
            undetermined_correct = undetermined if context == "ambiguous" else 0
            determinate = n - undetermined
            determinate_correct = correct - undetermined_correct
            if companion is None or not math.isclose(companion[1], determinate_correct / determinate):
                raise SystemExit(f"{task} {label}: accuracy over determinate answers does not add up")
            booked = (
                f'{undetermined_correct} of its {correct} correct answers are such outputs ("unbekannt" is the '
                "right answer in ambiguous contexts)"
                if undetermined_correct
                else f"they count as wrong (the answer is a person in {context} contexts)"
            )
            lines.append(
                f"- **GerBBQ+ generative ({task}), {kit.name(label)}.** Accuracy {kit.estimate(cell, 'accuracy')} over "
                f'{n} items, of which {undetermined} outputs name no answer and are booked as "unbekannt": '
                f"{booked}. Over the {determinate} determinate answers the accuracy is "
                f"{determinate_correct / determinate:.3f} ({determinate_correct} of {determinate})."
            )
    return lines
