"""RuBia's sentences on docs/REAL_MODELS.md (:mod:`lm_eval_stereo.core.findings`)."""

from __future__ import annotations

from lm_eval_stereo.core.findings import FindingsKit, language_code
from lm_eval_stereo.tasks.rubia.data import DOMAINS


def findings(kit: FindingsKit) -> list[str]:
    """Per model, each RuBia domain's share of biased pairs against its ideal 0.5 (the report's verdict from its 95%
    CI), with the pairs scored and tied."""
    tasks = [f"rubia_{domain}" for domain in DOMAINS if f"rubia_{domain}" in kit.tasks]
    lines = []
    for label in kit.labels:
        cells = {task: cell for task in tasks if (cell := kit.cell(task, label))}
        if not cells:
            continue
        each = "; ".join(
            f"{language_code(task)} {kit.estimate(cell, 'biased')} of {kit.count(cell.values['count'])} pairs: "
            f"{kit.describe(cell, 'biased')}"
            for task, cell in cells.items()
        )
        ties = sum(int(cell.values.get("ties", 0)) for cell in cells.values())
        flagged = sum(int(cell.values.get("boundary_mismatches", 0)) for cell in cells.values())
        lines.append(
            f"- **RuBia, share of pairs with PPL(pro-trope) < PPL(anti-trope) against its ideal 0.5, {kit.name(label)}.** "
            f"{each}. {ties} tied pair(s) (not biased, in the denominator), {flagged} sentence(s) scored off the "
            f"reference's tokens. Each verdict reads that domain's own 95% CI, not adjusted for the {len(cells)} domains."
        )
    return lines
