"""Trust at scale (issue 54), through ``lm_eval`` on the tiny seeded model: model arguments known from what the user
passed, files kept inside ``--output_path``, the ``--use_cache`` file read as data. The served cases (credentials in
every file a served run writes, served answers checked) are in ``tests/test_served.py``, beside the real server.

CPU cost (2-core machine, the forked ``lm_eval`` runs): about 10 runs of a few seconds each on 1-2 documents of
``gest_en`` and one in-process ``simple_evaluate``: about a minute in all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval

TASK = "gest_en"


def hf_args(pretrained: Path | str, *more: str, limit: int = 2) -> list[str]:
    arguments = ",".join([f"pretrained={pretrained}", "dtype=float32", *more])
    return ["--model", "hf", "--model_args", arguments, "--device", "cpu", "--tasks", TASK, "--limit", str(limit)]


def last_line(run: LmEvalRun) -> str:
    return run.stderr.strip().splitlines()[-1]


# --- 1. model arguments known exactly ---------------------------------------------------------------------------------


def test_a_model_argument_on_no_list_is_accepted_and_a_misspelt_option_stops_in_one_line(tiny_causal, tmp_path):
    """``use_safetensors=True`` reaches ``from_pretrained`` through HFLM's ``**kwargs``: no list of backends'
    arguments names it, and lm_eval merges it into every task's metadata; it is accepted because the user passed it
    in ``--model_args``. The same key in ``--metadata`` is no model argument: a task stops in one line."""
    run = run_lm_eval(hf_args(tiny_causal, "use_safetensors=True"), tmp_path / "accepted")
    assert run.metric(TASK, "count") == 2
    assert run.results["configs"][TASK]["metadata"]["use_safetensors"] is True

    misspelt = hf_args(tiny_causal) + ["--metadata", json.dumps({"gest_versoin": "1.1"})]
    stopped = run_lm_eval(misspelt, tmp_path / "misspelt", check=False)
    assert stopped.returncode == 2 and stopped.results == {}
    assert last_line(stopped) == (
        f"lm-eval-stereo: task {TASK}: unknown --metadata key 'gest_versoin' (did you mean 'gest_version'?); this task "
        "accepts: gest_version (default '1.1'). Model arguments belong in --model_args."
    )
    assert "Traceback" not in stopped.stderr

    not_passed = hf_args(tiny_causal) + ["--metadata", json.dumps({"use_safetensors": True})]
    stopped = run_lm_eval(not_passed, tmp_path / "as_metadata", check=False)
    assert stopped.returncode == 2
    assert last_line(stopped).startswith(f"lm-eval-stereo: task {TASK}: unknown --metadata key 'use_safetensors';")


def test_simple_evaluate_reads_the_model_arguments_it_is_given(tiny_causal):
    """``simple_evaluate`` in a script: its ``model_args`` (text or a dict) are the model arguments, its
    ``metadata`` the options."""
    import lm_eval

    from lm_eval_stereo.core.errors import OptionError

    common = {"model": "hf", "tasks": [TASK], "limit": 1, "device": "cpu", "bootstrap_iters": 0}
    results = lm_eval.simple_evaluate(model_args=f"pretrained={tiny_causal},use_safetensors=True", **common)
    assert results["results"][TASK]["count,none"] == 1
    with pytest.raises(OptionError, match="unknown --metadata key 'use_safetensor'"):
        lm_eval.simple_evaluate(
            model_args={"pretrained": str(tiny_causal), "use_safetensors": True},
            metadata={"use_safetensor": True},
            **common,
        )


# --- 3. files stay inside --output_path -------------------------------------------------------------------------------


def test_a_model_named_dot_dot_writes_inside_output_path(tiny_causal, tmp_path):
    """``pretrained=..`` from a folder inside the model's: lm_eval names the run's folder after the model, and wrote
    ``results_*.json`` and the samples one folder above ``--output_path``."""
    model = tmp_path / "model"
    model.mkdir()
    for path in tiny_causal.iterdir():
        (model / path.name).symlink_to(path)
    output = model / "out"  # lm_eval runs in --output_path (tests/lm_eval_runner.py): ".." is the model's folder
    run = run_lm_eval([*hf_args("..", limit=1), "--log_samples"], output)
    assert run.metric(TASK, "count") == 1
    written = sorted(path.relative_to(output).as_posix() for path in output.rglob("*_*.json*"))
    assert [name.split("/")[0] for name in written] == ["__", "__"], written
    assert not list(model.glob("results_*.json")) and not list(model.glob("samples_*"))
