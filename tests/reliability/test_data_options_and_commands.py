"""The bad-input and fault battery: every case ends in a counted metric or in an error that names the file, row and
field, or the option; never in a silent wrong number. The README's reliability section lists these cases."""

from __future__ import annotations

import csv
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures_mlm import tiny_bert  # noqa: F401  (session fixture)
from lm_eval_runner import REPO, TESTS, UNPRIVILEGED, LmEvalRun, run_command, run_lm_eval, shared_data_dir

from lm_eval_stereo.core import options, sources
from lm_eval_stereo.core.errors import ChecksumError, DataError, DataUnavailableError, MalformedDataError, OptionError
from lm_eval_stereo.core.readers import read_csv, read_jsonl
from lm_eval_stereo.core.safe_pickle import load_dataframe
from lm_eval_stereo.tasks.german_gender_bias import data as german_data
from lm_eval_stereo.tasks.german_gender_bias.gerbbq import task as gerbbq_task
from lm_eval_stereo.tasks.german_gender_bias.personas import task as persona_task
from lm_eval_stereo.tasks.german_gender_bias.sexist_statements import task as sexist_statements_task
from lm_eval_stereo.tasks.gest import data as gest_data
from lm_eval_stereo.tasks.stereoset_multi import data as stereoset_data
from lm_eval_stereo.tasks.stereoset_multi import task as stereoset_task
from lm_eval_stereo.tasks.stereoset_multi import task_mlm as stereoset_mlm

FIXTURES = TESTS / "fixtures"
INTRA = "create_dataset/data/intrasentence/df_intrasentence_en.jsonl"


# ------------------------------------------------------------------------------------------------------- data


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the StereoSet part of the offline mirror, in use for the test."""
    root = tmp_path / "mirror"
    shutil.copytree(shared_data_dir() / "stereoset-multi", root / "stereoset-multi")
    monkeypatch.setenv(sources.DATA_DIR_ENV, str(root))
    return root / "stereoset-multi"


def test_truncated_file_is_refused_by_its_checksum(mirror: Path) -> None:
    target = mirror / INTRA
    target.chmod(0o644)
    target.write_bytes(target.read_bytes()[:1000])
    with pytest.raises(ChecksumError, match=r"checksum mismatch for .*df_intrasentence_en\.jsonl"):
        stereoset_data.load_rows("en")


def test_flipped_byte_is_refused_by_its_checksum(mirror: Path) -> None:
    target = mirror / INTRA
    target.chmod(0o644)
    data = bytearray(target.read_bytes())
    data[500] ^= 0x01
    target.write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match="The file was not used"):
        sources.fetch("stereoset-multi", INTRA)


def test_missing_file_names_the_file_and_the_variable(mirror: Path) -> None:
    (mirror / INTRA).unlink()
    with pytest.raises(DataUnavailableError, match=r"df_intrasentence_en\.jsonl is missing .* LM_EVAL_STEREO_DATA_DIR"):
        sources.fetch("stereoset-multi", INTRA)


def test_directory_instead_of_a_file(mirror: Path) -> None:
    (mirror / INTRA).unlink()
    (mirror / INTRA).mkdir()
    with pytest.raises(
        DataUnavailableError, match=r"df_intrasentence_en\.jsonl in the offline mirror .* is a directory"
    ):
        sources.fetch("stereoset-multi", INTRA)


def test_offline_without_a_mirror_says_how_to_get_the_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(sources.OFFLINE_ENV, "1")
    with pytest.raises(DataUnavailableError, match="LM_EVAL_STEREO_OFFLINE is set. Set LM_EVAL_STEREO_DATA_DIR"):
        sources.fetch("gest", "data/gest.csv")


@pytest.mark.parametrize("where", ["a_file", "a_file/below"])
def test_cache_that_is_no_folder_names_the_variable(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a_file").write_text("not a folder")
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.delenv(sources.OFFLINE_ENV, raising=False)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / where))
    with pytest.raises(DataUnavailableError, match="point LM_EVAL_STEREO_CACHE at a writable directory"):
        sources.fetch("gest", "data/gest.csv")


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_csv_with_wrong_columns(tmp_path: Path) -> None:
    file = _write(tmp_path / "x.csv", "a,b\n1,2\n")
    with pytest.raises(MalformedDataError, match=r"x\.csv.*missing column\(s\) male"):
        read_csv(file, required=["male", "a"])


def test_empty_csv(tmp_path: Path) -> None:
    file = _write(tmp_path / "empty.csv", "")
    with pytest.raises(MalformedDataError, match=r"empty\.csv.*missing column\(s\) language"):
        read_csv(file, required=["language"])


def test_csv_row_with_extra_fields_names_the_record(tmp_path: Path) -> None:
    file = _write(tmp_path / "x.csv", 'a,b\n"multi\nline",2\n1,2,3\n')
    with pytest.raises(MalformedDataError, match=r"x\.csv, row 3: more fields than the header"):
        read_csv(file, required=["a"])  # record 3, physical line 4


def test_csv_row_with_missing_fields_names_the_field(tmp_path: Path) -> None:
    file = _write(tmp_path / "x.csv", "a,b\n1\n")
    with pytest.raises(MalformedDataError, match=r"x\.csv, row 2, field 'b': row has fewer fields"):
        read_csv(file, required=["a", "b"])


def test_csv_in_another_encoding(tmp_path: Path) -> None:
    file = _write(tmp_path / "latin.csv", "a\nMädchen\n", encoding="latin-1")
    with pytest.raises(MalformedDataError, match=r"latin\.csv: not valid utf-8 text .*save it as UTF-8"):
        read_csv(file, required=["a"])


def test_jsonl_in_another_encoding(tmp_path: Path) -> None:
    file = _write(tmp_path / "latin.jsonl", '{"a": "Mädchen"}\n', encoding="latin-1")
    with pytest.raises(MalformedDataError, match=r"latin\.jsonl: not valid utf-8 text"):
        read_jsonl(file)


def test_jsonl_with_a_broken_line(tmp_path: Path) -> None:
    file = _write(tmp_path / "x.jsonl", '{"a": 1}\n{"a": \n')
    with pytest.raises(MalformedDataError, match=r"x\.jsonl, row 2: invalid JSON"):
        read_jsonl(file)


def test_jsonl_line_that_is_no_object(tmp_path: Path) -> None:
    file = _write(tmp_path / "x.jsonl", '{"a": 1}\n[1, 2]\n')
    with pytest.raises(MalformedDataError, match=r"x\.jsonl, row 2: expected a JSON object, got list"):
        read_jsonl(file)


def test_pickle_with_a_payload_is_refused(tmp_path: Path) -> None:
    class Payload:
        def __reduce__(self):
            return (os.system, ("echo owned",))

    file = tmp_path / "evil.pkl"
    file.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(DataError, match=r"evil\.pkl.*(refus|not allowed)"):
        load_dataframe(file)


def _stereoset_raw(**changes: str) -> dict:
    raw = {"id": "x1", "target": "chess player", "bias_type": "race", "context": "The chess player was BLANK."}
    for c, label in zip((1, 2, 3), ("stereotype", "anti-stereotype", "unrelated")):
        raw |= {f"c{c}_id": f"c{c}", f"c{c}_gold_label": label, f"c{c}_sentence": f"s{c}", f"c{c}_word": f"w{c}"}
    return raw | changes


@pytest.mark.parametrize(
    ("changes", "field", "problem"),
    [
        ({"bias_type": "age"}, "bias_type", "unknown bias type 'age'"),
        ({"context": "The chess player was."}, "context", "intrasentence context has no BLANK"),
        ({"c2_gold_label": "stereotype"}, "c1_gold_label", "gold labels must be one each of"),
        ({"c3_sentence": " "}, "c3_sentence", "expected non-empty text"),
    ],
    ids=["unknown-bias-type", "no-BLANK", "wrong-gold-labels", "empty-sentence"],
)
def test_stereoset_row_errors_name_row_and_field(changes: dict, field: str, problem: str) -> None:
    convert = stereoset_data._convert_row
    with pytest.raises(MalformedDataError, match=rf"f\.pkl, row 7, field '{field}': {problem}"):
        convert(_stereoset_raw(**changes), test="intrasentence", lang="en", origin="f.pkl", row_number=7)


def test_duplicated_stereoset_ids() -> None:
    rows = [stereoset_data._convert_row(_stereoset_raw(), test="intrasentence", lang="en", origin="f", row_number=n)
            for n in (1, 2)]  # fmt: skip
    with pytest.raises(MalformedDataError, match=r"f, row 2, field 'id': duplicate id 'x1' \(first in row 1\)"):
        stereoset_data._require_unique_ids(rows, "f")


def test_gest_stereotype_out_of_range(tmp_path: Path) -> None:
    file = _write(tmp_path / "gest.csv", "sentence,stereotype\nI am strong.,17\n")
    with pytest.raises(MalformedDataError, match=r"gest\.csv, row 2, field 'stereotype'"):
        gest_data.load_gest(path=file)


def test_gerbbq_bad_gender_names_the_field() -> None:
    rows = read_csv(FIXTURES / "german" / "gerbbq_bad_gender.csv", delimiter=";")
    with pytest.raises(MalformedDataError, match=r"gerbbq_bad_gender\.csv, row \d+, field 'Gender\d'"):
        german_data.gerbbq_docs(rows, "gerbbq_bad_gender.csv")


def test_gerbbq_missing_column_names_it() -> None:
    with pytest.raises(MalformedDataError, match=r"gerbbq_missing_column\.csv.*missing column"):
        german_data.read_german_csv(FIXTURES / "german" / "gerbbq_missing_column.csv", ("full_prompt", "Answer"))


# ---------------------------------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("task_options", "given", "message"),
    [
        (stereoset_task.OPTIONS, {"normalisation": "byte"}, "unknown --metadata key 'normalisation' (did you mean"),
        (
            stereoset_task.OPTIONS,
            {"colour": "red"},
            "unknown --metadata key 'colour'; this task accepts: normalization",
        ),
        (stereoset_task.OPTIONS, {"normalization": "words"}, "'normalization' must be one of token, byte, none"),
        (stereoset_mlm.OPTIONS, {"span_mode": "left"}, "'span_mode' must be one of"),
        (gerbbq_task.OPTIONS, {"exclude_undetermined": "maybe"}, "'exclude_undetermined' must be true or false"),
        (persona_task.GenderPersonaTask.OPTIONS, {"cooccurrence_seed": "x"}, "'cooccurrence_seed' must be an integer"),
        (persona_task.GenderPersonaTask.OPTIONS, {"persona_wording": "odd"}, "'persona_wording' must be one of"),
    ],
    ids=["typo", "unknown", "bad-choice", "bad-span-mode", "bad-flag", "bad-integer", "bad-wording"],
)
def test_bad_options_name_the_option(task_options, given: dict, message: str) -> None:
    with pytest.raises(OptionError) as error:
        options.parse("the_task", task_options, {"pretrained": "m", "version": 1.0, **given}, ("pretrained",))
    assert message in str(error.value)


def test_options_of_other_tasks_and_model_arguments_are_accepted() -> None:
    given = {"pretrained": "m", "dtype": "float32", "trust_remote_code": True, "span_mode": "all", "judge_model": "hf"}
    passed = ("pretrained", "dtype", "trust_remote_code")
    parsed = options.parse("stereoset_multi_en", stereoset_task.OPTIONS, given, model_arguments=passed)
    assert parsed == {option.name: option.default for option in stereoset_task.OPTIONS}
    assert parsed["normalization"] == "token"


# ----------------------------------------------------------------------------------------------- model faults


def _nan_model(source: Path, target: Path, parameter: str) -> Path:
    """A copy of a tiny model whose ``parameter`` is NaN, so every score it gives is NaN."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForPreTraining, AutoTokenizer

    loader = AutoModelForPreTraining if "bert" in parameter else AutoModelForCausalLM
    model = loader.from_pretrained(source)
    with torch.no_grad():
        dict(model.named_parameters())[parameter].fill_(float("nan"))
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(source).save_pretrained(target)
    return target


@pytest.fixture(scope="module")
def nan_causal_run(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    model = _nan_model(tiny_causal, tmp_path_factory.mktemp("nan_causal"), "transformer.ln_f.weight")
    args = ["--model", "hf", "--model_args", f"pretrained={model},dtype=float32", "--device", "cpu", "--limit", "4"]
    return run_lm_eval([*args, "--tasks", "stereoset_multi_en,gerbbq_mc_amb,gest_en"], tmp_path_factory.mktemp("o"))


@pytest.mark.parametrize("task", ["stereoset_multi_en", "gerbbq_mc_amb", "gest_en"])
def test_nan_log_likelihoods_are_counted_not_scored(nan_causal_run: LmEvalRun, task: str) -> None:
    assert nan_causal_run.metric(task, "unscored") == 4
    if task == "stereoset_multi_en":
        assert nan_causal_run.metric(task, "count") == 0 and nan_causal_run.metric(task, "ties") == 0
        assert "4 items have a NaN or infinite score and are left out" in nan_causal_run.stderr
    if task == "gerbbq_mc_amb":
        accuracy = nan_causal_run.metric(task, "accuracy")
        assert accuracy != accuracy, "no answer may be picked from NaN scores"


def test_nan_masked_lm_scores_are_counted(tiny_bert: Path, tmp_path: Path) -> None:  # noqa: F811
    model = _nan_model(tiny_bert, tmp_path / "nan_bert", "cls.predictions.transform.LayerNorm.weight")
    run = run_lm_eval(
        ["--model", "hf-mlm", "--model_args", f"pretrained={model}", "--tasks", "gest_en_mlm", "--limit", "3"],
        tmp_path / "out",
    )
    assert run.metric("gest_en_mlm", "unscored") == 3
    assert run.metric("gest_en_mlm", "gs") != run.metric("gest_en_mlm", "gs")


def test_encoder_only_model_on_hf_says_use_hf_mlm(tiny_bert: Path, tmp_path: Path) -> None:  # noqa: F811
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_bert}", "--tasks", "stereoset_multi_en", "--limit", "2"]
    run = run_lm_eval(args, tmp_path, check=False)
    assert run.returncode != 0
    assert "is an encoder-only bert model" in run.stderr and "--model hf-mlm" in run.stderr


def test_masked_task_on_a_causal_backend_says_use_hf_mlm(tiny_causal: Path, tmp_path: Path) -> None:
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--tasks", "gest_en_mlm"]
    run = run_lm_eval([*args, "--limit", "2"], tmp_path, check=False)
    assert run.returncode != 0
    assert "make 'masked_span' requests (masked-LM scoring)" in run.stderr and "--model hf-mlm" in run.stderr


def test_causal_model_on_hf_mlm_names_the_right_backend(tiny_causal: Path, tmp_path: Path) -> None:
    args = ["--model", "hf-mlm", "--model_args", f"pretrained={tiny_causal}", "--tasks", "gest_en_mlm", "--limit", "2"]
    run = run_lm_eval(args, tmp_path, check=False)
    assert run.returncode != 0 and "has no masked-LM head class" in run.stderr and "use --model hf" in run.stderr


def test_tokenizer_without_bos_or_eos_explains_the_empty_context() -> None:
    """The plugin's view of ``hf`` (and ``hf-prefix``) says what to pass; lm_eval's own ``HFLM`` answers as it does."""
    from types import SimpleNamespace

    import lm_eval.models.huggingface as hf

    from lm_eval_stereo.models.view import view_of

    stock = object.__new__(hf.HFLM)
    stock.__dict__.update(custom_prefix_token_id=None, tokenizer=SimpleNamespace(bos_token_id=None, eos_token_id=None))
    assert stock.prefix_token_id is None
    with pytest.raises(ValueError, match="neither a BOS nor an EOS token.*prefix_token_id=<id>"):
        view_of(stock).prefix_token_id  # noqa: B018 - the property raises


def _recordings(tmp_path: Path, outputs: list[str]) -> Path:
    docs = gerbbq_task.load_dataset("amb")["test"]
    file = tmp_path / "recorded.csv"
    with open(file, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["full_prompt", "output"])
        writer.writerows([doc["full_prompt"], output] for doc, output in zip(docs, outputs))
    return file


def test_empty_and_foreign_language_generations_are_counted(tmp_path: Path) -> None:
    outputs = ["", "", "The person who is good at math is unknown.", "C: " + "unbekannt"]
    recordings = _recordings(tmp_path, outputs)
    run = run_lm_eval(
        ["--model", "replay", "--model_args", f"outputs={recordings}", "--tasks", "gerbbq_amb", "--limit", "4"],
        tmp_path / "out",
    )
    assert run.metric("gerbbq_amb", "empty") == pytest.approx(2 / 4)
    assert run.metric("gerbbq_amb", "undetermined") == pytest.approx(1 / 2)


def test_recordings_in_another_encoding_name_the_file(tmp_path: Path) -> None:
    from lm_eval_stereo.models.replay import ReplayLM

    file = _write(tmp_path / "latin.csv", "full_prompt;output\nMädchen?;ja\n", encoding="latin-1")
    with pytest.raises(MalformedDataError, match=r"latin\.csv: not valid utf-8 text .*save the recordings as UTF-8"):
        ReplayLM(outputs=str(file))


def test_sexist_statement_answers_outside_yes_no_are_undetermined() -> None:
    assert sexist_statements_task.book_generation("Peut-être.") is None
    assert sexist_statements_task.book_generation("") == "empty"


# ---------------------------------------------------------------------------------------------------- runs


def test_limit_zero_is_refused_by_lm_eval_with_its_reason(tiny_causal: Path, tmp_path: Path) -> None:
    """lm_eval 0.4.13 builds every document's requests before it finds that ``--limit 0`` kept none: a task of 212
    documents (GerBBQ's 5,684 took 27 CPU-seconds)."""
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--tasks", "s_jsd_en"]
    run = run_lm_eval([*args, "--limit", "0"], tmp_path, check=False)
    assert run.returncode != 0 and "did not find any docs" in run.stderr


def test_unwritable_output_folder_stops_before_the_run(tiny_causal: Path, tmp_path: Path) -> None:
    """``lm-eval-stereo`` checks ``--output_path`` before anything loads (plain ``lm_eval`` keeps lm_eval's command
    line, which logs it after the run)."""
    (tmp_path / "a_file").write_text("")
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal}", "--tasks", "gerbbq_mc_amb", "--limit", "2"]
    proc = run_command(*args, "--output_path", tmp_path / "a_file" / "out")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"lm-eval-stereo: --output_path {tmp_path / 'a_file' / 'out'} is not a writable folder (Not a directory)"
    )
    assert "Running loglikelihood requests" not in proc.stderr


def test_make_demo_checks_the_data_before_installing(tmp_path: Path) -> None:
    script = REPO / "scripts" / "check_data.py"
    env = {**os.environ, "LM_EVAL_STEREO_DATA_DIR": str(tmp_path / "nowhere")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert (
        "lacks stereoset-multi, gest, german-gender-bias, s_jsd-multilingual, crows-pairs, stereotype-leakage"
        in proc.stderr
        and "<dir>/<source>/<upstream path>" in proc.stderr
    )
    ok = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert ok.returncode == 0


def test_no_generic_metadata_warning_floods_a_suite_run(nan_causal_run: LmEvalRun) -> None:
    assert "Custom kwargs can be passed to `--metadata`" not in nan_causal_run.stderr + nan_causal_run.stdout


def test_results_json_records_the_options_in_force(nan_causal_run: LmEvalRun) -> None:
    config = nan_causal_run.results["configs"]["stereoset_multi_en"]["metadata"]
    assert config["normalization"] == "token" and json.dumps(config)
    assert config["data"] == "stereoset-multi@883f005dd9d0"  # the pinned upstream commit the items came from


# ------------------------------------------------------------------------------------------------- commands

#: a results folder of the report's fixtures (the argument checks run before it is read)
RESULTS = FIXTURES / "report_capability"


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Paths of every kind a user may give by mistake: missing, unreadable, of the wrong kind, not writable."""
    root = tmp_path_factory.mktemp("places")
    (root / "a_file").write_text("not a folder")
    (root / "non_empty").mkdir()
    (root / "non_empty" / "notes.txt").write_text("not a tokenizer, not a model")
    (root / "empty_dir").mkdir()
    (root / "foreign").mkdir()
    (root / "foreign" / "results_notes.json").write_text("[1, 2]")
    (root / "unreadable").mkdir()
    shutil.copy(next(RESULTS.rglob("results_*.json")), root / "unreadable" / "results_x.json")
    (root / "unreadable" / "results_x.json").chmod(0)
    (root / "locked").mkdir(mode=0)
    (root / "read_only").mkdir(mode=0o555)
    os.mkfifo(root / "fifo")
    (root / "leak").mkdir()
    (root / "leak" / "samples_stereotype_leakage_en_2026-01-01T00-00-00.jsonl").write_text('{"n_leaks": 1}\n{"doc"\n')
    (root / "leak" / "results_2026-01-01T00-00-00.json").write_text('{"results": {"stereotype_leakage_en": {}}}')
    return root


#: (arguments, part of the one line's message) with {p} for the places folder and {r} for a results folder
COMMAND_CASES = {
    "report-missing-path": (["report", "{p}/missing"], "argument PATH: {p}/missing: no such file or folder"),
    "report-locked-folder": (["report", "{p}/locked"], "argument PATH: {p}/locked: cannot be read (Permission denied)"),
    "report-unreadable-file": (
        ["report", "{p}/unreadable/results_x.json"],
        "argument PATH: {p}/unreadable/results_x.json: cannot be read (Permission denied)",
    ),
    "report-unreadable-file-in-folder": (
        ["report", "{p}/unreadable"],
        "{p}/unreadable/results_x.json: cannot be read (Permission denied)",
    ),
    "report-fifo": (["report", "{p}/fifo"], "argument PATH: {p}/fifo: a special file (FIFO, socket or device), not a"),
    "report-empty-folder": (["report", "{p}/empty_dir"], "no results_*.json below {p}/empty_dir"),
    "report-foreign-json": (["report", "{p}/foreign"], "{p}/foreign/results_notes.json: not an lm_eval results file"),
    "report-html-is-a-file": (["report", "{r}", "--html", "{p}/a_file"], "argument --html: {p}/a_file: a file, not"),
    "report-html-below-a-file": (
        ["report", "{r}", "--html", "{p}/a_file/html"],
        "argument --html: {p}/a_file/html: {p}/a_file is a file, not a folder",
    ),
    "report-html-unwritable": (
        ["report", "{r}", "--html", "{p}/read_only/html"],
        "argument --html: {p}/read_only/html: cannot write in {p}/read_only (Permission denied)",
    ),
    "report-json-missing-folder": (
        ["report", "{r}", "--json", "{p}/missing/r.json"],
        "argument --json: {p}/missing/r.json: the folder {p}/missing does not exist",
    ),
    "report-json-unwritable": (
        ["report", "{r}", "--json", "{p}/read_only/r.json"],
        "argument --json: {p}/read_only/r.json: cannot write in {p}/read_only (Permission denied)",
    ),
    "report-json-is-a-folder": (["report", "{r}", "--json", "{p}/non_empty"], "{p}/non_empty: a folder, not a file"),
    "export-missing-path": (
        ["export", "{p}/missing", "--format", "eee"],
        "argument PATH: {p}/missing: no such file or",
    ),
    "export-unwritable-output": (
        ["export", "{r}", "--format", "eee", "--output", "{p}/read_only/eee"],
        "argument --output: {p}/read_only/eee: cannot write in {p}/read_only (Permission denied)",
    ),
    "export-unknown-format": (["export", "{r}", "--format", "csv"], "argument --format: invalid choice: 'csv'"),
    "leakage-missing-folder": (["leakage", "{p}/missing"], "argument OUT_MULTI: {p}/missing: no such file or folder"),
    "leakage-file-not-folder": (["leakage", "{p}/a_file"], "argument OUT_MULTI: {p}/a_file: a file, not a folder"),
    "leakage-locked-mono": (["leakage", "{r}", "--mono", "{p}/locked"], "argument --mono: {p}/locked: cannot be read"),
    "leakage-json-missing-folder": (
        ["leakage", "{r}", "--json", "{p}/missing/l.json"],
        "argument --json: {p}/missing/l.json: the folder {p}/missing does not exist",
    ),
    "leakage-png-is-a-folder": (["leakage", "{r}", "--png", "{p}/non_empty"], "argument --png: {p}/non_empty: a"),
    "leakage-no-samples": (["leakage", "{r}"], "no logged samples of stereotype-leakage regression tasks below {r}"),
    "leakage-broken-samples": (
        ["leakage", "{p}/leak", "--no-png", "--json", "{p}/l.json"],
        "{p}/leak/samples_stereotype_leakage_en_2026-01-01T00-00-00.jsonl, line 2: invalid JSON",
    ),
    "inventory-missing-tokenizer-folder": (
        ["inventory", "--tokenizer", "{p}/missing/tokenizer"],
        "argument --tokenizer: {p}/missing/tokenizer: no such folder",
    ),
    "inventory-folder-not-a-tokenizer": (
        ["inventory", "--tokenizer", "{p}/non_empty"],
        "argument --tokenizer: {p}/non_empty: not a tokenizer folder",
    ),
    "inventory-file-not-a-tokenizer": (["inventory", "--tokenizer", "{p}/a_file"], "{p}/a_file: a file, not a"),
    "inventory-uncached-hub-name": (
        ["inventory", "--tokenizer", "no-such-org/no-such-tokenizer"],
        "argument --tokenizer: no-such-org/no-such-tokenizer: no such folder, and not a Hugging Face tokenizer",
    ),
    "inventory-unknown-task": (
        ["inventory", "--tokenizer", "bpe32k", "--tasks", "gest_en,no_such_task"],
        "argument --tasks: unknown task(s) no_such_task",
    ),
    "inventory-bad-metadata": (["inventory", "--tokenizer", "bpe32k", "--metadata", "[1]"], "argument --metadata: ex"),
    "inventory-bad-limit": (["inventory", "--tokenizer", "bpe32k", "--limit", "0"], "argument --limit: expected a"),
    "build-tiny-model-file": (["build-tiny-model", "{p}/a_file"], "argument DIR: {p}/a_file: a file, not a folder"),
    "build-tiny-model-non-empty": (["build-tiny-model", "{p}/non_empty"], "{p}/non_empty: not empty; give a new or"),
    "build-tiny-model-unwritable": (
        ["build-tiny-model", "{p}/read_only/model"],
        "argument DIR: {p}/read_only/model: cannot write in {p}/read_only (Permission denied)",
    ),
    "build-tiny-model-bad-kind": (["build-tiny-model", "{p}/new", "--kind", "gpt9"], "argument --kind: invalid choice"),
    "real-model-file": (["real-model", "smollm2", "{p}/a_file"], "argument DIR: {p}/a_file: a file, not a folder"),
    "real-model-not-a-model-folder": (
        ["real-model", "smollm2", "{p}/non_empty"],
        "{p}/non_empty exists and is not a smollm2 model folder; choose an empty folder",
    ),
    "real-model-unknown-name": (["real-model", "llama", "{p}/new"], "argument NAME: invalid choice: 'llama'"),
    "tasks-path-extra-argument": (["tasks-path", "extra"], "unrecognized arguments: extra"),
}


@pytest.mark.parametrize("case", list(COMMAND_CASES))
def test_bad_command_arguments_end_in_one_line(places: Path, case: str) -> None:
    arguments, message = COMMAND_CASES[case]
    fill = lambda text: text.format(p=places, r=RESULTS)  # noqa: E731
    proc = run_command(*map(fill, arguments), launcher=UNPRIVILEGED, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"lm-eval-stereo {arguments[0]}: error: ") and proc.stderr.count("\n") == 1
    assert fill(message) in proc.stderr
    assert proc.stdout == ""
    assert not (places / "new").exists() and sorted(p.name for p in (places / "non_empty").iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(
    ("folder", "problem"),
    [("missing", "no such folder"), ("non_empty", "not a model folder (no config.json in it)")],
)
def test_pretrained_folder_that_is_no_model_ends_in_one_line(places: Path, folder: str, problem: str) -> None:
    model = places / folder
    proc = run_command("--model", "hf", "--tasks", "gest_en", "--model_args", f"pretrained={model},dtype=float32",
                       "--limit", "1")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == f"lm-eval-stereo: --model_args pretrained={model}: {problem}\n"
    assert "Traceback" not in proc.stderr and "Repo id" not in proc.stderr


def test_a_task_that_needs_the_models_tokenizer_says_so_when_none_is_named() -> None:
    """EuroGEST and RuBia split sentences with the evaluated model's tokenizer: without ``tokenizer=`` or
    ``pretrained=`` they stop in one line naming what needs it and how to give it (before any data is read)."""
    from lm_eval_stereo.tasks.eurogest.task import custom_dataset as eurogest_dataset
    from lm_eval_stereo.tasks.rubia.task import custom_dataset as rubia_dataset

    for dataset, argument, needs in (
        (eurogest_dataset, "el", "eurogest finds the first differing token"),
        (rubia_dataset, "gender", "rubia scores every token after each sentence's first"),
    ):
        with pytest.raises(ValueError) as raised:
            dataset(argument, model="hf")
        assert str(raised.value) == (
            f"{needs} with the evaluated model's tokenizer, but no tokenizer= or pretrained= model argument was given: "
            "pass one in --model_args"
        )
