"""``bench/bench_precision.py``'s drift computation on the tiny seeded model, with real values (no timing)."""

from __future__ import annotations

import pytest

from bench import bench_precision


@pytest.fixture(scope="module")
def runs(tiny_causal):
    """stereoset_multi_en + gest_en, 4 documents each, through ``hf``: float32 twice, bfloat16 once."""
    return [bench_precision.evaluate(tiny_causal, "hf", dtype, limit=4) for dtype in ("float32", "float32", "bfloat16")]


def test_float32_against_itself_drifts_nowhere(runs):
    found = bench_precision.drift(runs[0], runs[1])
    assert set(found["tasks"]) == set(bench_precision.TASKS)
    for task in found["tasks"].values():
        assert task["requests"] > 0 and task["max"] == task["mean"] == task["p95"] == 0.0
        assert all(flipped == 0 and total > 0 for flipped, total in task["flips"].values())
    assert set(found["tasks"]["stereoset_multi_en"]["flips"]) == {"preferred", "pro", "related"}
    assert found["tasks"]["stereoset_multi_en"]["flips"]["related"][1] == 8  # two judgements per item
    assert set(found["tasks"]["gest_en"]["flips"]) == {"sign"}
    assert {"stereoset_multi_en/lms", "stereoset_multi_en/ss", "stereoset_multi_en/icat", "gest_en/gs"} <= set(
        found["headlines"]
    )
    assert all(delta == 0.0 for _, _, delta in found["headlines"].values())


def test_bfloat16_drifts_from_float32(runs):
    found = bench_precision.drift(runs[0], runs[2])
    for task in found["tasks"].values():
        assert 0.0 < task["mean"] <= task["p95"] <= task["max"]
    reference = bench_precision.per_request(runs[0])
    other = bench_precision.per_request(runs[2])
    largest = max(abs(reference[key] - other[key]) for key in reference)
    assert largest == max(task["max"] for task in found["tasks"].values())
    gs = found["headlines"]["gest_en/gs"]
    assert gs[2] == pytest.approx(gs[1] - gs[0]) and gs[2] != 0.0
    markdown = bench_precision.markdown({"hf": found}, 4, {"hf": {"float32": 1.0, "bfloat16": 2.0}}, 63_616)
    assert "| hf | gest_en |" in markdown and "GEST sign per item and template (g_s)" in markdown


def test_runs_of_other_requests_are_not_compared(runs):
    shorter = {**runs[1], "samples": {task: samples[:-1] for task, samples in runs[1]["samples"].items()}}
    with pytest.raises(ValueError, match="different requests"):
        bench_precision.drift(runs[0], shorter)
