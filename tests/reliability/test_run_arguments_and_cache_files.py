"""Trust at scale (issue 54), through ``lm_eval`` on the tiny seeded model: model arguments known from what the user
passed, files kept inside ``--output_path``, the ``--use_cache`` file read as data, requests longer than ``hf``'s
``max_length`` counted. The served cases (credentials in
every file a served run writes, served answers checked) are in ``tests/backends/test_served.py``, beside the real server.

CPU cost (2-core machine, the forked ``lm_eval`` runs): about 12 runs of a few seconds each on 1-2 documents of
``gest_en`` (and ``rubia_lgbtq``) and one in-process ``simple_evaluate``: about a minute in all.
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


def test_simple_evaluate_reads_the_model_arguments_it_is_given(tiny_causal, monkeypatch):
    """``simple_evaluate`` in a script: its ``model_args`` (text or a dict) are the model arguments, its
    ``metadata`` the options. (On the plugin-only index, as every lm_eval run of the suite: a full one reads every
    YAML of lm_eval's, about 7 CPU-seconds a call.)"""
    import lm_eval

    from lm_eval_stereo.core.errors import OptionError
    from lm_eval_stereo.hooks.tasks import ONLY_PLUGIN_TASKS_ENV

    monkeypatch.setenv(ONLY_PLUGIN_TASKS_ENV, "1")
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


# --- 4. and 5. the --use_cache file is data, and knows what produced its answers ------------------------------------

ADVICE = "give this run its own --use_cache path (one per backend and model), or delete that file"


class Payload:
    """A pickle that runs code when it is read: it creates the file ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.path}",))


@pytest.fixture(scope="module")
def written_cache(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cache of one ``hf`` run of the tiny model (its first document)."""
    folder = tmp_path_factory.mktemp("written_cache")
    run_lm_eval([*hf_args(tiny_causal, limit=1), "--use_cache", str(folder / "requests")], folder / "out")
    return folder / "requests_rank0.db"


def cached_run(model: Path, cache: Path, folder: Path, *more: str) -> LmEvalRun:
    """An ``hf`` run of ``model`` with ``--use_cache`` at ``cache`` (the ``_rank0.db`` file lm_eval opens)."""
    prefix = str(cache).removesuffix("_rank0.db")
    return run_lm_eval([*hf_args(model, *more, limit=1), "--use_cache", prefix], folder, check=False)


def assert_stopped(run: LmEvalRun, line: str, *, prefix: bool = False) -> None:
    assert run.returncode == 2 and run.results == {}, run.stderr[-3000:]
    last = last_line(run)
    assert last.startswith(line) and last.endswith(ADVICE) if prefix else last == line, last
    assert "Traceback" not in run.stderr and "Requests remaining" not in run.stderr


@pytest.mark.parametrize(
    ("setting", "difference"),
    [
        ("add_bos_token=True", "add_bos_token=(not set) (this run: True)"),
        ("max_length=256", "max_length=512 (this run: 256)"),
    ],
)
def test_a_cache_reused_with_a_model_argument_that_changes_the_answers_stops_naming_it(
    tiny_causal, written_cache, tmp_path, setting, difference
):
    cache = tmp_path / written_cache.name
    cache.write_bytes(written_cache.read_bytes())
    run = cached_run(tiny_causal, cache, tmp_path / "out", setting)
    line = f"lm-eval-stereo: --use_cache: {cache} holds answers given with {difference}"
    assert_stopped(run, line, prefix=True)
    assert last_line(run).count("(this run:") == 1  # the one difference, nothing else


def test_the_same_run_reads_its_cache_and_new_weights_in_the_same_folder_stop_it(tiny_causal, tmp_path):
    import shutil

    from lm_eval_stereo.local_models.tiny import build_causal_lm

    model = Path(shutil.copytree(tiny_causal, tmp_path / "model"))
    cache = tmp_path / "requests_rank0.db"
    first = cached_run(model, cache, tmp_path / "first")
    assert first.returncode == 0 and "Requests remaining: 0" not in first.stderr
    again = cached_run(model, cache, tmp_path / "again")
    assert again.returncode == 0 and "Requests remaining: 0" in again.stderr

    other = build_causal_lm(tmp_path / "other", seed=1)
    (model / "model.safetensors").write_bytes((other / "model.safetensors").read_bytes())
    run = cached_run(model, cache, tmp_path / "out")
    line = f"lm-eval-stereo: --use_cache: {cache} holds answers given with weights=files-sha256:"
    assert_stopped(run, line, prefix=True)
    assert last_line(run).count("(this run: files-sha256:") == 1


def sqlite_file(path: Path, *statements: str) -> Path:
    import sqlite3

    with sqlite3.connect(path) as connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()
    return path


def test_a_damaged_foreign_or_malformed_cache_file_stops_in_one_line_and_runs_no_pickle(
    tiny_causal, written_cache, tmp_path
):
    import pickle
    import sqlite3

    ran = tmp_path / "payload_ran"
    old = tmp_path / "old_rank0.db"
    old.write_bytes(written_cache.read_bytes())
    with sqlite3.connect(old) as connection:  # an older plugin's record: a pickle among the answers
        connection.execute("DROP TABLE lm_eval_stereo_answers_of")
        connection.execute(
            'INSERT INTO "unnamed" VALUES (?, ?)', ("lm_eval_stereo:answers_of", pickle.dumps(Payload(ran)))
        )
    connection.close()
    truncated = tmp_path / "truncated_rank0.db"
    truncated.write_bytes(written_cache.read_bytes()[: written_cache.stat().st_size // 2])
    text = tmp_path / "text_rank0.db"
    text.write_text("not a database\n")
    foreign = sqlite_file(tmp_path / "foreign_rank0.db", "CREATE TABLE users (name TEXT)")
    malformed = tmp_path / "malformed_rank0.db"
    malformed.write_bytes(written_cache.read_bytes())
    sqlite_file(malformed, "UPDATE lm_eval_stereo_answers_of SET record = '[1, 2]'")
    expected = {
        old: "was written by an older lm-eval-stereo, which kept its record of whose answers it holds as a pickle: "
        "not read (a pickle runs code)",
        truncated: "is a damaged SQLite database (",
        text: "is not an SQLite database (lm_eval's --use_cache files are)",
        foreign: "is an SQLite database but no lm_eval answer cache (tables users)",
        malformed: "has a record of whose answers it holds that is no JSON object of texts naming the backend",
    }
    for cache, problem in expected.items():
        run = cached_run(tiny_causal, cache, tmp_path / cache.stem)
        assert_stopped(run, f"lm-eval-stereo: --use_cache: {cache} {problem}", prefix=True)
    assert not ran.exists()


# --- 7. requests longer than the model's window, counted (hf) ------------------------------------------------------


def test_hf_requests_longer_than_max_length_are_counted_scored_cut_or_not_at_all(tiny_causal, tmp_path, capsys):
    """``max_length=24``: every request of gest_en's first two documents (contexts of 28-57 tokens) is scored on its
    context cut from the left, as lm_eval's ``hf`` cuts it; RuBia's sentences (the continuation, 25 tokens and more)
    do not fit at all: lm_eval ended the run in a bare ``AssertionError``, they are now not scored (``unscored``).
    Both counted per task as ``truncated``, one warning line, the report's caveat; a rerun from ``--use_cache`` reads
    the answers with their marks (the same counts)."""
    from lm_eval_stereo.cli import main

    args = hf_args(tiny_causal, "max_length=24")
    args[args.index(TASK)] = f"{TASK},rubia_lgbtq"
    args += ["--log_samples", "--use_cache", str(tmp_path / "cache")]
    first = run_lm_eval(args, tmp_path / "first")
    again = run_lm_eval(args, tmp_path / "again")
    assert "Requests remaining: 0" in again.stderr
    for run in (first, again):
        assert "Traceback" not in run.stderr
        assert (run.metric(TASK, "truncated"), run.metric(TASK, "count"), run.metric(TASK, "unscored")) == (2, 2, 0)
        rubia = ("truncated", "count", "unscored")
        assert tuple(run.metric("rubia_lgbtq", name) for name in rubia) == (2, 0, 2)
    assert [sample["resps"] for sample in again.samples[TASK]] == [sample["resps"] for sample in first.samples[TASK]]
    assert (
        "hf: 12 request(s) longer than the model's window of 24 tokens: 8 scored on their context cut from the left, 4 "
        "not scored (the continuation alone is longer); counted per task as 'truncated': raise max_length in "
        "--model_args" in first.stderr
    )
    assert main(["report", str(tmp_path / "first"), "--details"]) == 0
    assert "truncated = 2: items with a request longer than the model's window" in capsys.readouterr().out
