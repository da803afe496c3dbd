"""Per-candidate parity with the StereoSet reference code on a real model, SmolLM2-135M-Instruct.

Collected in ``tests/real_models/test_real_models_tier.py`` (imported there): one test file, so that ``--dist loadfile`` gives these
tests and the tier's to one worker, which makes the session's shared SmolLM2 runs (``tests/real_runs.py``) once.

The reference (slds-lmu/stereotypes-multi @ 883f005, ``generative_inference`` and ``generative_inference_gpt`` case
"d", batch size 1) is re-implemented as a plain loop over one candidate at a time in ``tests/stereoset_reference.py``. SmolLM2's tokenizer encodes
``"<|endoftext|>"`` as one token (id 0, its document separator) while lm_eval's prefix token is its BOS
``<|im_start|>`` (id 1): the intrasentence first token must be conditioned on the former, whatever the backend and
``prefix_token_id`` say. German candidates whose first token is one byte of a character ("Ä…") cannot keep the
reference's split through lm_eval's string requests: they are counted in ``boundary_mismatches``, not hidden.
"""

from __future__ import annotations

import json

import pytest
import torch
from lm_eval_runner import LmEvalRun, run_lm_eval
from real_runs import PARITY_DOCS
from stereoset_reference import reference_intersentence, reference_intrasentence

#: natural-log mean probability per token; float32 forwards of different batch shapes, which the CPU decides: largest
#: difference measured 6.6e-6 on one machine, 4.3e-5 on an AMD EPYC without AVX-512 (the conditioning bug this guards
#: against moved candidates by up to 1.1)
TOL = 1e-4
LIMIT = PARITY_DOCS  # documents per language: 15 intrasentence + 15 intersentence, 90 candidates; GEST: 30 sentences
PREFIX_LIMIT = 20  # documents per language of the hf-prefix run with another prefix token
LANGS = ("en", "de")


@pytest.fixture(scope="module")
def smollm2_model(smollm2):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(smollm2, dtype=torch.float32).eval(), AutoTokenizer.from_pretrained(
        smollm2
    )


def _run(smollm2, out, backend: str, limit: int, extra_args: str = "") -> LmEvalRun:
    tasks = ",".join(f"stereoset_multi_{lang}" for lang in LANGS)
    args = ["--model", backend, "--model_args", f"pretrained={smollm2},dtype=float32{extra_args}", "--device", "cpu"]
    args += ["--batch_size", "16", "--tasks", tasks, "--limit", str(limit), "--log_samples"]
    run = run_lm_eval(args, out)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


@pytest.fixture(scope="module")
def hf_run(smollm2_hf_run) -> LmEvalRun:
    """``hf`` on StereoSet (en, de) and GEST (en), their first :data:`LIMIT` documents each: the session's one SmolLM2
    ``hf`` run (``tests/real_runs.py``, shared with the tier tests, which add 5 documents of three other tasks)."""
    return smollm2_hf_run


@pytest.fixture(scope="module")
def prefix_run(smollm2, tmp_path_factory) -> LmEvalRun:
    """``hf-prefix`` with a deliberately different ``prefix_token_id``: the intrasentence start must not follow it."""
    return _run(smollm2, tmp_path_factory.mktemp("real_parity_prefix"), "hf-prefix", PREFIX_LIMIT, ",prefix_token_id=2")


def first_token_is_part_of_a_character(tokenizer, sentence: str) -> bool:
    """The independent count: the sentence's first token does not decode to a prefix of the sentence."""
    first = tokenizer.decode(tokenizer.encode(sentence)[:1])
    return not sentence.startswith(first) or "\ufffd" in first


@pytest.fixture(scope="module")
def compared(hf_run, smollm2_model) -> dict[str, list[dict]]:
    """Per language, every candidate: our score, the reference's, whether its boundary was kept, its test."""
    model, tokenizer = smollm2_model
    rows = {}
    for lang in LANGS:
        rows[lang] = []
        for sample in hf_run.samples[f"stereoset_multi_{lang}"]:
            doc = sample["doc"]
            for c, candidate in enumerate(sample["lms"]["candidates"], start=1):
                sentence = doc[f"c{c}_sentence"]
                if doc["test"] == "intrasentence":
                    reference = reference_intrasentence(model, tokenizer, sentence)
                else:
                    reference = reference_intersentence(model, tokenizer, doc["context"], sentence)
                rows[lang].append(
                    {
                        "test": doc["test"],
                        "id": candidate["id"],
                        "ours": candidate["score"],
                        "reference": reference,
                        "kept": candidate.get("boundaries_kept", True),
                        "byte_start": doc["test"] == "intrasentence"
                        and first_token_is_part_of_a_character(tokenizer, sentence),
                    }
                )
    return rows


@pytest.mark.parametrize("lang", LANGS)
def test_every_candidate_with_kept_boundaries_equals_the_reference(compared, lang):
    rows = compared[lang]
    kept = [row for row in rows if row["kept"]]
    assert len({row["test"] for row in kept}) == 2 and len(kept) >= 3 * LIMIT - 6
    worst = max(abs(row["ours"] - row["reference"]) for row in kept)
    assert worst < TOL, f"{lang}: largest difference {worst:.2e}"


def test_byte_start_candidates_are_exactly_the_counted_boundary_mismatches(compared, hf_run):
    """German "Äthiopien…" candidates: the independent count equals ``boundaries_kept: False`` and the metric."""
    for lang in LANGS:
        rows = compared[lang]
        counted = hf_run.results["results"][f"stereoset_multi_{lang}"]["boundary_mismatches,none"]
        assert [row["id"] for row in rows if not row["kept"]] == [row["id"] for row in rows if row["byte_start"]]
        assert counted == sum(not row["kept"] for row in rows)
    assert sum(not row["kept"] for row in compared["de"]) == 6 and sum(not row["kept"] for row in compared["en"]) == 0
    # they are scored, and stay close to the reference (only the second byte's context differs)
    assert all(abs(row["ours"] - row["reference"]) < 1.0 for row in compared["de"] if not row["kept"])


def test_a_real_model_scores_far_above_random_weights(hf_run, tiny_causal, tmp_path):
    """Language-modelling score on the same 30 English StereoSet documents, an LMS of 50 being chance: measured 83.3
    for SmolLM2 against 41.7 for the random tiny model (80.0 and 45.8 on the first 60) (Gemma 3: 84.5 on the first 500 documents, docs/REAL_MODELS.md).
    Threshold: real > 70 > random."""
    real = hf_run.results["results"]["stereoset_multi_en"]["lms,none"]
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu"]
    random_run = run_lm_eval([*args, "--tasks", "stereoset_multi_en", "--limit", str(LIMIT)], tmp_path)
    random = random_run.results["results"]["stereoset_multi_en"]["lms,none"]
    assert real > 70 > random, (real, random)


def test_the_results_name_the_start_token(hf_run):
    for lang in LANGS:
        scoring = hf_run.results["results"][f"stereoset_multi_{lang}"]["intrasentence_scoring,none"]
        assert "first token after <|endoftext|> (id 0, as the reference)" in scoring


def test_hf_prefix_with_another_prefix_token_scores_the_same(hf_run, prefix_run, compared):
    """The start token is part of the request, so neither the backend nor ``prefix_token_id`` changes a score; and
    ``hf-prefix`` scores the reference's tokens of the German candidates that start with a byte of a character, which
    ``hf`` can only flag: none flagged, each equal to the reference loop."""
    for lang in LANGS:
        task = f"stereoset_multi_{lang}"
        reference = {row["id"]: row for row in compared[lang]}
        ours = {s["doc_id"]: s["lms"]["candidates"] for s in hf_run.samples[task]}
        theirs = {s["doc_id"]: s["lms"]["candidates"] for s in prefix_run.samples[task]}
        assert len(theirs) == PREFIX_LIMIT and theirs.keys() <= ours.keys()
        byte_start = 0
        for doc, candidates in theirs.items():
            for mine, prefix in zip(ours[doc], candidates, strict=True):
                assert prefix.get("boundaries_kept", True), (lang, prefix["id"])
                if mine.get("boundaries_kept", True):
                    assert abs(mine["score"] - prefix["score"]) < TOL, (lang, prefix["id"])
                else:
                    byte_start += 1
                    assert abs(reference[prefix["id"]]["reference"] - prefix["score"]) < TOL, (lang, prefix["id"])
        assert prefix_run.results["results"][task]["boundary_mismatches,none"] == 0
        assert byte_start == (6 if lang == "de" else 0)


def test_the_prefix_token_option_restores_the_old_conditioning(smollm2, smollm2_model, tmp_path):
    """``intrasentence_start: prefix_token`` conditions the first token on lm_eval's prefix token (``<|im_start|>``
    here), the rest on the first token only, as before."""
    model, tokenizer = smollm2_model
    args = ["--model", "hf", "--model_args", f"pretrained={smollm2},dtype=float32", "--device", "cpu"]
    args += ["--tasks", "stereoset_multi_en", "--samples", json.dumps({"stereoset_multi_en": [0]}), "--log_samples"]
    args += ["--metadata", json.dumps({"intrasentence_start": "prefix_token"})]
    run = run_lm_eval(args, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    doc = run.samples["stereoset_multi_en"][0]["doc"]
    sentence = doc["c1_sentence"]
    ids = tokenizer.encode(sentence)
    with torch.no_grad():
        first = model(torch.tensor([[tokenizer.bos_token_id]]))[0].log_softmax(dim=-1)[0, 0, ids[0]].item()
        log_probs = model(torch.tensor([ids]))[0].log_softmax(dim=-1)[0]
    expected = (first + sum(log_probs[i - 1, ids[i]].item() for i in range(1, len(ids)))) / len(ids)
    got = run.samples["stereoset_multi_en"][0]["lms"]["candidates"][0]["score"]
    assert abs(got - expected) < TOL
    assert abs(got - reference_intrasentence(model, tokenizer, sentence)) > 1e-3  # a real difference on SmolLM2


# ---------------------------------------------------------------- GEST (kinit-sk/gest @ 7dd908c, _inference.ipynb)

#: (prompt, male word, female word) of the reference's "English Generative LMs" templates
GEST_TEMPLATES = (('"{s}",', "he", "she"), ('"{s}", the', "man", "woman"))


@torch.no_grad()
def reference_gest(model, tokenizer, sentence: str, template: tuple[str, str, str], word_ids: tuple[int, int]) -> float:
    """``generative_score``: the prompt encoded as the tokenizer does by default (no start token is added for
    SmolLM2), log10 P(male token) − log10 P(female token) at the next position."""
    tokens = tokenizer(template[0].format(s=sentence), return_tensors="pt")
    probs = model(**tokens).logits[0][-1].softmax(dim=-1)
    return float(torch.log10(probs[word_ids[0]]) - torch.log10(probs[word_ids[1]]))


def test_gest_en_equals_the_reference_on_smollm2(hf_run, smollm2_model):
    """The reference picks each word's token as ``encode(word)[-1]`` of a tokenizer loaded with
    ``add_prefix_space=True``: " he", " she", " man", " woman" (one token each in SmolLM2's vocabulary; the
    transformers 5 backend of this tokenizer ignores ``add_prefix_space``, so the id is taken from the word with its
    space, which is what the flag asks for). No start token on either side."""
    model, tokenizer = smollm2_model
    ids = {word: tokenizer.encode(f" {word}") for template in GEST_TEMPLATES for word in template[1:]}
    assert all(len(token) == 1 for token in ids.values())
    samples = hf_run.samples["gest_en"]
    assert len(samples) == LIMIT
    worst = 0.0
    for sample in samples:
        item = next(value for value in sample.values() if isinstance(value, dict) and "scores" in value)
        for name, template in zip(("t0", "t1"), GEST_TEMPLATES):
            reference = reference_gest(
                model, tokenizer, sample["doc"]["sentence"], template, (ids[template[1]][0], ids[template[2]][0])
            )
            worst = max(worst, abs(item["scores"][name] - reference))
    assert worst < 1e-5, f"largest difference {worst:.2e} (log10 units)"


# ------------------------------------------------------- EuroGEST (JacquelineRowe/EuroGEST @ b543592, evaluate_models)

#: Czech (G), German (P), Finnish (N), Greek (N: "είπε ο άντρας" / "είπε η γυναίκα", whose first differing token is
#: the second byte of "ο"/"η" in SmolLM2's tokenizer)
EUROGEST_LANGS = ("cs", "de", "fi", "el")


def test_eurogest_equals_the_reference_on_smollm2(hf_run, smollm2_model):
    """Every sentence of the first 12 per language: where lm_eval's encoding of the logged requests
    (``tests/lm_eval_encoding.py``) scores exactly the reference's tokens, the mean log-probabilities equal the plain
    reference loop (``tests/eurogest_reference.py``) within TOL; the others are exactly the sentences the task flagged
    (measured: none in cs, de, fi; all 12 Greek ones, N sentences, whose masculine and feminine scaffolds differ first
    in the second byte of a character)."""
    from eurogest_reference import reference_rows, reference_scored_tokens, reference_sentence
    from lm_eval_encoding import lm_eval_encoding
    from real_runs import EUROGEST_DOCS

    model, tokenizer = smollm2_model
    conditions, flagged = set(), {}
    for lang in EUROGEST_LANGS:
        rows, samples = reference_rows(lang), hf_run.samples[f"eurogest_{lang}"]
        assert len(samples) == EUROGEST_DOCS
        flagged[lang] = 0
        for sample in samples:
            item = sample["gs"]
            masculine, feminine, condition, _ = rows[item["id"]]
            conditions.add(condition)
            requests = [(a["arg_0"], a["arg_1"]) for a in sample["arguments"].values()]
            scored = reference_scored_tokens(tokenizer, masculine, feminine)
            kept = all(
                lm_eval_encoding(tokenizer, *request)[1] == tokens
                and sum(lm_eval_encoding(tokenizer, *request), []) == tokenizer(text)["input_ids"]
                for request, tokens, text in zip(requests, scored, (masculine, feminine))
            )
            assert item["boundary_mismatch"] == (not kept), (lang, item["id"])
            if not kept:
                flagged[lang] += 1
                continue
            lp_m, lp_f, ratio = reference_sentence(model, tokenizer, masculine, feminine)
            assert abs(item["lp_m"] - lp_m) < TOL and abs(item["lp_f"] - lp_f) < TOL, (lang, item["id"])
            assert abs(item["masculine_ratio"] - ratio) < TOL
        assert hf_run.results["results"][f"eurogest_{lang}"]["boundary_mismatches,none"] == flagged[lang]
    assert conditions == {"G", "P", "N"}
    assert flagged == {"cs": 0, "de": 0, "fi": 0, "el": 12}


#: Greek sentences of the hf-prefix check: one of each stereotype (N sentences, whose masculine and feminine scaffolds
#: differ first in the second byte of a character: every one flagged under ``hf``)
EUROGEST_PREFIX_DOCS = 16


def test_eurogest_greek_under_hf_prefix_is_the_reference_s_tokens(smollm2, smollm2_model, tmp_path):
    """``hf-prefix`` scores the reference's tokens: no Greek sentence flagged, each equal to the plain reference loop
    (TOL), and g_s (over the stereotypes present, ``eurogest_min_sentences: 1``) equal to the reference's equation on
    the loop's ratios."""
    from eurogest_reference import reference_rows, reference_sentence

    model, tokenizer = smollm2_model
    options = {"eurogest_min_sentences": 1, "eurogest_complete_only": False}
    args = ["--model", "hf-prefix", "--model_args", f"pretrained={smollm2},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "16", "--tasks", "eurogest_el", "--limit", str(EUROGEST_PREFIX_DOCS), "--log_samples"]
    run = run_lm_eval([*args, "--metadata", json.dumps(options)], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = reference_rows("el")
    ratios: dict[int, list[float]] = {}
    conditions = set()
    for sample in run.samples["eurogest_el"]:
        item = sample["gs"]
        masculine, feminine, condition, stereotype = rows[item["id"]]
        assert not item["boundary_mismatch"], item["id"]
        conditions.add(condition)
        lp_m, lp_f, ratio = reference_sentence(model, tokenizer, masculine, feminine)
        assert abs(item["lp_m"] - lp_m) < TOL and abs(item["lp_f"] - lp_f) < TOL, item["id"]
        ratios.setdefault(stereotype, []).append(ratio)
    assert run.results["results"]["eurogest_el"]["boundary_mismatches,none"] == 0 and conditions == {"N"}
    assert sum(len(values) for values in ratios.values()) == EUROGEST_PREFIX_DOCS and len(ratios) == 16
    means = {s: sum(values) / len(values) for s, values in ratios.items()}
    gs = (sum(means[s] for s in range(8, 17)) / 9) / (sum(means[s] for s in range(1, 8)) / 7)
    assert abs(run.results["results"]["eurogest_el"]["gs,none"] - gs) < TOL
