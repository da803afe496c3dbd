"""How a model is named for a person: a hub id as given, a local folder by its folder name.

lm_eval records the model as ``pretrained=`` in ``config.model_args``: a hub id (``HuggingFaceTB/SmolLM2-135M``) or a
path on the machine that ran it (``.cache/real-models/smollm2``, ``/scratch/me/ckpt-1000``). A path says where the
files were, not what the model is, and differs between machines; its folder name is what people call it.
"""

from __future__ import annotations

from pathlib import PurePosixPath


def is_local_path(pretrained: str) -> bool:
    """Whether ``pretrained`` names a local folder rather than a hub id (``org/name``): an absolute path, one starting
    with ``.`` (``./``, ``../``, a hidden folder such as ``.cache/model``: no hub name starts with a dot) or ``~``, or
    one with more than one ``/``."""
    text = pretrained.strip()
    return text.startswith(("/", ".", "~")) or text.rstrip("/").count("/") > 1


def model_name(pretrained: str) -> str:
    """A hub id as given; a local folder by its folder name (``.cache/real-models/smollm2`` → ``smollm2``)."""
    text = pretrained.strip()
    if not is_local_path(text):
        return text
    return PurePosixPath(text.rstrip("/")).name or text
