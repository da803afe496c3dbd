"""EuroGEST's sentences on docs/REAL_MODELS.md (:mod:`lm_eval_stereo.core.findings`)."""

from __future__ import annotations

import re

from lm_eval_stereo.core.findings import FindingsKit, language_code


def findings(kit: FindingsKit) -> list[str]:
    """Per model, each EuroGEST language's g_s against its ideal 1 (the report's verdict from its 95% CI)."""
    tasks = sorted(task for task in kit.tasks if re.fullmatch(r"eurogest_[a-z]+", task))
    lines = []
    for label in kit.labels:
        cells = {task: cell for task in tasks if (cell := kit.cell(task, label))}
        if cells:
            each = "; ".join(
                f"{language_code(task)} {kit.estimate(cell, 'gs')}: {kit.describe(cell, 'gs')}"
                for task, cell in cells.items()
            )
            several = (
                f" Each verdict reads that language's own 95% CI, not adjusted for the {len(cells)} languages: were "
                f"every language unbiased, about {0.05 * len(cells):.1f} of them would still lie off 1 by chance."
                if len(cells) > 1
                else ""
            )
            lines.append(f"- **EuroGEST, g_s against its ideal 1, {kit.name(label)}.** {each}.{several}")
    return lines
