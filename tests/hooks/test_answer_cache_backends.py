"""The answer cache's record of whose answers it holds names the backend under a key of its own, so that an API model's
own ``model=`` argument no longer replaces it (issue 60): an in-process ``hf`` run on a ``local-completions`` cache
stops in one line naming both backends. ``local-completions`` answers from the fault-injecting stand-in
(tests/openai_stand_in.py, well-formed answers here: no fault), as a real server would; only the cache's record is
under test. A record an earlier version wrote (the backend under ``model``) is read in its own form.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from lm_eval_runner import run_lm_eval

from lm_eval_stereo.core import answer_record
from lm_eval_stereo.hooks.answer_cache import backend_name, claim


@pytest.fixture
def stand_in():
    from openai_stand_in import serve_stand_in

    with serve_stand_in() as server:
        yield server


def test_an_hf_run_on_a_served_model_s_cache_names_both_backends(stand_in, tiny_causal: Path, tmp_path: Path):
    prefix = tmp_path / "cache" / "requests"
    served = ["--model", "local-completions", "--model_args"]
    served += [f"model=stand-in-model,base_url={stand_in.base}/v1/completions,tokenizer={tiny_causal}"]
    common = ["--tasks", "gest_en", "--limit", "1", "--use_cache", str(prefix)]
    run_lm_eval([*served, *common], tmp_path / "served")
    database = f"{prefix}_rank0.db"
    with sqlite3.connect(database) as connection:
        (record,) = connection.execute(f'SELECT record FROM "{answer_record.RECORD_TABLE}"').fetchone()
    connection.close()
    assert json.loads(record)["backend"] == "local-completions" and json.loads(record)["model"] == "stand-in-model"

    run = run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal}", *common], tmp_path / "hf", check=False
    )
    line = run.stderr.strip().splitlines()[-1]
    assert run.returncode == 2 and run.results == {}, run.stderr[-3000:]
    assert line.startswith(
        f"lm-eval-stereo: --use_cache: {database} holds answers given with backend=local-completions (this run: hf); "
        "model=stand-in-model (this run: (not set)); "
    ), line
    assert line.endswith(answer_record.ADVICE) and "Traceback" not in run.stderr


class LmEvalBackend:
    """Stands for one of lm_eval's own backends (its class is not the plugin's)."""

    pretrained = "org/model"


def earlier_cache(path: Path, record: dict[str, str]) -> str:
    """A cache holding one answer and ``record`` as an earlier version kept it (the backend under ``model``)."""
    with sqlite3.connect(path) as connection:
        connection.execute(f'CREATE TABLE "{answer_record.ANSWERS_TABLE}" (key TEXT PRIMARY KEY, value BLOB)')
        connection.execute(f'INSERT INTO "{answer_record.ANSWERS_TABLE}" VALUES (?, ?)', ("a1b2", b"x"))
        connection.execute(f'CREATE TABLE "{answer_record.RECORD_TABLE}" (record TEXT NOT NULL)')
        connection.execute(f'INSERT INTO "{answer_record.RECORD_TABLE}" VALUES (?)', (json.dumps(record),))
    connection.close()
    return str(path)


def test_a_record_of_an_earlier_version_is_read_in_its_own_form(tmp_path: Path, capsys):
    backend = LmEvalBackend()
    same = earlier_cache(tmp_path / "same.db", {"model": backend_name(backend), "pretrained": "org/model"})
    assert claim(same, backend) is False  # the same backend and model: used, not refused
    other = earlier_cache(tmp_path / "other.db", {"model": "hf", "pretrained": "org/model"})
    with pytest.raises(SystemExit) as stopped:
        claim(other, backend)
    assert stopped.value.code == 2
    assert capsys.readouterr().err == (
        f"lm-eval-stereo: --use_cache: {other} holds answers given with model=hf (this run: {backend_name(backend)}), "
        f"which change the answers: {answer_record.ADVICE}\n"
    )
