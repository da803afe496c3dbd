"""hf-mlm request types against naive one-position-at-a-time loops (full forward, full-vocabulary softmax)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from fixtures_mlm import *  # noqa: F403  (session fixtures tiny_bert, tiny_xlmr)
from lm_eval.api.instance import Instance
from transformers import AutoModelForMaskedLM, AutoModelForPreTraining, AutoTokenizer

from lm_eval_stereo.models.masked_lm import HFMaskedLM, fit_window

TEXTS = [
    ("The chess player was", " asian."),
    ("", "Many people live in Ethiopia."),
    ("Der Schachspieler war", " asiatisch. Die Frau ist Ärztin."),
    ("I am good at my job,", " she said."),
]
SPANS = [
    ("The chess player was ", "asian", "."),
    ("Viele Menschen leben in ", "Äthiopien", ". Die Frau ist kind."),
    ("", "Satranç", " oyuncusu Asyalıydı."),
]


def make_lm(path: Path, **kwargs) -> HFMaskedLM:
    return HFMaskedLM(pretrained=str(path), device="cpu", **kwargs)


def requests(kind: str, args: list[tuple]) -> list[Instance]:
    return [Instance(kind, {}, tuple(a), i) for i, a in enumerate(args)]


class Naive:
    """One input per scored token, the model's own forward pass and a softmax over the full vocabulary."""

    def __init__(self, path: Path, nsp: bool = False) -> None:
        self.tok = AutoTokenizer.from_pretrained(path)
        self.model = (AutoModelForPreTraining if nsp else AutoModelForMaskedLM).from_pretrained(path).eval()

    def logprob(self, ids: list[int], position: int, masked: list[int]) -> float:
        tokens = list(ids)
        for p in masked:
            tokens[p] = self.tok.mask_token_id
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([tokens]))
        logits = out.logits if getattr(out, "logits", None) is not None else out.prediction_logits
        return float(torch.log_softmax(logits[0, position], dim=-1)[ids[position]])

    def pll(self, context: str, continuation: str, within_word: bool = False) -> float:
        enc = self.tok(context + continuation)
        ids, words = enc["input_ids"], enc.word_ids()
        start = 1 + len(self.tok(context, add_special_tokens=False)["input_ids"]) if context else 1
        total = 0.0
        for p in range(start, len(ids) - 1):
            masked = [p]
            while within_word and p + len(masked) < len(ids) and words[p + len(masked)] == words[p]:
                masked.append(p + len(masked))
            total += self.logprob(ids, p, masked)
        return total

    def span(self, left: str, span: str, right: str, mode: str) -> list[float]:
        ids = self.tok(left + span + right)["input_ids"]
        start = 1 + len(self.tok(left.rstrip(), add_special_tokens=False)["input_ids"]) if left.strip() else 1
        k = len(self.tok(span, add_special_tokens=False)["input_ids"])
        if mode == "all":
            return [self.logprob(ids, start + i, list(range(start, start + k))) for i in range(k)]
        if mode == "l2r":
            return [self.logprob(ids, start + i, list(range(start + i, start + k))) for i in range(k)]
        out = []
        for i in range(k):
            shortened = ids[: start + i + 1] + ids[start + k :]
            out.append(self.logprob(shortened, start + i, [start + i]))
        return out

    def next_sentence(self, first: str, second: str) -> float:
        enc = self.tok(first, second, return_tensors="pt")
        with torch.no_grad():
            logits = self.model(**enc).seq_relationship_logits
        return float(torch.log_softmax(logits[0], dim=-1)[0])


@pytest.mark.parametrize("which", ["bert", "xlmr"])
@pytest.mark.parametrize("pll", ["original", "within_word_l2r"])
def test_loglikelihood_is_pll_of_continuation(which, pll, tiny_bert, tiny_xlmr):
    path = tiny_bert if which == "bert" else tiny_xlmr
    lm, naive = make_lm(path, pll=pll, batch_size=3), Naive(path)
    got = lm.loglikelihood(requests("loglikelihood", TEXTS))
    for (context, continuation), (value, greedy) in zip(TEXTS, got, strict=True):
        assert value == pytest.approx(naive.pll(context, continuation, pll == "within_word_l2r"), abs=1e-5)
        assert value < 0 and isinstance(greedy, bool)


def test_within_word_differs_where_words_split(tiny_xlmr):
    args = [("", "Satranç oyuncusu hispanikti.")]  # an unseen word: split into several sub-tokens
    original = make_lm(tiny_xlmr).loglikelihood(requests("loglikelihood", args))[0][0]
    word_l2r = make_lm(tiny_xlmr, pll="within_word_l2r").loglikelihood(requests("loglikelihood", args))[0][0]
    assert abs(original - word_l2r) > 1e-4  # the seeded random model barely cares, but the inputs differ


@pytest.mark.parametrize("which", ["bert", "xlmr"])
def test_rolling_is_pll_of_whole_text(which, tiny_bert, tiny_xlmr):
    path = tiny_bert if which == "bert" else tiny_xlmr
    lm, naive = make_lm(path, batch_size=2), Naive(path)
    texts = [context + continuation for context, continuation in TEXTS]
    got = lm.loglikelihood_rolling(requests("loglikelihood_rolling", [(t,) for t in texts]))
    assert got == pytest.approx([naive.pll("", t) for t in texts], abs=1e-5)


@pytest.mark.parametrize("which", ["bert", "xlmr"])
@pytest.mark.parametrize("mode", ["l2r", "all", "l2r_single"])
def test_masked_span_against_naive(which, mode, tiny_bert, tiny_xlmr):
    path = tiny_bert if which == "bert" else tiny_xlmr
    lm, naive = make_lm(path, batch_size=4), Naive(path)
    got = lm.masked_span(requests("masked_span", [(*s, mode) for s in SPANS]))
    for span, values in zip(SPANS, got, strict=True):
        expected = naive.span(*span, mode)
        assert len(values) == len(expected) >= 1
        assert values == pytest.approx(expected, abs=1e-5)


def test_next_sentence_against_naive(tiny_bert):
    lm, naive = make_lm(tiny_bert, batch_size=2), Naive(tiny_bert, nsp=True)
    pairs = [("The chess player was asian.", "He is smart."), ("Many people live in Ethiopia.", "Der Mann ist gut.")]
    got = lm.next_sentence(requests("next_sentence", pairs))
    assert got == pytest.approx([naive.next_sentence(*p) for p in pairs], abs=1e-5)
    assert all(v < 0 for v in got)


def flat(values: list[list[float]]) -> list[float]:
    return [v for row in values for v in row]


def test_batch_size_and_order_invariance(tiny_bert, tiny_xlmr):
    args = [(*s, mode) for s in SPANS for mode in ("l2r", "all")]
    one, many = make_lm(tiny_xlmr, batch_size=1), make_lm(tiny_xlmr, batch_size=16)
    expected = one.masked_span(requests("masked_span", args))
    assert flat(many.masked_span(requests("masked_span", args))) == pytest.approx(flat(expected), abs=1e-5)
    reversed_scores = many.masked_span(requests("masked_span", args[::-1]))[::-1]
    assert flat(reversed_scores) == pytest.approx(flat(expected), abs=1e-5)
    one, many = make_lm(tiny_bert, batch_size=1), make_lm(tiny_bert, batch_size="auto", max_batch_size=8)
    lls = [v for v, _ in one.loglikelihood(requests("loglikelihood", TEXTS))]
    assert [v for v, _ in many.loglikelihood(requests("loglikelihood", TEXTS))] == pytest.approx(lls, abs=1e-5)


def test_long_inputs_keep_the_scored_span(tiny_bert, caplog):
    lm = make_lm(tiny_bert, max_length=16)
    words = "the man is kind . " * 10
    long_ctx = lm.loglikelihood(requests("loglikelihood", [(words.strip(), " she said.")]))[0][0]
    kept = " ".join(words.split()[-(14 - 3) :])  # 14 positions minus 3 continuation tokens
    assert long_ctx == pytest.approx(
        lm.loglikelihood(requests("loglikelihood", [(kept, " she said.")]))[0][0], abs=1e-5
    )
    assert "longer than the model's window" in caplog.text
    with pytest.raises(ValueError, match="window holds only"):
        lm.masked_span(requests("masked_span", [("", words, "", "l2r")]))
    rolled = lm.loglikelihood_rolling(requests("loglikelihood_rolling", [(words,)]))[0]
    assert rolled < 0


def test_bad_inputs_give_clear_errors(tiny_bert, tiny_xlmr, tiny_causal, tmp_path):
    with pytest.raises(ValueError, match="next-sentence-prediction head"):
        make_lm(tiny_xlmr).next_sentence(requests("next_sentence", [("a", "b")]))
    with pytest.raises(NotImplementedError, match="cannot generate"):
        make_lm(tiny_bert).generate_until(requests("generate_until", [("a", {})]))
    with pytest.raises(ValueError, match="no masked-LM head class"):
        make_lm(tiny_causal)
    with pytest.raises(ValueError, match="unknown pll"):
        make_lm(tiny_bert, pll="word")
    # a bare encoder checkpoint (no MLM head weights)
    from transformers import BertModel

    bare = tmp_path / "bare"
    BertModel(AutoModelForMaskedLM.from_pretrained(tiny_bert).config).save_pretrained(bare)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(bare)
    with pytest.raises(ValueError, match="no trained masked-LM head"):
        make_lm(bare)
    # a BERT checkpoint saved without its NSP head
    no_nsp = tmp_path / "no_nsp"
    AutoModelForMaskedLM.from_pretrained(tiny_bert).save_pretrained(no_nsp)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(no_nsp)
    with pytest.raises(ValueError, match="lack the NSP head"):
        make_lm(no_nsp).next_sentence(requests("next_sentence", [("a", "b")]))
    # a tokenizer without a mask token
    no_mask = tmp_path / "no_mask"
    tok = AutoTokenizer.from_pretrained(tiny_bert)
    tok.mask_token = None
    AutoModelForPreTraining.from_pretrained(tiny_bert).save_pretrained(no_mask)
    tok.save_pretrained(no_mask)
    with pytest.raises(ValueError, match="has no mask token"):
        make_lm(no_mask)


def test_fit_window_balances_context():
    assert fit_window(10, 4, 6, 4) == (3, 7)
    assert fit_window(10, 8, 10, 4) == (6, 10)
    assert fit_window(10, 0, 1, 4) == (0, 4)
    assert fit_window(5, 1, 3, 8) == (0, 5)
