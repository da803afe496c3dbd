"""The upstream pandas pickles of multilingual StereoSet as rows, and the JSON-lines copies of them that an offline
mirror holds instead (the source's ``mirror_files``, made by :func:`mirror_copies`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lm_eval_stereo.tasks.stereoset_multi.metrics import CANDIDATES

#: the columns of the mirror's JSON-lines copies, in their order (``target_original``: translations only, ``c*_word``:
#: intrasentence only)
JSONL_FIELDS = (
    "id",
    "target",
    "target_original",
    "bias_type",
    "context",
    *(f"c{c}_{name}" for c in CANDIDATES for name in ("id", "gold_label", "word", "sentence")),
)


def pickle_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a verified upstream pickle, without the per-annotator ``c*_labels`` lists."""
    from lm_eval_stereo.core.safe_pickle import load_dataframe  # here: pandas takes half a second to import

    frame = load_dataframe(Path(path))
    frame = frame.drop(columns=[c for c in frame.columns if c.endswith("_labels")])
    return frame.to_dict(orient="records")


def mirror_copies(path: str, file: Path) -> dict[str, bytes]:
    """The offline mirror's JSON-lines copy of the upstream pickle ``path`` (read from ``file``): one object per row
    in :data:`JSONL_FIELDS` order, UTF-8. Byte-identical to the pinned ``mirror_files``, so a mirror written from the
    download cache spares the compute nodes the unpickling. Other files have no copy."""
    if not path.endswith(".pkl") or not path.startswith("create_dataset/data/"):
        return {}
    lines = [
        json.dumps({key: row[key] for key in JSONL_FIELDS if key in row}, ensure_ascii=False)
        for row in pickle_rows(file)
    ]
    return {path.removesuffix(".pkl") + ".jsonl": "".join(f"{line}\n" for line in lines).encode("utf-8")}
