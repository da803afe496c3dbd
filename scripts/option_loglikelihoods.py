"""The per-option log-likelihoods of a multiple-choice run, from its logged samples, without the rows' text: what the
real-model pages read to say why a model picked what it picked (docs/REAL_MODELS.md; the samples themselves hold the
upstream rows and are not committed).

    python scripts/option_loglikelihoods.py RUN_FOLDER

writes ``option_loglikelihoods.json`` beside each ``samples_<task>_*.jsonl`` under RUN_FOLDER: per task, per
document its ``doc_id``, ``context_condition``, ``label`` and ``template_id`` (null where the rows have none) and the log-likelihood of each choice in lm_eval's order
(the choices' wording is in the results file's task config, ``doc_to_choice``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUTPUT = "option_loglikelihoods.json"


def documents(samples: Path) -> list[dict]:
    """One entry per logged document, in ``doc_id`` order."""
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        {
            "doc_id": row["doc_id"],
            "context_condition": row["doc"].get("context_condition"),
            "label": row["doc"].get("label"),
            "template_id": row["doc"].get("template_id"),
            "loglikelihoods": [float(response[0]) for response in row["filtered_resps"]],
        }
        for row in sorted(rows, key=lambda row: row["doc_id"])
    ]


def write(run: Path) -> list[Path]:
    """Write the file beside every samples file under ``run``; the files written."""
    by_folder: dict[Path, dict[str, list[dict]]] = {}
    for samples in sorted(run.rglob("samples_*.jsonl")):
        task = samples.name.removeprefix("samples_").rsplit("_", 1)[0]
        by_folder.setdefault(samples.parent, {})[task] = documents(samples)
    for folder, tasks in by_folder.items():
        (folder / OUTPUT).write_text(json.dumps(tasks, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [folder / OUTPUT for folder in by_folder]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[3].strip())
    print("\n".join(str(path) for path in write(Path(sys.argv[1]))))
