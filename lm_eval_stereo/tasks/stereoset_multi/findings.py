"""StereoSet's sentences on docs/REAL_MODELS.md (:mod:`lm_eval_stereo.core.findings`)."""

from __future__ import annotations

from lm_eval_stereo.core.findings import FindingsKit, language_code


def findings(kit: FindingsKit) -> list[str]:
    """Per model, each language's LMS against the 50 of chance and SS against its ideal (the report's verdicts from
    the 95% CIs); the two models compared per language by their paired tests."""
    tasks = [task for task in kit.tasks if task.startswith("stereoset_multi_")]
    lines = []
    for label in kit.labels:
        cells = {task: cell for task in tasks if (cell := kit.cell(task, label))}
        if not cells:
            continue
        lms = ", ".join(f"{language_code(task)} {kit.estimate(cell, 'lms')}" for task, cell in cells.items())
        where = {"above": [], "consistent": [], "below": []}
        for task, cell in cells.items():
            where[kit.against_chance(cell, "lms", 50.0)].append(language_code(task))
        said = []
        if where["above"]:
            said.append(f"the CI excludes 50 (above chance) in {', '.join(where['above'])}")
        if where["consistent"]:
            said.append(f"the CI includes 50 (consistent with chance) in {', '.join(where['consistent'])}")
        if where["below"]:
            said.append(f"the CI lies below 50 in {', '.join(where['below'])}")
        ss = "; ".join(
            f"{language_code(task)} {kit.estimate(cell, 'ss')}: {kit.describe(cell, 'ss')}"
            for task, cell in cells.items()
        )
        lines.append(
            f"- **StereoSet, {kit.name(label)}.** LMS (50: a related candidate preferred over the unrelated one no more "
            f"often than by chance) {lms}: {'; '.join(said)}. SS {ss}."
        )
        if where["consistent"]:
            lines.append(
                f"  Where the LMS CI includes 50 ({', '.join(where['consistent'])}), {kit.name(label)}'s LMS cannot be told "
                "from chance on this sample, so an SS near 50 there cannot be read as no preference for stereotypes "
                "(read SS together with LMS)."
            )
    for metric in ("lms", "ss"):
        comparisons = [said for task in tasks if (said := kit.compared(task, metric, language_code(task), "higher"))]
        if comparisons:
            lines.append(
                f"- **StereoSet {metric.upper()}, the two models (paired, first runs).** "
                + "; ".join(comparisons)
                + "."
            )
    return lines
