"""S_JSD's sentences on docs/REAL_MODELS.md (:mod:`lm_eval_stereo.core.findings`)."""

from __future__ import annotations

import re

from lm_eval_stereo.core.findings import FindingsKit, language_code


def findings(kit: FindingsKit) -> list[str]:
    """Per language and model, the shared tokens scored and left out (a causal model cannot be asked for a byte
    piece of a character alone): what each S_JSD rests on."""
    tasks = [task for task in kit.tasks if re.fullmatch(r"s_jsd_[a-z]+", task)]
    rows = []
    shares: dict[str, list[str]] = {label: [] for label in kit.labels}
    for task in tasks:
        cells = [(label, cell) for label in kit.labels if (cell := kit.cell(task, label))]
        entries = []
        for label, cell in cells:
            scored, unscored = cell.values["shared_tokens"], cell.values.get("unscorable_tokens", 0)
            share = unscored / (scored + unscored) if scored + unscored else float("nan")
            entries.append(f"{kit.count(scored)} / {kit.count(unscored)} ({100 * share:.1f}%)")
            if share > 0.1:
                shares[label].append(f"{language_code(task)} {100 * share:.0f}%")
        rows.append(f"| {language_code(task)} | " + " | ".join(entries) + " |")
    if not rows:
        return []
    heavy = "; ".join(
        f"{kit.name(label)} leaves out more than 10% of the shared tokens in {', '.join(found)}"
        if found
        else f"{kit.name(label)} leaves out at most 10% in every language"
        for label, found in shares.items()
    )
    return [
        "- **S_JSD: which shared tokens are scored.** A causal model is asked for each shared token through text; a "
        "token that is a byte piece of a character cannot be asked for alone and is left out (`unscorable_tokens`). "
        "What a language's S_JSD rests on is the share left out, not the number scored: "
        f"{heavy}. Scored / left out (share left out) over the 212 pairs:",
        "",
        "  | language | " + " | ".join(kit.name(label) for label in kit.labels) + " |",
        "  |---|" + "---:|" * len(kit.labels),
        *(f"  {row}" for row in rows),
        "",
    ]
