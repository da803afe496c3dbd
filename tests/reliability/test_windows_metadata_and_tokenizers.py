"""Issue 54's reader and window cases, each through ``lm_eval`` or the ``lm-eval-stereo`` command on a file a test
writes, asserting the line or the count: items longer than the model's window (hf-prefix, RuBia as ``lmppl``
truncates), malformed task metadata of a plugin benchmark, a samples line that is no object, an option no task of
the run reads, a model folder without tokenizer files, a RuBia group that lacks domains, a RuBia-only report, and runs
kept apart by dtype."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_command, run_lm_eval
from rubia_reference import causal_nll, causal_scorer, import_lmppl, padded_with_eos
from transformers import AutoModelForCausalLM, AutoTokenizer

from lm_eval_stereo.core.truncation import REMEDY
from lm_eval_stereo.local_models.tiny import build_causal_lm
from lm_eval_stereo.tasks.rubia import data as rubia_data

#: the small window of the models below; RuBia's rows 12 and 32 of ``rubia_lgbtq`` (208 and 147 tokens with the tiny
#: byte-level BPE) do not fit it, rows 0 and 1 do
WINDOW = 128
LONG_ROWS = {"rubia_lgbtq": [0, 1, 12, 32]}
TOL = 1e-5


def _rubia_args(model: Path, backend: str = "hf-prefix") -> list[str]:
    return ["--model", backend, "--model_args", f"pretrained={model}", "--batch_size", "4", "--tasks", "rubia_lgbtq",
            "--samples", json.dumps(LONG_ROWS), "--log_samples"]  # fmt: skip


@pytest.fixture(scope="module")
def small_window(tmp_path_factory) -> Path:
    """The tiny causal LM with a window of 128 tokens and a tokenizer that says no ``model_max_length``."""
    return build_causal_lm(tmp_path_factory.mktemp("tiny_window"), seed=0, window=WINDOW)


@pytest.fixture(scope="module")
def small_window_tokenizer_limit(tmp_path_factory) -> Path:
    """The same model whose tokenizer says ``model_max_length`` = its window (as GPT-2's does), with a pad token (its
    EOS) so that ``lmppl.LM`` adds no ``<<PAD>>`` row."""
    built = build_causal_lm(tmp_path_factory.mktemp("tiny_window_built"), seed=0, window=WINDOW,
                            tokenizer_max_length=WINDOW)  # fmt: skip
    return padded_with_eos(built, tmp_path_factory.mktemp("tiny_window_limit"))


@pytest.fixture(scope="module")
def unfit_run(small_window, tmp_path_factory) -> LmEvalRun:
    return run_lm_eval(_rubia_args(small_window), tmp_path_factory.mktemp("rubia_unfit"))


def _items(run: LmEvalRun, task: str = "rubia_lgbtq") -> list[dict]:
    return [sample["biased"] for sample in run.samples[task]]


def _sentences() -> dict[int, dict]:
    return {row["id"]: row for row in rubia_data.load_rows()}


def test_a_sentence_longer_than_the_window_is_counted_not_a_raw_trace(unfit_run, small_window, tmp_path):
    """hf-prefix on a 128-token window: two pairs hold a sentence longer than it. The run ended in a raw ValueError
    from prefix_tree.py ("continuation at most 128 tokens"); now they are unscored, counted in ``truncated``, named in
    one warning line, and the report's caveat names the option to raise. The others are scored exactly."""
    tokenizer = AutoTokenizer.from_pretrained(small_window)
    model = AutoModelForCausalLM.from_pretrained(small_window).eval()
    assert "Traceback" not in unfit_run.stderr
    pairs, long_pairs, long_sentences = _sentences(), 0, 0
    for item in _items(unfit_run):
        pair = pairs[item["id"]]
        lengths = [len(tokenizer(pair[side])["input_ids"]) for side in ("pro", "anti")]
        too_long = [length > WINDOW + 1 for length in lengths]
        long_pairs += any(too_long)
        long_sentences += sum(too_long)
        for side, unfit in zip(("pro", "anti"), too_long):
            if unfit:
                assert math.isnan(item[f"nll_{side}"])
            else:
                assert item[f"nll_{side}"] == pytest.approx(causal_nll(model, tokenizer, pair[side]), abs=TOL)
        assert item["boundary_mismatch"] is False
    assert long_pairs == 2
    assert (
        f"hf-prefix: {long_sentences} request(s) longer than the model's window of 128 tokens: 0 scored on their "
        f"context cut from the left, {long_sentences} not scored (the continuation alone is longer); counted per task "
        f"as 'truncated': {REMEDY}"
    ) in unfit_run.stderr.replace("\n", " ")
    assert unfit_run.metric("rubia_lgbtq", "truncated") == 2
    assert unfit_run.metric("rubia_lgbtq", "unscored") == 2
    assert unfit_run.metric("rubia_lgbtq", "pairs") == 4
    assert sum(sample["truncated"] for sample in unfit_run.samples["rubia_lgbtq"]) == 2

    from lm_eval_stereo.report.build import build_report
    from lm_eval_stereo.report.markdown import render_markdown

    markdown = render_markdown(build_report([unfit_run.output_dir]), details=True)
    assert (
        "truncated = 2: items with a request longer than the model's window, scored on a context cut from the left "
        f"or, where the continuation alone was longer, not scored; {REMEDY}"
    ) in markdown
    assert "truncated: 1 task with items longer than the model's window" in markdown


def test_rubia_scores_what_lmppl_keeps_where_the_tokenizer_truncates(small_window_tokenizer_limit, tmp_path):
    """A tokenizer with ``model_max_length`` = 128: ``lmppl.LM`` tokenises with ``truncation=True`` and scores the
    first 128 tokens of a longer sentence; so does the plugin (nothing truncated beyond the reference, nothing left
    unscored), every sentence within 1e-5 of the authors' ``lmppl`` imported from the zip."""
    lmppl = import_lmppl(tmp_path / "lmppl")
    scorer = causal_scorer(lmppl, small_window_tokenizer_limit)
    assert scorer.tokenizer.pad_token == scorer.tokenizer.eos_token  # no <<PAD>> row
    run = run_lm_eval(_rubia_args(small_window_tokenizer_limit), tmp_path / "run")
    tokenizer = AutoTokenizer.from_pretrained(small_window_tokenizer_limit)
    pairs, cut_sentences = _sentences(), 0
    for item in _items(run):
        for side in ("pro", "anti"):
            text = pairs[item["id"]][side]
            cut_sentences += len(tokenizer(text)["input_ids"]) > WINDOW
            reference = math.log(scorer.get_perplexity([text])[0])
            assert item[f"nll_{side}"] == pytest.approx(reference, abs=TOL), (item["id"], side)
    assert cut_sentences >= 2
    assert run.metric("rubia_lgbtq", "truncated") == 0
    assert run.metric("rubia_lgbtq", "unscored") == 0
    assert run.metric("rubia_lgbtq", "boundary_mismatches") == 0


def test_a_context_cut_to_the_window_is_scored_as_hf_cuts_it_and_counted(small_window, tmp_path):
    """MBBQ's contexts are longer than 128 tokens: hf-prefix scores the continuation after the context cut from the
    left, as lm_eval's hf does (the same log-likelihoods), and counts the documents in ``truncated``."""
    args = ["--model_args", f"pretrained={small_window}", "--tasks", "mbbq_en", "--limit", "4", "--log_samples"]
    prefix = run_lm_eval(["--model", "hf-prefix", *args], tmp_path / "prefix")
    plain = run_lm_eval(["--model", "hf", *args], tmp_path / "hf")
    assert "scored on their context cut from the left, 0 not scored" in prefix.stderr
    answers = {
        name: {s["doc_id"]: [float(r[0][0]) for r in s["resps"]] for s in run.samples["mbbq_en"]}
        for name, run in (("prefix", prefix), ("hf", plain))
    }
    assert answers["prefix"].keys() == answers["hf"].keys()
    for doc, values in answers["prefix"].items():
        assert values == pytest.approx(answers["hf"][doc], rel=1e-5, abs=1e-4)
    cut = [s["doc_id"] for s in prefix.samples["mbbq_en"] if s["truncated"]]
    assert len(cut) == prefix.metric("mbbq_en", "truncated") == 3


# ------------------------------------------------------------------------------------- readers and small cases


def _results_file(run_dir: Path) -> Path:
    return next(run_dir.rglob("results_*.json"))


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def eurogest_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    """EuroGEST on the tiny model, given an option of GEST (not in the run) besides its own."""
    return run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal}", "--tasks", "eurogest_en", "--limit", "3",
         "--metadata", json.dumps({"gest_version": "1.1", "eurogest_min_sentences": 2})],
        tmp_path_factory.mktemp("eurogest"),
    )  # fmt: skip


@pytest.fixture(scope="module")
def rubia_group_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    return run_lm_eval(
        ["--model", "hf-prefix", "--model_args", f"pretrained={tiny_causal}", "--tasks", "rubia", "--limit", "3",
         "--log_samples"],
        tmp_path_factory.mktemp("rubia_group"),
    )  # fmt: skip


def test_an_option_no_task_of_the_run_reads_is_one_warning_line(eurogest_run):
    """``gest_version`` with only EuroGEST in the run was accepted without a word; the run goes on (an option of a
    benchmark of the plugin is no typo) with one line saying it has no effect."""
    assert eurogest_run.returncode == 0
    lines = [line for line in eurogest_run.stderr.splitlines() if "is read by no task of this run" in line]
    assert len(lines) == 1
    assert lines[0].endswith("lm-eval-stereo: option 'gest_version' (of gest) is read by no task of this run: it has "
                             "no effect")  # fmt: skip


def test_malformed_metadata_of_a_plugin_task_is_named_with_file_and_field(eurogest_run, tmp_path):
    """EuroGEST's recorded ``facts`` a list: the report said the run holds "only lm_eval's own tasks", the export the
    same; both now name the file and the field."""
    folder = tmp_path / "run"
    shutil.copytree(eurogest_run.output_dir, folder)
    path = _results_file(folder)
    _edit(path, lambda data: data["configs"]["eurogest_en"]["metadata"].update(facts=["complete_only"]))
    why = (
        f"they hold tasks of a plugin benchmark whose recorded metadata is malformed: {path}: eurogest_en: field "
        "configs.eurogest_en.metadata.facts: not an object: the task's metric set cannot be built"
    )
    report = run_command("report", folder)
    assert report.returncode == 0, report.stderr
    assert f"no bias benchmark of lm-eval-stereo in these 1 results file(s): {why}" in report.stderr
    assert "only lm_eval's own tasks" not in report.stderr + report.stdout
    export = run_command("export", folder, "--format", "model-card")
    assert export.returncode == 2
    assert f"error: no bias benchmark of lm-eval-stereo in these 1 run(s): {why}" in export.stderr
    assert "only lm_eval's own tasks" not in export.stderr


def test_a_samples_item_that_is_a_number_is_counted_and_named(unfit_run, tmp_path):
    """A samples line whose item is a number was dropped by the paired tests and the export without a word; now
    both name the line and what it holds, and the other items are kept."""
    folder = tmp_path / "run"
    shutil.copytree(unfit_run.output_dir, folder)
    samples = next(folder.rglob("samples_rubia_lgbtq_*.jsonl"))
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    lines[1]["biased"] = 7
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    said = f"{samples}:2: the logged item under 'biased' is int, not an object"
    out = tmp_path / "report.json"
    report = run_command("report", folder, "--details", "--json", out)
    assert report.returncode == 0, report.stderr
    notes = json.loads(out.read_text())["paired"]["not_compared"]
    assert any(f"1 malformed line(s) of {samples} skipped ({said})" in note and "its other 3 items" in note
               for note in notes), notes  # fmt: skip
    export = run_command("export", folder, "--format", "eee", "--output", tmp_path / "records", "--model-id", "org/tiny",
                     "--details")  # fmt: skip
    assert export.returncode == 0, export.stderr
    assert f"1 malformed samples line(s) skipped ({said})" in export.stderr
    lines = [{**line, "biased": 7} for line in lines]  # every item a number: no item read, the file named
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = run_command("report", folder, "--details")
    assert f"{samples}:1: the logged item under 'biased' is int, not an object (and 3 more malformed lines; no item " \
           "read)" in report.stdout  # fmt: skip


def test_a_rubia_group_without_some_domains_names_them(rubia_group_run, tmp_path):
    """A RuBia group results file that lacks domains never named them; now the report does, and a file that holds
    the group alone says so instead of an empty table."""
    folder = tmp_path / "run"
    shutil.copytree(rubia_group_run.output_dir, folder)
    path = _results_file(folder)

    def drop(*tasks: str):
        def change(data: dict) -> None:
            for key in ("results", "configs", "n-samples", "versions", "higher_is_better", "n-shot"):
                for task in tasks:
                    data[key].pop(task, None)

        return change

    _edit(path, drop("rubia_gender", "rubia_class"))
    report = run_command("report", folder)
    assert report.returncode == 0, report.stderr
    assert (
        f"absent members: 1 task that is a group whose results file lacks members it lists: rubia ({path}: group "
        "rubia lists rubia_class, rubia_gender, which the results file does not hold: the group is shown with its "
        "other members only)"
    ) in report.stdout
    _edit(path, drop("rubia_lgbtq", "rubia_nationality"))
    report = run_command("report", folder)
    assert "group rubia lists rubia_class, rubia_gender, rubia_lgbtq, rubia_nationality, which the results file " \
           "does not hold" in report.stdout  # fmt: skip
    assert "only lm_eval's own tasks" not in report.stdout + report.stderr


def test_a_rubia_run_with_nothing_publishable_is_not_called_lm_evals_own(rubia_group_run, tmp_path):
    """The export of a RuBia-only run (no --log_samples) whose headlines it cannot publish (NaN) said it holds "only
    lm_eval's own tasks"; now it says which headlines were left out and why."""
    folder = tmp_path / "run"
    shutil.copytree(rubia_group_run.output_dir, folder)
    path = _results_file(folder)

    def nan_headlines(data: dict) -> None:
        for domain in rubia_data.DOMAINS:
            data["results"][f"rubia_{domain}"]["biased,none"] = math.nan

    _edit(path, nan_headlines)
    for samples in folder.rglob("samples_*.jsonl"):  # a run without --log_samples: nothing but the headlines
        samples.unlink()
    export = run_command("export", folder, "--format", "model-card")
    assert export.returncode == 2
    assert "error: nothing of a bias benchmark to publish in these 1 run(s): every headline of rubia_class, " \
           "rubia_gender, rubia_lgbtq, rubia_nationality was left out (rubia_class/biased: left out: value nan " \
           "(EEE holds no NaN)" in export.stderr  # fmt: skip
    assert "only lm_eval's own tasks" not in export.stderr


def test_a_model_folder_without_tokenizer_files_is_named_in_one_line(tiny_causal, tmp_path):
    """Without tokenizer files transformers builds an empty tokenizer: every text encoded to nothing and lm_eval's hf
    ended in an IndexError. Now every plugin task stops first, in one line naming the folder (exit 2)."""
    folder = tmp_path / "no_tokenizer"
    folder.mkdir()
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        shutil.copy(tiny_causal / name, folder / name)
    run = run_lm_eval(["--model", "hf", "--model_args", f"pretrained={folder}", "--tasks", "rubia_class",
                       "--limit", "2"], tmp_path / "out", check=False)  # fmt: skip
    assert run.returncode == 2 and run.results == {}
    assert "Traceback" not in run.stderr and "IndexError" not in run.stderr
    assert run.stderr.rstrip().splitlines()[-1] == (
        f"lm-eval-stereo: {folder}: its tokenizer encodes every text to no token (the folder holds no tokenizer "
        "files, e.g. tokenizer.json or tokenizer_config.json with its vocabulary): add them, or name the model's "
        "tokenizer with --model_args tokenizer=<folder or hub id>"
    )


def test_runs_kept_apart_by_dtype_label_the_default_as_such(tmp_path):
    """A run without ``dtype=`` beside one with ``dtype=bfloat16`` was labelled ``dtype=`` (empty); now it is the
    default, with the dtype lm_eval recorded that it loaded (``config.model_dtype``)."""
    from test_report_precision import write_run

    from lm_eval_stereo.report import build_report

    write_run(tmp_path / "default", "pretrained=org/model", model_dtype="torch.float32")
    write_run(tmp_path / "bf16", "pretrained=org/model,dtype=bfloat16", model_dtype="torch.bfloat16", ss=53.0)
    write_run(tmp_path / "unknown" / "a", "pretrained=org/other")
    write_run(tmp_path / "unknown" / "b", "pretrained=org/other,dtype=float16", ss=53.0)
    labels = sorted(row.label for row in build_report([tmp_path]).rows)
    assert labels == ["org/model (dtype default (float32))", "org/model (dtype=bfloat16)",
                      "org/other (dtype default)", "org/other (dtype=float16)"]  # fmt: skip
