"""The log-likelihood scoring comparison of :mod:`bench.bench_scoring` on MBBQ: ``hf-prefix`` against ``hf`` on
``mbbq_en``, SmolLM2-135M-Instruct (real weights). Each MBBQ item is three requests that share a long context (the
context and the question) and differ in a short answer, so hf-prefix forwards the shared context once instead of three
times: the targets are 3× end to end, at least 90% of the token ceiling (hf's forwarded tokens / hf-prefix's), and
hf-prefix end to end within 1.1× of a bare forward of its packed rows."""

from __future__ import annotations

from pathlib import Path

from bench.bench_scoring import measure
from lm_eval_stereo.local_models.real import SMOLLM2, materialise

REPO = Path(__file__).resolve().parents[1]
#: 200 of mbbq_en's 10,088 items (10 with --quick)
LIMITS = (200 / 10088, 10 / 10088)


def run(quick: bool = False) -> dict:
    path = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    return measure(
        path,
        "SmolLM2-135M-Instruct (real weights, Llama architecture)",
        " on MBBQ (mbbq_en), SmolLM2-135M-Instruct",
        quick,
        tasks=["mbbq_en"],
        limits=LIMITS,
        speed_target=3.0,
        ceiling_target=0.90,
        overhead_target=1.1,
    )
