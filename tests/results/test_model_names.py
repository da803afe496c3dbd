"""Model names for a person: a hub id as given, a local folder by its folder name."""

from __future__ import annotations

import pytest

from lm_eval_stereo.results.model_names import is_local_path, model_name


@pytest.mark.parametrize(
    "pretrained, name, local",
    [
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct", False),
        ("gpt2", "gpt2", False),
        (".cache/real-models/smollm2", "smollm2", True),
        (".cache/demo-model", "demo-model", True),
        ("/scratch/me/ckpt-1000/", "ckpt-1000", True),
        ("./model", "model", True),
        ("../runs/model", "model", True),
        ("~/models/tiny", "tiny", True),
    ],
)
def test_hub_ids_stay_local_folders_are_named_by_their_folder(pretrained: str, name: str, local: bool) -> None:
    assert model_name(pretrained) == name
    assert is_local_path(pretrained) is local
