"""The evaluated model's tokenizer, resolved from the model arguments that lm_eval passes to a task as metadata."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.errors import ModelFolderError
from lm_eval_stereo.core.values import flag

#: a text every tokenizer encodes to at least one token
PROBE = "A tokenizer encodes this sentence."


def tokenizer_name(metadata: Mapping[str, Any]) -> str | None:
    """The ``tokenizer=`` or else ``pretrained=`` model argument, if it names one."""
    name = metadata.get("tokenizer") or metadata.get("pretrained")
    return name if isinstance(name, str) and name else None


def require_tokenizer(metadata: Mapping[str, Any], needs: str, remedy: str = "pass one in --model_args") -> None:
    """Raise, naming what ``needs`` the tokenizer and the ``remedy``, where the model arguments name no tokenizer."""
    if tokenizer_name(metadata) is None:
        raise ValueError(
            f"{needs} with the evaluated model's tokenizer, but no tokenizer= or pretrained= model argument was given: "
            f"{remedy}"
        )


@functools.lru_cache(maxsize=8)
def _load(name: str, revision: str | None, trust_remote_code: bool) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name, revision=revision, trust_remote_code=trust_remote_code)


def load_tokenizer(metadata: Mapping[str, Any]) -> Any:
    """The tokenizer named by the model arguments (cached), with their ``revision`` and ``trust_remote_code`` (a truth
    value, :func:`~lm_eval_stereo.core.values.flag`); raises when none is named, ``trust_remote_code`` is not true or
    false, or the tokenizer cannot be loaded."""
    name = tokenizer_name(metadata)
    if name is None:
        raise ValueError("no tokenizer= or pretrained= model argument")
    return _load(name, metadata.get("revision"), flag(metadata.get("trust_remote_code") or False, "trust_remote_code"))


def check_local_tokenizer(metadata: Mapping[str, Any]) -> None:
    """Stop in one line naming the folder (:class:`~lm_eval_stereo.core.errors.ModelFolderError`) where the model
    arguments name a local folder whose tokenizer encodes a text to no token: a folder without tokenizer files, from
    which transformers builds an empty tokenizer (lm_eval's ``hf`` then ends in an ``IndexError``). Names that are no
    local folder (hub ids, served models) are left to their backend."""
    name = tokenizer_name(metadata)
    if name is None or not Path(name).expanduser().is_dir():
        return
    if not load_tokenizer(metadata)(PROBE, add_special_tokens=False)["input_ids"]:
        raise ModelFolderError(
            f"{name}: its tokenizer encodes every text to no token (the folder holds no tokenizer files, e.g. "
            "tokenizer.json or tokenizer_config.json with its vocabulary): add them, or name the model's tokenizer "
            "with --model_args tokenizer=<folder or hub id>"
        )
