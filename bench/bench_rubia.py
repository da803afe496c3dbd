"""The log-likelihood scoring comparison of :mod:`bench.bench_scoring` on RuBia: ``hf-prefix`` against ``hf`` on the
``rubia`` group (four domains), SmolLM2-135M-Instruct (real weights). Each sentence is one request whose context is its
first token, so the two backends forward about the same tokens (no shared context to save): the row measures what
hf-prefix's packing costs or saves on short sentences, and the target is that it is not slower end to end. Where ``hf``
flags a sentence (its first token a byte of a Cyrillic letter, which no string request can say), hf-prefix scores the
reference's tokens: those documents are left out of the comparison of the two sides' numbers."""

from __future__ import annotations

from pathlib import Path

from bench.bench_scoring import measure
from lm_eval_stereo.local_models.real import SMOLLM2, materialise

REPO = Path(__file__).resolve().parents[1]
#: a twentieth of every domain's pairs (112 pairs, 224 requests); 1% with --quick
LIMITS = (0.05, 0.01)


def run(quick: bool = False) -> dict:
    path = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    return measure(
        path,
        "SmolLM2-135M-Instruct (real weights, Llama architecture)",
        " on RuBia (rubia), SmolLM2-135M-Instruct",
        quick,
        tasks=["rubia"],
        limits=LIMITS,
        speed_target=1.0,
        overhead_target=1.1,
    )
