"""GEST's sentences on docs/REAL_MODELS.md (:mod:`lm_eval_stereo.core.findings`)."""

from __future__ import annotations

from lm_eval_stereo.core.findings import FindingsKit


def findings(kit: FindingsKit) -> list[str]:
    """Each model's g_s of ``gest_en`` against its ideal 1 (the report's verdict), the models compared by their paired
    test."""
    cells = {label: cell for label in kit.labels if (cell := kit.cell("gest_en", label))}
    if not cells:
        return []
    each = "; ".join(
        f"{kit.name(label)} {kit.estimate(cell, 'gs')}: {kit.describe(cell, 'gs')}" for label, cell in cells.items()
    )
    line = f"- **GEST (en), g_s against its ideal 1.** {each}."
    if compared := kit.compared("gest_en", "gs", "The two models' g_s", "higher"):
        line += f" {compared}."
    return [line]
