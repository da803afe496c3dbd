"""Writing one run's Every Eval Ever files: ``DIR/<model>/<evaluation_id>.json`` and, for a run logged with
``--log_samples``, the per-item sidecar ``<evaluation_id>_samples.jsonl`` beside it (with its sha256 and row count
in the record's ``detailed_evaluation_results``, at the datastore path ``data/<collection>/<developer>/<model>/``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lm_eval_stereo.export.collect import RunExport
from lm_eval_stereo.export.eee import COLLECTION, developer, evaluation_id, model_id, record
from lm_eval_stereo.export.headlines import Omission
from lm_eval_stereo.export.instances import instance_lines


def _model_folder(name: str) -> str:
    return name.rsplit("/", 1)[-1] or "model"


def write_run(
    export: RunExport, output: Path, *, relationship: str, organization: str
) -> tuple[list[Path], list[Omission]]:
    """Write the record (and sidecar) of one run below ``output``; the files written and the items left out.
    OSError when they cannot be written."""
    run = export.run
    identifier, model = evaluation_id(run), model_id(run)
    folder = output / model
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    omitted: list[Omission] = []
    lines: list[dict] = []
    for task_items in export.item_sets:
        found, skipped = instance_lines(task_items, identifier, model)
        lines += found
        omitted += skipped
    detailed = None
    if lines:
        sidecar = folder / f"{identifier}_samples.jsonl"
        payload = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        sidecar.write_bytes(payload)
        written.append(sidecar)
        detailed = {
            "format": "jsonl",
            "file_path": f"data/{COLLECTION}/{developer(run)}/{_model_folder(model)}/{sidecar.name}",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(payload).hexdigest(),
            "total_rows": len(lines),
        }
    entry = record(run, export.headlines, relationship=relationship, organization=organization, detailed=detailed)
    path = folder / f"{identifier}.json"
    path.write_text(json.dumps(entry, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    written.insert(0, path)
    return written, omitted
