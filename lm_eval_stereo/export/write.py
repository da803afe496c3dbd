"""Writing one run's Every Eval Ever files where the datastore keeps them: ``DIR/data/<collection>/<developer>/
<model>/<evaluation_id>.json`` (:meth:`~lm_eval_stereo.export.identity.ModelIdentity.repo_path`) and, for a run
logged with ``--log_samples``, the per-item sidecar ``<evaluation_id>_samples.jsonl`` beside it, which the record's
``detailed_evaluation_results`` names by that same datastore path, with its sha256 and row count."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lm_eval_stereo.export.collect import RunExport
from lm_eval_stereo.export.eee import evaluation_id, record
from lm_eval_stereo.export.headlines import Omission
from lm_eval_stereo.export.identity import ModelIdentity
from lm_eval_stereo.export.instances import instance_lines


def write_run(
    export: RunExport, output: Path, identity: ModelIdentity, *, relationship: str, organization: str
) -> tuple[list[Path], list[Omission]]:
    """Write the record (and sidecar) of one run of the model ``identity`` below ``output``; the files written and
    the items left out. OSError when they cannot be written."""
    run = export.run
    identifier = evaluation_id(run)
    record_path = output / identity.repo_path(f"{identifier}.json")
    sidecar_path = output / identity.repo_path(f"{identifier}_samples.jsonl")
    record_path.parent.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    omitted: list[Omission] = []
    lines: list[dict] = []
    for task_items in export.item_sets:
        found, skipped = instance_lines(task_items, identifier, identity.id)
        lines += found
        omitted += skipped
    detailed = None
    if lines:
        payload = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        sidecar_path.write_bytes(payload)
        written.append(sidecar_path)
        detailed = {
            "format": "jsonl",
            "file_path": identity.repo_path(sidecar_path.name),
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(payload).hexdigest(),
            "total_rows": len(lines),
        }
    entry = record(
        run,
        export.headlines,
        identity=identity,
        relationship=relationship,
        organization=organization,
        detailed=detailed,
    )
    record_path.write_text(json.dumps(entry, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    written.insert(0, record_path)
    return written, omitted
