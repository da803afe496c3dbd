"""Paired comparisons of the stereotype-leakage tasks on their association cells, through the report.

Fixtures: results and samples files as ``lm_eval --log_samples`` writes them for ``stereotype_leakage_{en,ru}`` (items
under the first metric), two templates per trait, seeded scores. The references are written here: the cell table is
the plain mean over templates, the difference of mean |A| with the project's resampler's draws, McNemar from scipy.
Tolerances: differences 1e-12; bootstrap bounds 1e-12 (same seeded draws); McNemar p 1e-12 (exact binomial).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from lm_eval_runner import run_lm_eval
from scipy import stats
from test_paired import reference_paired_bootstrap
from test_report import report_cli, write_results

from lm_eval_stereo.report import build_report
from lm_eval_stereo.report.paired import MCNEMAR, SIGN_FLIP
from lm_eval_stereo.tasks.stereotype_leakage.metrics import LEAKAGE_METRICS

GROUPS = ("Asian people", "Black people", "women", "men", "Christians")
TRAITS = ("warm", "competent", "lazy", "honest", "rich", "poor")
TEMPLATES = 2


def leakage_items(lang: str, values: np.ndarray) -> list[dict]:
    """Items as a causal leakage task logs them: per template and trait the association of every group."""
    return [
        {
            "key": f"{lang}/t{template}/{trait}",
            "trait": trait,
            "prior": -3.0,
            "associations": {group: float(values[template, t, g]) for g, group in enumerate(GROUPS)},
        }
        for template in range(TEMPLATES)
        for t, trait in enumerate(TRAITS)
    ]


def write_run(directory: Path, model: str, per_language: dict[str, np.ndarray]) -> None:
    tasks = {f"stereotype_leakage_{lang}": {"n_leaks": 0, "cells": 30, "scored_cells": 30} for lang in per_language}
    path = write_results(directory, model, tasks)
    stamp = path.stem.removeprefix("results_")
    names = [metric.name for metric in LEAKAGE_METRICS]
    for lang, values in per_language.items():
        lines = [
            json.dumps({"doc_id": i, "metrics": names, names[0]: item})
            for i, item in enumerate(leakage_items(lang, values))
        ]
        (path.parent / f"samples_stereotype_leakage_{lang}_{stamp}.jsonl").write_text("\n".join(lines) + "\n")


def reference_cells(values: np.ndarray) -> dict[str, float]:
    """A(g, t): the plain mean over templates, keyed as the report keys cells."""
    return {
        f"{group}|{trait}": float(np.mean([values[k, t, g] for k in range(TEMPLATES)]))
        for t, trait in enumerate(TRAITS)
        for g, group in enumerate(GROUPS)
    }


@pytest.fixture(scope="module")
def scores() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    english = rng.normal(0.4, 1.0, size=(TEMPLATES, len(TRAITS), len(GROUPS)))
    russian = english * 2.5 + rng.normal(0.0, 0.3, size=english.shape)  # stronger associations, mostly the same sign
    russian[:, 0, 0] = -np.abs(english[:, 0, 0]) - 0.5  # the (Asian people, warm) cell turns negative
    russian[1, 5, 4] = math.nan  # one NaN template score: (Christians, poor) has no value in Russian
    return {"en": english, "ru": russian}


def test_languages_are_compared_cell_by_cell_with_the_cells_whose_sign_flips(tmp_path, scores):
    write_run(tmp_path, "model", scores)
    report = build_report([tmp_path])
    (result,) = report.paired.languages
    assert (result.task, result.a, result.b) == ("stereotype_leakage", "stereotype_leakage_en", "stereotype_leakage_ru")
    cells_en, cells_ru = reference_cells(scores["en"]), reference_cells(scores["ru"])
    keys = sorted(key for key in cells_en if math.isfinite(cells_ru[key]))
    assert result.left_out == 1 and len(keys) == 29
    a = np.array([cells_en[key] for key in keys])
    b = np.array([cells_ru[key] for key in keys])
    strength, share = result.comparisons
    assert strength.metric == "mean_abs_association" and strength.test == SIGN_FLIP and strength.n == 29
    assert strength.difference == pytest.approx(np.abs(a).mean() - np.abs(b).mean(), abs=1e-12)
    low, high = reference_paired_bootstrap(np.abs(a), np.abs(b), report.paired.iters, report.paired.seed)
    assert (strength.low, strength.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert strength.difference < 0 and strength.p < 0.001, "Russian associations are 2.5 times as strong"
    flipped = sorted(key for key, x, y in zip(keys, a, b) if (x > 0) != (y > 0))
    assert "Asian people|warm" in flipped
    assert share.metric == "positive_share" and share.test == MCNEMAR
    assert sorted(key for key, _, _ in share.flips) == flipped
    en_only = sum(1 for x, y in zip(a, b) if x > 0 >= y)
    assert share.discordant == (en_only, len(flipped) - en_only)
    assert share.p == pytest.approx(stats.binomtest(en_only, len(flipped), 0.5).pvalue, abs=1e-12)
    assert share.difference == pytest.approx(100 * (np.mean(a > 0) - np.mean(b > 0)), abs=1e-12)


def test_identical_runs_differ_by_zero_and_different_models_are_compared(tmp_path, scores):
    write_run(tmp_path, "one", {"en": scores["en"]})
    write_run(tmp_path, "same", {"en": scores["en"]})
    write_run(tmp_path, "stronger", {"en": scores["en"] * 3})
    report = build_report([tmp_path])
    by_pair = {(r.a, r.b): r for r in report.paired.models}
    for comparison in by_pair[("one", "same")].comparisons:
        assert (comparison.difference, comparison.low, comparison.high, comparison.p) == (0.0, 0.0, 0.0, 1.0)
    strength, share = by_pair[("one", "stronger")].comparisons
    cells = np.array(list(reference_cells(scores["en"]).values()))
    assert strength.difference == pytest.approx(-2 * np.abs(cells).mean(), abs=1e-12) and strength.p < 0.001
    assert share.difference == 0 and share.discordant == (0, 0) and share.p == 1.0, "same signs"


def test_the_json_lists_the_flipped_cells(tmp_path, scores):
    write_run(tmp_path / "runs", "model", scores)
    out = tmp_path / "report.json"
    report_cli(tmp_path / "runs", "--json", out)
    (language,) = json.loads(out.read_text())["paired"]["languages"]
    share = next(c for c in language["comparisons"] if c["metric"] == "positive_share")
    assert {"item": "Asian people|warm", "a": 100.0, "b": 0.0} in share["flips"]
    assert language["left_out"] == 1


def test_lm_eval_runs_in_two_languages_are_compared_on_their_shared_cells(tiny_causal, tmp_path):
    """Through lm_eval: the tiny causal model on English and Russian templates, the cells both runs scored."""
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "8", "--tasks", "stereotype_leakage_en,stereotype_leakage_ru", "--limit", "6"]
    run = run_lm_eval([*args, "--log_samples"], tmp_path, env={"OMP_NUM_THREADS": "1"})
    tables = {}
    for lang in ("en", "ru"):
        entries: dict[str, list[float]] = {}
        for sample in run.samples[f"stereotype_leakage_{lang}"]:
            item = sample[sample["metrics"][0]]
            for group, value in item["associations"].items():
                entries.setdefault(f"{group}|{item['trait']}", []).append(value)
        tables[lang] = {key: float(np.mean(values)) for key, values in entries.items()}
    keys = sorted(set(tables["en"]) & set(tables["ru"]))
    assert len(keys) >= 30, "the first documents of both languages share a trait"
    (result,) = build_report([tmp_path]).paired.languages
    strength, share = result.comparisons
    a, b = np.array([tables["en"][k] for k in keys]), np.array([tables["ru"][k] for k in keys])
    assert strength.n == share.n == len(keys)
    assert strength.difference == pytest.approx(np.abs(a).mean() - np.abs(b).mean(), abs=1e-9)
    assert sorted(key for key, _, _ in share.flips) == [k for k, x, y in zip(keys, a, b) if (x > 0) != (y > 0)]
