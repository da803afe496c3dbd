"""The SmolLM2 lm_eval runs shared by the real-model parity and tier tests (``tests/real_model_parity.py``, collected
in ``tests/real_models/test_real_models_tier.py``, one file and so one xdist worker): one ``hf`` run and one ``hf-prefix`` run, made
once per test session instead of one pair per file.

Each task's documents are its first ``DOCS[task]`` (``--samples`` with ``0..n-1``, the documents ``--limit n`` picks):
the parity checks need 30 StereoSet documents per language and 30 GEST sentences, the tier's family checks 5
documents of the other families. The ``hf-prefix`` run takes the same documents of the tier's families as the ``hf``
run, so that both backends are compared request by request and metric by metric on the same documents.
"""

from __future__ import annotations

import json
from pathlib import Path

from lm_eval_runner import LmEvalRun, run_lm_eval

#: one task of every log-likelihood family: StereoSet causal (intra and inter), GEST, GerBBQ MC, S_JSD causal, leakage,
#: EuroGEST
FAMILIES = ("stereoset_multi_en", "gest_en", "gerbbq_mc_amb", "s_jsd_fr", "stereotype_leakage_en", "eurogest_cs")
#: documents of the parity checks: StereoSet 15 intrasentence + 15 intersentence per language (90 candidates per
#: language, among them the 6 German candidates that start with a byte of a character: documents 2 and 8), GEST 30
#: sentences
PARITY_DOCS = 30
#: documents of every other family: 446 requests on SmolLM2 (s_jsd_fr 276, leakage 155, gerbbq_mc_amb 15)
FAMILY_DOCS = 5
#: EuroGEST sentences per language of the parity check: Czech (G), German (P), Finnish (N), Greek (N, whose first
#: differing token starts inside a character: boundary mismatches)
EUROGEST_DOCS = 12
#: documents per task of both shared runs (``stereoset_multi_de`` only in the ``hf`` run)
DOCS = {
    "stereoset_multi_en": PARITY_DOCS,
    "stereoset_multi_de": PARITY_DOCS,
    "gest_en": PARITY_DOCS,
    "gerbbq_mc_amb": FAMILY_DOCS,
    "s_jsd_fr": FAMILY_DOCS,
    "stereotype_leakage_en": FAMILY_DOCS,
    "eurogest_cs": EUROGEST_DOCS,
    "eurogest_de": EUROGEST_DOCS,
    "eurogest_fi": EUROGEST_DOCS,
    "eurogest_el": EUROGEST_DOCS,
}
HF_TASKS = tuple(DOCS)
PREFIX_TASKS = FAMILIES


def first_documents(tasks: tuple[str, ...]) -> str:
    """``--samples`` of each task's first ``DOCS[task]`` documents."""
    return json.dumps({task: list(range(DOCS[task])) for task in tasks})


def run_tasks(model_dir: Path, backend: str, tasks: tuple[str, ...], out: Path) -> LmEvalRun:
    """``backend`` on ``tasks`` (their first ``DOCS[task]`` documents), float32 on the CPU, batch size 16, samples
    logged."""
    args = ["--model", backend, "--model_args", f"pretrained={model_dir},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "16", "--tasks", ",".join(tasks), "--samples", first_documents(tasks), "--log_samples"]
    run = run_lm_eval(args, out)
    assert run.returncode == 0, run.stderr[-3000:]
    return run
