"""Writing one run's Every Eval Ever files where the datastore keeps them: ``DIR/data/<collection>/<developer>/
<model>/<evaluation_id>.json`` (:meth:`~lm_eval_stereo.export.identity.ModelIdentity.repo_path`) and, for a run
logged with ``--log_samples``, the per-item sidecar ``<evaluation_id>_samples.jsonl`` beside it, which the record's
``detailed_evaluation_results`` names by that same datastore path, with its sha256 and row count.

Both are written whole, together and only inside the output folder (:func:`~lm_eval_stereo.core.whole_files.
write_files`): exporting a run again replaces its earlier record and sidecar only once both new files are whole, and
a link on the way that leads outside the output folder stops the export."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lm_eval_stereo.core.whole_files import write_files
from lm_eval_stereo.export.collect import RunExport
from lm_eval_stereo.export.eee import evaluation_id, record
from lm_eval_stereo.export.headlines import Omission
from lm_eval_stereo.export.identity import ModelIdentity
from lm_eval_stereo.export.instances import instance_lines


def write_run(
    export: RunExport, output: Path, identity: ModelIdentity, *, relationship: str, organization: str
) -> tuple[list[Path], list[Omission]]:
    """Write the record (and sidecar) of one run of the model ``identity`` below ``output``; the files written and
    the items left out. :class:`~lm_eval_stereo.core.whole_files.WriteError` naming the file when they cannot be
    written (nothing of the run replaced)."""
    run = export.run
    identifier = evaluation_id(run)
    record_path = output / identity.repo_path(f"{identifier}.json")
    sidecar_path = output / identity.repo_path(f"{identifier}_samples.jsonl")
    files: dict[Path, bytes | str] = {}
    omitted: list[Omission] = []
    lines: list[dict] = []
    for task_items in export.item_sets:
        found, skipped = instance_lines(task_items, identifier, identity.id)
        lines += found
        omitted += skipped
    detailed = None
    if lines:
        payload = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        files[sidecar_path] = payload
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
    files[record_path] = json.dumps(entry, indent=2, ensure_ascii=False) + "\n"
    written = write_files(files, within=output)  # the sidecar first: a record never names one not yet in place
    return [written[-1], *written[:-1]], omitted
