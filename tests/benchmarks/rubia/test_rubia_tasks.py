"""RuBia through the real ``lm_eval`` command on the tiny seeded models, sentence by sentence against the authors'
``lmppl`` (imported from ``Analysis/lmppl-main.zip``) and the same loops written plainly (``rubia_reference.py``):
``rubia`` with ``hf`` and ``hf-prefix`` (``lmppl.LM``) and with ``hf-mlm`` (``lmppl.MaskedLM``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from fixtures_mlm import tiny_bert  # noqa: F401  (session fixture)
from lm_eval_runner import LmEvalRun, run_lm_eval
from rubia_reference import causal_nll, causal_scorer, import_lmppl, masked_nll, padded_with_eos
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from lm_eval_stereo.tasks.rubia import data
from lm_eval_stereo.tasks.rubia.task import sentence_request

LIMIT = 6
#: per-sentence mean NLL: float32 forwards of other batch shapes and packings against a single-sentence forward
TOL = 1e-5


def _args(model: Path, backend: str, tasks: str) -> list[str]:
    return ["--model", backend, "--model_args", f"pretrained={model}", "--batch_size", "4", "--tasks", tasks,
            "--limit", str(LIMIT), "--log_samples"]  # fmt: skip


@pytest.fixture(scope="module")
def lmppl(tmp_path_factory):
    return import_lmppl(tmp_path_factory.mktemp("lmppl"))


@pytest.fixture(scope="module")
def tiny(tiny_causal):
    return AutoModelForCausalLM.from_pretrained(tiny_causal).eval(), AutoTokenizer.from_pretrained(tiny_causal)


@pytest.fixture(scope="module")
def padded_copy(tiny_causal, tmp_path_factory) -> Path:
    """The tiny model with a pad token (its EOS, which no RuBia sentence holds): ``lmppl.LM`` adds no ``<<PAD>>``."""
    return padded_with_eos(tiny_causal, tmp_path_factory.mktemp("tiny_padded"))


@pytest.fixture(scope="module")
def hf_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    return run_lm_eval(_args(tiny_causal, "hf", "rubia"), tmp_path_factory.mktemp("rubia_hf"))


@pytest.fixture(scope="module")
def prefix_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    return run_lm_eval(_args(tiny_causal, "hf-prefix", "rubia"), tmp_path_factory.mktemp("rubia_prefix"))


@pytest.fixture(scope="module")
def mlm_run(tiny_bert, tmp_path_factory) -> LmEvalRun:  # noqa: F811
    return run_lm_eval(_args(tiny_bert, "hf-mlm", "rubia"), tmp_path_factory.mktemp("rubia_mlm"))


def _items(run: LmEvalRun, task: str) -> list[dict]:
    return [sample["biased"] for sample in run.samples[task]]


def _pairs() -> dict[int, dict]:
    return {row["id"]: row for row in data.load_rows()}


def _check_shares(run: LmEvalRun, task: str, domain: str, protocol: str = "causal") -> None:
    """The task's metrics follow from its logged items as the notebook computes them."""
    items = _items(run, task)
    assert len(items) == LIMIT and run.metric(task, "pairs") == LIMIT
    in_all = [i for i in items if i["task_type"] not in data.NOT_IN_ALL]
    assert run.metric(task, "count") == len(in_all)
    assert run.metric(task, "biased") == pytest.approx(sum(i["ppl_pro"] < i["ppl_anti"] for i in in_all) / len(in_all))
    assert run.metric(task, "ties") == sum(i["ppl_pro"] == i["ppl_anti"] for i in items)
    assert run.metric(task, "unscored") == 0
    assert run.metric(task, "biased_ci_low") <= run.metric(task, "biased") <= run.metric(task, "biased_ci_high")
    # --limit takes the task types in turn
    assert len({i["task_type"] for i in items}) == min(LIMIT, len(data.TASK_TYPES[domain]))
    recorded = run.results["configs"][task]["metadata"]
    assert recorded["metric_set"] == "rubia.shares" and recorded["facts"] == {"domain": domain, "protocol": protocol}
    assert recorded["language"] == "ru"


def test_hf_prefix_scores_every_sentence_as_lmppl(prefix_run, lmppl, padded_copy, tiny):
    """Every sentence, also those whose first token is the first byte of a Cyrillic letter (which no string request
    can say), equals ``lmppl.LM`` and the plain loop within 1e-5; the shares follow from the items."""
    model, tokenizer = tiny
    scorer = causal_scorer(lmppl, padded_copy)
    assert scorer.tokenizer.pad_token == tokenizer.eos_token  # no <<PAD>> row added
    pairs, strings_cannot = _pairs(), 0
    for domain in data.DOMAINS:
        task = f"rubia_{domain}"
        _check_shares(prefix_run, task, domain)
        assert prefix_run.metric(task, "boundary_mismatches") == 0
        for item in _items(prefix_run, task):
            pair = pairs[item["id"]]
            assert (item["domain"], item["task_type"]) == (pair["domain"], pair["task_type"])
            for side in ("pro", "anti"):
                text = pair[side]
                strings_cannot += not sentence_request(tokenizer, text).split_kept
                reference = math.log(scorer.get_perplexity([text])[0])
                assert item[f"nll_{side}"] == pytest.approx(reference, abs=TOL), (domain, item["id"], side)
                assert item[f"nll_{side}"] == pytest.approx(causal_nll(model, tokenizer, text), abs=TOL)
                assert item[f"ppl_{side}"] == pytest.approx(math.exp(item[f"nll_{side}"]), rel=1e-12)
    assert strings_cannot > len(data.DOMAINS) * LIMIT  # the tiny byte-level BPE splits most first letters


def test_hf_scores_what_strings_can_say_and_flags_the_rest(hf_run, prefix_run, tiny):
    model, tokenizer = tiny
    pairs, compared = _pairs(), 0
    for domain in data.DOMAINS:
        task = f"rubia_{domain}"
        _check_shares(hf_run, task, domain)
        flagged = 0
        for item in _items(hf_run, task):
            pair = pairs[item["id"]]
            kept = all(sentence_request(tokenizer, pair[side]).split_kept for side in ("pro", "anti"))
            assert item["boundary_mismatch"] == (not kept)
            flagged += not kept
            if kept:
                compared += 1
                for side in ("pro", "anti"):
                    assert item[f"nll_{side}"] == pytest.approx(causal_nll(model, tokenizer, pair[side]), abs=TOL)
        assert hf_run.metric(task, "boundary_mismatches") == flagged
    assert compared >= 2, compared


def test_lmppl_pad_row_is_one_more_softmax_row(prefix_run, lmppl, tiny_causal, tiny):
    """The quirk the plugin does not follow: ``lmppl.LM`` on a tokenizer without a pad token adds ``<<PAD>>`` and a
    (randomly initialised) output row; its NLLs are the plain loop's with that row in the softmax. On the tiny model
    every NLL rises by about 1.5e-3 and no pair of the run changes its verdict."""
    model, tokenizer = tiny
    torch.manual_seed(0)
    scorer = causal_scorer(lmppl, tiny_causal)
    assert scorer.tokenizer.pad_token == "<<PAD>>" and scorer.config.vocab_size == len(tokenizer) + 1
    row = scorer.model.get_output_embeddings().weight[-1].detach()
    shifts, flips = [], 0
    for item in _items(prefix_run, "rubia_class"):
        pair = _pairs()[item["id"]]
        quirk = {}
        for side in ("pro", "anti"):
            quirk[side] = math.log(scorer.get_perplexity([pair[side]])[0])
            assert quirk[side] == pytest.approx(causal_nll(model, tokenizer, pair[side], row), abs=TOL)
            shifts.append(quirk[side] - item[f"nll_{side}"])
        flips += (quirk["pro"] < quirk["anti"]) != (item["ppl_pro"] < item["ppl_anti"])
    assert all(1e-4 < shift < 1e-2 for shift in shifts), shifts
    assert flips == 0


def test_hf_mlm_scores_every_sentence_as_lmppl_masked(mlm_run, lmppl, tiny_bert):  # noqa: F811
    scorer = lmppl.MaskedLM(str(tiny_bert))
    model, tokenizer = AutoModelForMaskedLM.from_pretrained(tiny_bert).eval(), AutoTokenizer.from_pretrained(tiny_bert)
    pairs = _pairs()
    for domain in data.DOMAINS:
        task = f"rubia_{domain}"
        _check_shares(mlm_run, task, domain, "masked")
        assert mlm_run.metric(task, "boundary_mismatches") == 0
        for item in _items(mlm_run, task):
            for side in ("pro", "anti"):
                text = pairs[item["id"]][side]
                reference = math.log(scorer.get_perplexity([text])[0])
                assert item[f"nll_{side}"] == pytest.approx(reference, abs=TOL), (domain, item["id"], side)
                assert item[f"nll_{side}"] == pytest.approx(masked_nll(model, tokenizer, text), abs=TOL)


def test_smollm2s_tokenizer_splits_most_first_letters(smollm2):
    """docs/real_models/intro.md: under ``hf`` SmolLM2's byte-level BPE leaves 3,352 of RuBia's 4,442 sentences off
    the reference's tokens (the first Cyrillic letter split into two byte tokens); ``hf-prefix`` scores them all."""
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    sentences = [row[side] for row in data.load_rows() for side in ("pro", "anti")]
    off = [text for text in sentences if not sentence_request(tokenizer, text).split_kept]
    assert (len(off), len(sentences)) == (3352, 4442)
    assert all(sentence_request(tokenizer, text).reference for text in sentences)
    first = tokenizer("Готовить", return_offsets_mapping=True)["offset_mapping"][:2]
    assert first == [(0, 1), (0, 1)]  # "Г": two byte tokens of one character


def test_report_pairs_two_models_on_the_same_pairs_and_draws_the_figure(prefix_run, mlm_run, tmp_path):
    """The logged items key the paired model-vs-model tests (the tiny causal model under hf-prefix against the tiny
    BERT under hf-mlm, on the same pairs, all matched): the difference of the shares is that of the runs' ``biased``."""
    from lm_eval_stereo.report.build import build_report
    from lm_eval_stereo.report.html import write_html

    report = build_report([prefix_run.output_dir, mlm_run.output_dir], permutations=99)
    paired = {result.task: result for result in report.paired.models}
    assert set(paired) >= {f"rubia_{domain}" for domain in data.DOMAINS}
    for domain in data.DOMAINS:
        task = f"rubia_{domain}"
        (biased,) = [c for c in paired[task].comparisons if c.metric == "biased"]
        runs = {"causal": prefix_run, "bert": mlm_run}  # the models' folder names, the report's labels
        a, b = (next(run for name, run in runs.items() if name in label) for label in (paired[task].a, paired[task].b))
        assert a is not b
        expected = a.metric(task, "biased") - b.metric(task, "biased")
        assert biased.difference == pytest.approx(expected, abs=1e-12)
        assert biased.n == a.metric(task, "pairs") and biased.low <= biased.difference <= biased.high
    html = write_html(report, tmp_path / "report").read_text(encoding="utf-8")
    assert "rubia_gender" in html and list((tmp_path / "report").glob("rubia*.png"))


def test_protocol_follows_the_model_and_an_overflowing_perplexity_is_unscored(tiny_causal, tiny_bert):  # noqa: F811
    from lm_eval_stereo.tasks.rubia import metrics
    from lm_eval_stereo.tasks.rubia.task import masked_model, perplexity

    assert masked_model({"pretrained": str(tiny_bert)}) and not masked_model({"pretrained": str(tiny_causal)})
    assert not masked_model({"tokenizer": str(tiny_causal)})  # no pretrained= (an API model): the causal protocol
    assert perplexity(-10.0, 4) == (2.5, pytest.approx(math.exp(2.5)))
    nll, ppl = perplexity(-1e4, 1)
    assert nll == 1e4 and ppl == math.inf and all(math.isnan(v) for v in perplexity(0.0, 0))
    item = {"id": 0, "domain": "class", "task_type": "freeform_full", "ppl_pro": ppl, "ppl_anti": 3.0}
    assert metrics.metric_set("class").summarize([item])["unscored"] == 1


def test_a_tokenizer_that_adds_a_bos_gets_it_as_lm_evals_prefix_token(tiny_causal):
    """A BOS-adding tokenizer's first token is its BOS: the context is empty, lm_eval's prefix token (the BOS) stands
    for it and every later token is lm_eval's own encoding (kept) with ``add_bos_token`` off; on, lm_eval would encode
    a second BOS into the continuation (flagged)."""
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    plain = AutoTokenizer.from_pretrained(tiny_causal)
    raw = plain.backend_tokenizer
    raw.post_processor = TemplateProcessing(single=f"{plain.bos_token} $A", special_tokens=[(plain.bos_token,
                                                                                               plain.bos_token_id)])  # fmt: skip
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token=plain.bos_token, eos_token=plain.eos_token)
    for row in data.domain_rows("class")[:5]:
        text = row["pro"]
        ids = tokenizer(text)["input_ids"]
        assert ids[0] == tokenizer.bos_token_id and ids[1:] == tokenizer(text, add_special_tokens=False)["input_ids"]
        request = sentence_request(tokenizer, text)
        assert (request.context, request.split_kept, request.reference) == ("", True, ((ids[0],), tuple(ids[1:])))
        assert not sentence_request(tokenizer, text, add_special_tokens=True).split_kept
