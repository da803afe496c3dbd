"""``make bench-gpu`` (``bench/gpu.py``): on a machine without CUDA it says so and exits 0; its projection of the
``stereo_leaderboard`` time from measured rates (no timing here)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from lm_eval_runner import REPO

from bench import gpu


def test_without_a_gpu_it_says_so_and_exits_0():
    """On a machine without a CUDA device (any machine, its devices hidden by ``CUDA_VISIBLE_DEVICES``) the script
    measures nothing, prints why, and succeeds."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.gpu"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "bench-gpu: no CUDA GPU here (torch.cuda.is_available() is False): nothing measured."


def test_projection_divides_each_backend_s_tokens_by_its_rate_in_that_dtype():
    measured = [
        gpu.Measured("bfloat16", "mbbq_en", "hf", 2.0, 20_000, 20_000),
        gpu.Measured("bfloat16", "demo mix", "hf", 1.0, 10_000, 10_000),
        gpu.Measured("bfloat16", "mbbq_en", "hf-prefix", 1.0, 4_000, 20_000),
        gpu.Measured("bfloat16", "demo mix", "hf-prefix", 1.0, 4_000, 10_000),
        gpu.Measured("float32", "mbbq_en", "hf", 4.0, 20_000, 20_000),
    ]
    assert measured[2].forwarded_per_second == 4_000 and measured[2].hf_tokens_per_second == 20_000
    projected = gpu.project(1_000_000, 250_000, measured)
    # hf bfloat16: 30,000 tokens in 3 s = 10,000/s; hf-prefix: 8,000 in 2 s = 4,000/s; hf float32: 5,000/s
    assert projected == {
        ("bfloat16", "hf"): pytest.approx(100.0),
        ("bfloat16", "hf-prefix"): pytest.approx(62.5),
        ("float32", "hf"): pytest.approx(200.0),
    }
    assert gpu.hours(7200) == "2.00 h" and gpu.hours(90) == "1.5 min"
