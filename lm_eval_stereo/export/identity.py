"""Which model a record is about, and where the datastore keeps it.

The Every Eval Ever datastore files a record under ``data/<collection>/<developer>/<model>/<uuid>.json``, the folder
names built from ``model_info.id`` as its own helpers build them (``every_eval_ever/helpers/io.py``,
``datastore_path_components``): the id's first ``/`` part is the developer, the rest the model with ``/`` and ``:``
turned into ``_``; an empty, ``unknown`` or unportable part names no folder. So a record needs the hub id of the
weights (``ORG/NAME``): a hub id given as ``pretrained=`` is used as it is; a run on a local folder (or on a bare
name) takes it from ``--model-id``, and without it the export stops. It never publishes developer ``unknown``.

What the id does not say goes into ``model_info.additional_details``: the local folder, the run's dtype, and for a
folder of ``lm-eval-stereo real-model`` the GGUF it was dequantised from, its quantisation and its sha256.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from lm_eval_stereo.results.model_names import is_local_path, model_name
from lm_eval_stereo.results.run import Run

#: the datastore collection of these records (``data/<collection>/<developer>/<model>/``)
COLLECTION = "lm-eval-stereo"
#: EEE's ``model_availability``
AVAILABILITIES = ("open_weights", "closed_weights", "unknown")
#: what a record says when ``model_args`` sets no dtype
DEFAULT_DTYPE = "default (model config)"
#: characters a datastore folder name may not hold (the validator's portable-name rule)
_UNPORTABLE = re.compile(r'[<>:"\\|?*\x00-\x1f]')
#: a Hugging Face hub id as the hub accepts one: ``ORG/NAME``, each part letters, digits, ``-``, ``_`` and ``.``,
#: starting and ending with a letter or digit, at most 96 characters, no ``--`` or ``..`` (huggingface_hub's
#: ``validate_repo_id``)
HUB_ID_RULE = (
    "ORG/NAME, each part 1-96 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, "
    "without '--' or '..'"
)
_HUB_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?")
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


class IdentityError(ValueError):
    """A model that names no datastore folder: no hub id, or one that cannot be a folder name."""


@dataclass(frozen=True)
class ModelIdentity:
    """The model of one run as published: its hub id, its datastore folders and what the id does not say."""

    id: str
    developer: str
    #: the model's folder name in the datastore (the id after its developer, ``/`` and ``:`` as ``_``)
    folder: str
    details: dict[str, str] = field(default_factory=dict)

    def repo_path(self, filename: str) -> str:
        """The datastore path of one of its files: ``data/<collection>/<developer>/<model>/<filename>``."""
        return f"data/{COLLECTION}/{self.developer}/{self.folder}/{filename}"


def _component(value: str, what: str, model_id: str) -> str:
    value = value.strip().replace(":", "_")
    if not value or value.lower() == "unknown":
        raise IdentityError(f"{model_id!r}: its {what} is {'empty' if not value else 'unknown'}")
    if value in (".", "..", "data") or _UNPORTABLE.search(value) or value.endswith((".", " ")):
        raise IdentityError(f"{model_id!r}: its {what} {value!r} is no portable datastore folder name")
    if value.split(".", 1)[0].upper() in _RESERVED:
        raise IdentityError(f"{model_id!r}: its {what} {value!r} is a reserved file name")
    return value


def datastore_folders(model_id: str) -> tuple[str, str]:
    """The developer and model folder names of a hub id, as the datastore builds them; IdentityError when the id
    names no developer (``ORG/NAME`` expected) or a part is empty, ``unknown`` or unportable."""
    parts = model_id.strip().split("/")
    if len(parts) < 2:
        raise IdentityError(f"{model_id!r} names no developer: expected the hub id ORG/NAME")
    developer = _component(parts[0], "developer", model_id)
    names = [_component(part, "model name", model_id) for part in parts[1:]]
    return developer, "_".join(names)


def check_hub_id(model_id: str) -> None:
    """IdentityError naming :data:`HUB_ID_RULE` when ``model_id`` is no hub id (spaces, a third part, ``--``...)."""
    parts = model_id.split("/")
    valid = len(parts) == 2 and all(_HUB_PART.fullmatch(part) for part in parts)
    if not valid or "--" in model_id or ".." in model_id:
        raise IdentityError(f"{model_id!r} is no hub id: expected {HUB_ID_RULE}")


def parse_model_ids(entries: list[str]) -> tuple[str | None, dict[str, str]]:
    """``--model-id`` entries: ``ORG/NAME`` (for the one local model of the runs) and ``PRETRAINED=ORG/NAME``;
    IdentityError for an id that is no hub id (:func:`check_hub_id`) or names no datastore folder."""
    plain: str | None = None
    by_pretrained: dict[str, str] = {}
    for entry in entries:
        pretrained, equals, hub_id = entry.rpartition("=")
        check_hub_id(hub_id.strip())
        datastore_folders(hub_id)
        if equals:
            by_pretrained[pretrained.strip()] = hub_id.strip()
        elif plain is not None and plain != hub_id.strip():
            raise IdentityError(f"two ids ({plain}, {hub_id.strip()}): give each as PRETRAINED=ORG/NAME")
        else:
            plain = hub_id.strip()
    return plain, by_pretrained


def _hub_id(pretrained: str) -> bool:
    return bool(pretrained) and not is_local_path(pretrained) and "/" in pretrained.strip().strip("/")


def needs_model_id(run: Run) -> bool:
    """Whether the run's ``pretrained=`` is no hub id (a local folder, a bare name, none), so ``--model-id`` names
    the weights."""
    return not _hub_id(run.model_args.get("pretrained", ""))


def dtype(run: Run) -> str:
    """The dtype the run loaded the weights in (``model_args`` ``dtype=``), else :data:`DEFAULT_DTYPE`."""
    return run.model_args.get("dtype") or DEFAULT_DTYPE


def weights_details(pretrained: str) -> dict[str, str]:
    """The GGUF, quantisation and sha256 of a folder made by ``lm-eval-stereo real-model`` (its marker file), read
    where the folder is (relative paths from here); empty for any other folder or one not here."""
    from lm_eval_stereo.local_models.real import MARKER, REAL_MODELS

    marker = Path(pretrained).expanduser() / MARKER
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    sha256 = recorded.get("gguf_sha256") if isinstance(recorded, dict) else None
    if not isinstance(sha256, str):
        return {}
    details = {"weights_sha256": sha256}
    known = next((model for model in REAL_MODELS.values() if model.sha256 == sha256), None)
    if known is not None:
        details |= {
            "weights_file": known.gguf_name,
            "quantisation": f"{known.quantisation} (GGUF), dequantised to float32",
        }
    return details


def identify(run: Run, plain: str | None, by_pretrained: dict[str, str], *, availability: str) -> ModelIdentity:
    """The identity of ``run``'s model: the hub id in ``pretrained=``, else its ``--model-id``; IdentityError naming
    ``--model-id`` when there is neither."""
    pretrained = run.model_args.get("pretrained", "")
    if _hub_id(pretrained):
        model_id = pretrained.strip()
    elif pretrained in by_pretrained or plain is not None:
        model_id = by_pretrained.get(pretrained, plain or "")
    else:
        shown = f"pretrained={pretrained}" if pretrained else f"the backend {run.model}"
        raise IdentityError(
            f"{shown} is no hub id: give the hub id of its weights with --model-id ORG/NAME "
            "(several models: --model-id PRETRAINED=ORG/NAME)"
        )
    developer, folder = datastore_folders(model_id)
    details = {
        "deployment_type": "self_deployed",
        "model_availability": availability,
        "lm_eval_backend": run.model,
        "dtype": dtype(run),
    }
    if run.model_args.get("revision"):
        details["revision"] = run.model_args["revision"]
    if pretrained and not _hub_id(pretrained):
        details["local_path"] = pretrained
        details |= weights_details(pretrained)
    return ModelIdentity(model_id, developer, folder, details)


def display_name(run: Run, plain: str | None, by_pretrained: dict[str, str]) -> str:
    """The model's name for a person: its hub id where one is known, else its folder name (the model-card title)."""
    pretrained = run.model_args.get("pretrained", "")
    if _hub_id(pretrained):
        return pretrained.strip()
    found = by_pretrained.get(pretrained, plain)
    return found or (model_name(pretrained) if pretrained else run.model)
