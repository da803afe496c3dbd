"""Issue 54's reader and window cases, each through ``lm_eval`` or the ``lm-eval-stereo`` command on a file a test
writes, asserting the line or the count: items longer than the model's window (hf-prefix, RuBia as ``lmppl``
truncates), malformed task metadata of a plugin benchmark, a samples line that is no object, an option no task of
the run reads, a model folder without tokenizer files, a RuBia group that lacks domains, a RuBia-only report, and runs
kept apart by dtype."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval
from rubia_reference import causal_nll, causal_scorer, import_lmppl
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
    folder = build_causal_lm(tmp_path_factory.mktemp("tiny_window_limit"), seed=0, window=WINDOW,
                             tokenizer_max_length=WINDOW)  # fmt: skip
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.save_pretrained(folder)
    return folder


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
