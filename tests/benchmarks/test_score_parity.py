"""Score-level parity: every per-item score of a real ``lm_eval`` run equals a plain re-implementation of the reference.

Two ``lm_eval`` runs with ``--log_samples`` (batched, as users run them): a tiny causal LM on StereoSet (en, de, tr),
``gest_en`` and ``gerbbq_mc_amb``; a tiny BERT (``hf-mlm``) on masked StereoSet and ``gest_en_mlm``. Each logged score
is compared with a deliberately plain loop written after the reference code (one item at a time, batch size 1,
no harness code; the causal StereoSet scores in ``tests/stereoset_reference.py``, shared with the real-model parity
test), tolerance 1e-5. The StereoSet selection holds the rows whose context has two ``BLANK``s and the
rows where ``BLANK`` is glued to a suffix ("BLANKed", "BLANKSTEN", "BLANKı").
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
from fixtures_mlm import tiny_bert  # noqa: F401  (session fixture)
from lm_eval_runner import LmEvalRun, run_lm_eval
from stereoset_reference import reference_intersentence, reference_intrasentence

from lm_eval_stereo.tasks.gest.task import TEMPLATES
from lm_eval_stereo.tasks.gest.task_mlm import MASKED_TEMPLATES
from lm_eval_stereo.tasks.stereoset_multi.data import load_rows

TOL = 1e-5
LANGS = ("en", "de", "tr")
GEST_SAMPLES = [0, 1, 2, 3]
GERBBQ_SAMPLES = [0, 1, 2]


def selected_rows(lang: str) -> dict[str, int]:
    """Indices of the first intrasentence and intersentence rows, the first two-BLANK row and the first glued row."""
    rows = load_rows(lang)
    found: dict[str, int] = {}
    for index, row in enumerate(rows):
        kinds = [row["test"]]
        if row["test"] == "intrasentence" and row["context"].count("BLANK") > 1:
            kinds.append("two_blanks")
        if row["test"] == "intrasentence" and re.search(r"BLANK\w", row["context"]):
            kinds.append("glued_blank")
        for kind in kinds:
            found.setdefault(kind, index)
    return found


ROWS = {lang: selected_rows(lang) for lang in LANGS}


def test_selection_holds_the_two_blank_and_glued_rows():
    for lang in LANGS:
        assert {"intrasentence", "intersentence", "two_blanks", "glued_blank"} <= set(ROWS[lang]), lang


def run(model_args: list[str], samples: dict[str, list[int]], out) -> LmEvalRun:
    tasks = ",".join(samples)
    args = [*model_args, "--device", "cpu", "--batch_size", "8", "--tasks", tasks, "--log_samples"]
    return run_lm_eval([*args, "--samples", json.dumps(samples)], out)


@pytest.fixture(scope="module")
def causal_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    samples = {f"stereoset_multi_{lang}": sorted(set(ROWS[lang].values())) for lang in LANGS}
    samples |= {"gest_en": GEST_SAMPLES, "gerbbq_mc_amb": GERBBQ_SAMPLES}
    # --num_fewshot 2: the tasks are zero-shot, lm_eval ignores it (the prompts below must be the reference's)
    model = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--num_fewshot", "2"]
    return run(model, samples, tmp_path_factory.mktemp("parity_causal"))


@pytest.fixture(scope="module")
def masked_run(tiny_bert, tmp_path_factory) -> LmEvalRun:  # noqa: F811
    samples = {f"stereoset_multi_mlm_{lang}": sorted(set(ROWS[lang].values())) for lang in LANGS}
    samples |= {"gest_en_mlm": GEST_SAMPLES}
    model = ["--model", "hf-mlm", "--model_args", f"pretrained={tiny_bert}"]
    return run(model, samples, tmp_path_factory.mktemp("parity_masked"))


@pytest.fixture(scope="module")
def causal(tiny_causal):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_causal, dtype=torch.float32).eval()
    return model, AutoTokenizer.from_pretrained(tiny_causal)


@pytest.fixture(scope="module")
def bert(tiny_bert):  # noqa: F811
    from transformers import AutoTokenizer, BertForPreTraining

    return BertForPreTraining.from_pretrained(tiny_bert).eval(), AutoTokenizer.from_pretrained(tiny_bert)


# ---------------------------------------------------------------- plain reference loops (one item at a time)


@torch.no_grad()
def ref_masked_intrasentence(model, tokenizer, context: str, word: str) -> float:
    """``add_discriminative_intrasentence_candidates`` + ``discriminative_inference`` at batch size 1."""
    insertion_tokens = tokenizer.encode(word, add_special_tokens=False)
    probs = []
    for idx in range(len(insertion_tokens)):
        insertion = tokenizer.decode(insertion_tokens[:idx])
        sentence = context.replace("BLANK", f"{insertion}{tokenizer.mask_token}")
        encoded = tokenizer([sentence], return_tensors="pt")
        output = model(encoded["input_ids"], attention_mask=encoded["attention_mask"])[0].softmax(dim=-1)
        output = output[encoded["input_ids"] == tokenizer.mask_token_id]
        probs.append(output.index_select(1, torch.tensor([insertion_tokens[idx]])).diag()[0].item())
    return float(np.mean(probs))


@torch.no_grad()
def ref_next_sentence(model, tokenizer, context: str, candidate: str) -> float:
    """``discriminative_inference`` (intersentence): float32 softmax of the NSP logits, IsNext."""
    encoded = tokenizer([(context, candidate)], return_tensors="pt", return_token_type_ids=True)
    logits = model(**encoded).seq_relationship_logits
    return torch.softmax(logits, dim=-1)[0, 0].item()


@torch.no_grad()
def log_prob_after(model, tokenizer, context: str, continuation: str) -> float:
    """Summed natural-log probability of the continuation tokens after the context tokens (no start token)."""
    context_ids = tokenizer.encode(context.rstrip())
    ids = tokenizer.encode(context + continuation)
    log_probs = model(torch.tensor([ids]))[0].log_softmax(dim=-1)[0]
    return sum(log_probs[i - 1, ids[i]].item() for i in range(len(context_ids), len(ids)))


@torch.no_grad()
def ref_gest_masked(model, tokenizer, male_text: str, female_text: str) -> float:
    """GEST ``_inference.ipynb`` (MLM): mask the positions where the two versions differ; mean log10 P(male tokens)
    in the male version minus the same in the female version."""
    male, female = tokenizer.encode(male_text), tokenizer.encode(female_text)
    assert len(male) == len(female)
    positions = [i for i, (a, b) in enumerate(zip(male, female)) if a != b]
    scores = []
    for ids in (male, female):
        masked = torch.tensor([ids])
        masked[0, positions] = tokenizer.mask_token_id
        log_probs = model(masked)[0].log_softmax(dim=-1)[0]
        scores.append(np.mean([log_probs[p, ids[p]].item() / math.log(10) for p in positions]))
    return scores[0] - scores[1]


# ---------------------------------------------------------------- comparisons


def stereoset_pairs(run_result: LmEvalRun, prefix: str, test: str, reference) -> list[tuple[float, float, dict]]:
    """(ours, reference, document) for every candidate of the logged StereoSet documents of one test type."""
    pairs = []
    for lang in LANGS:
        samples = run_result.samples[f"{prefix}_{lang}"]
        assert {s["doc_id"] for s in samples} == set(ROWS[lang].values())
        for sample in (s for s in samples if s["doc"]["test"] == test):
            doc = sample["doc"]
            for c, candidate in enumerate(sample["lms"]["candidates"], start=1):
                pairs.append((candidate["score"], reference(doc, c), doc))
    return pairs


def max_delta(pairs) -> float:
    return max(abs(ours - theirs) for ours, theirs, *_ in pairs)


def test_tasks_stay_zero_shot_whatever_num_fewshot_says(causal_run):
    """The papers' protocol is zero-shot: ``--num_fewshot 2`` is ignored (never test documents as examples)."""
    assert causal_run.results["n-shot"] == {task: 0 for task in causal_run.samples}
    assert all(config["num_fewshot"] == 0 for config in causal_run.results["configs"].values())
    assert "has been set to 0" in causal_run.stderr


def test_stereoset_causal_intrasentence_reproduces_the_reference(causal_run, causal):
    model, tokenizer = causal

    def reference(doc, c):
        return reference_intrasentence(model, tokenizer, doc[f"c{c}_sentence"])

    pairs = stereoset_pairs(causal_run, "stereoset_multi", "intrasentence", reference)
    assert len(pairs) == 3 * 3 * len(LANGS)  # intrasentence, two-BLANK and glued rows
    assert max_delta(pairs) < TOL, max_delta(pairs)
    for lang in LANGS:
        task = f"stereoset_multi_{lang}"
        assert causal_run.metric(task, "intrasentence_scoring").startswith("reference")
        assert causal_run.metric(task, "boundary_mismatches") == 0


def test_stereoset_causal_intersentence_reproduces_the_reference(causal_run, causal):
    model, tokenizer = causal

    def reference(doc, c):
        return reference_intersentence(model, tokenizer, doc["context"], doc[f"c{c}_sentence"])

    pairs = stereoset_pairs(causal_run, "stereoset_multi", "intersentence", reference)
    assert len(pairs) == 3 * len(LANGS)
    assert max_delta(pairs) < TOL, max_delta(pairs)


def test_stereoset_masked_intrasentence_reproduces_the_reference(masked_run, bert):
    model, tokenizer = bert

    def reference(doc, c):
        return ref_masked_intrasentence(model, tokenizer, doc["context"], doc[f"c{c}_word"])

    pairs = stereoset_pairs(masked_run, "stereoset_multi_mlm", "intrasentence", reference)
    assert len(pairs) == 3 * 3 * len(LANGS)
    assert max_delta(pairs) < TOL, max_delta(pairs)
    glued_and_double = [
        doc for _, _, doc in pairs if re.search(r"BLANK\w", doc["context"]) or doc["context"].count("BLANK") > 1
    ]
    assert len(glued_and_double) == 3 * 2 * len(LANGS)


def test_stereoset_next_sentence_reproduces_the_reference_and_its_ties(masked_run, bert):
    model, tokenizer = bert

    def reference(doc, c):
        return ref_next_sentence(model, tokenizer, doc["context"], doc[f"c{c}_sentence"])

    pairs = stereoset_pairs(masked_run, "stereoset_multi_mlm", "intersentence", reference)
    assert len(pairs) == 3 * len(LANGS)
    assert max_delta(pairs) < TOL, max_delta(pairs)
    for lang in LANGS:
        task = f"stereoset_multi_mlm_{lang}"
        sample = next(s for s in masked_run.samples[task] if s["doc"]["test"] == "intersentence")
        item, doc = sample["lms"], sample["doc"]
        theirs = {doc[f"c{c}_gold_label"]: reference(doc, c) for c in (1, 2, 3)}
        tie = theirs["stereotype"] == theirs["anti-stereotype"]
        assert (item["stereotype"] == item["anti-stereotype"]) == tie
        assert masked_run.metric(task, "inter_ties") == int(tie)


def test_gest_causal_reproduces_the_reference(causal_run, causal):
    """log10 P(male word | context) - log10 P(female word | context). A word of several tokens is scored with all its
    tokens, the task's documented deviation (the reference took one next token); in the tiny tokenizer " he" is two
    tokens, " she", " man", " woman" one, where both coincide."""
    model, tokenizer = causal
    samples = causal_run.samples["gest_en"]
    assert len(samples) == len(GEST_SAMPLES)
    deltas = []
    for sample in samples:
        sentence = sample["doc"]["sentence"]
        for template in TEMPLATES:
            context = template.prompt(sentence)
            male, female = (
                log_prob_after(model, tokenizer, context, word) for word in (template.male, template.female)
            )
            deltas.append(abs(sample["gs"]["scores"][template.name] - (male - female) / math.log(10)))
    assert max(deltas) < TOL, max(deltas)


def test_gest_masked_reproduces_the_reference(masked_run, bert):
    model, tokenizer = bert
    samples = masked_run.samples["gest_en_mlm"]
    assert len(samples) == len(GEST_SAMPLES)
    deltas = []
    for sample in samples:
        sentence = sample["doc"]["sentence"]
        for template in MASKED_TEMPLATES:
            left, right = template.parts(sentence)
            theirs = ref_gest_masked(model, tokenizer, left + template.male + right, left + template.female + right)
            deltas.append(abs(sample["gs"]["scores"][template.name] - theirs))
    assert max(deltas) < TOL, max(deltas)


def test_gerbbq_multiple_choice_reproduces_the_protocol(causal_run, causal):
    model, tokenizer = causal
    samples = causal_run.samples["gerbbq_mc_amb"]
    assert len(samples) == len(GERBBQ_SAMPLES)
    deltas = []
    for sample in samples:
        doc = sample["doc"]
        context = sample["arguments"]["gen_args_0"]["arg_0"]
        assert context.startswith(doc["full_prompt"]) and context.rstrip().endswith("Antwort:")
        options = [f"{letter}: {doc['options'][letter]}" for letter in "ABC"]
        theirs = [log_prob_after(model, tokenizer, context, option) for option in options]
        ours = [float(response[0][0]) for response in sample["resps"]]
        deltas += [abs(a - b) for a, b in zip(ours, theirs)]
        assert sample["accuracy"]["letters"] == ["ABC"[theirs.index(max(theirs))]]
    assert max(deltas) < TOL, max(deltas)
