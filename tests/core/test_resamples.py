"""Issue 34: no silent resamples, bounds that show their side, no declared metric dropped.

A bootstrap statistic is defined on every resample (with the boundary value its formula implies) or its undefined
resamples are counted beside its interval (``<m>_ci_undefined``) in the results, the report and the export; a CI
resting on fewer than all resamples carries a caveat, on fewer than 95% of them it supports no verdict.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from markdown_tables import parse_tables
from test_report import with_ci, write_results

from lm_eval_stereo.core.bootstrap import DEFAULT_ITERS, bootstrap, resample_indices
from lm_eval_stereo.core.metrics import MetricSet, Resampling, ideal
from lm_eval_stereo.export.eee import _score_details
from lm_eval_stereo.export.headlines import plugin_headlines
from lm_eval_stereo.report import build_report, render_markdown
from lm_eval_stereo.report.json_export import report_json
from lm_eval_stereo.report.verdicts import cell_verdict, describe
from lm_eval_stereo.results.run import load_run
from lm_eval_stereo.tasks.german_gender_bias.gerbbq.metrics import COUNT_FIELDS, METRICS, s_dis

STEREOSET = {
    "benchmark": "stereoset_multi",
    "metric_set": "stereoset_multi.scores",
    "key_field": "key",
    "scoring": "StereoSetTask",
    "language": "en",
}


def _gerbbq_doc(index: int, answered: bool) -> dict:
    """One ambiguous document with one generation: an anti-stereotypical answer naming a woman, or an undetermined
    output (booked "unbekannt", the right answer of an ambiguous context)."""
    doc = dict.fromkeys(COUNT_FIELDS, 0) | {"outputs": 1, "generations": 1}
    doc |= {"answered": 1, "answered_f": 1} if answered else {"undetermined": 1, "unknown": 1, "correct": 1}
    return doc | {"key": f"d{index}", "condition": "amb"}


def test_gerbbq_ambiguous_bias_is_zero_where_nothing_is_answered_and_its_ci_includes_zero():
    items = [_gerbbq_doc(index, answered=index == 0) for index in range(8)]
    values = METRICS.compute(items)
    assert values["bias"] == pytest.approx(-0.125), "(1 - 7/8) * (2*0/1 - 1)"
    rows = resample_indices(8, DEFAULT_ITERS)
    without_answer = int((rows != 0).all(axis=1).sum())
    assert 300 < without_answer < 400, "about (7/8)^8 = 34% of the resamples hold no answer naming a person"
    columns = {name: np.array([item[name] for item in items]) for name in COUNT_FIELDS}
    plain = bootstrap(columns, lambda c: {"s_dis": float(s_dis(c))})["s_dis"]
    assert plain.undefined == without_answer, "s_DIS itself is undefined there, and counted"
    assert values["bias_ci_undefined"] == 0, "s_AMB is 0 there: (1 - accuracy) = 0"
    assert values["bias_ci_low"] <= 0.0 <= values["bias_ci_high"] == 0.0
    assert values["bias_ci_low"] == pytest.approx(-0.375)
    assert METRICS.compute([_gerbbq_doc(index, answered=False) for index in range(4)])["bias"] == 0.0


def _half_undefined(share: float) -> MetricSet:
    """A metric whose statistic is undefined on resamples whose first row is below ``share`` of the items."""

    def statistic(columns):
        x = columns["x"]
        return {"m": float("nan") if x[0] < share else float(x.mean())}

    return MetricSet(
        "toy",
        (ideal("m", 0.5, ci=True),),
        lambda items: {"m": float(np.mean([item["x"] for item in items]))},
        (Resampling(statistic, lambda items: {"x": np.array([item["x"] for item in items])}),),
        id="toy.m",
    )


def test_undefined_resamples_are_counted_beside_the_interval():
    items = [{"x": x} for x in np.linspace(0, 1, 50)]
    metric_set = _half_undefined(0.2)
    assert metric_set.names == ("m", "m_ci_low", "m_ci_high", "m_ci_undefined")
    values = metric_set.compute(items)
    first = np.linspace(0, 1, 50)[resample_indices(50, DEFAULT_ITERS)[:, 0]]
    assert values["m_ci_undefined"] == int((first < 0.2).sum()) > 100
    assert math.isfinite(values["m_ci_low"]) and math.isfinite(values["m_ci_high"])
    assert metric_set.higher_is_better()["m_ci_undefined"] is None


def _stereoset(tmp_path: Path, model: str, ss: dict, **extra) -> Path:
    tasks = {"stereoset_multi_en": {**ss, "count": 200, **extra}}
    return write_results(tmp_path, model, tasks, configs={"stereoset_multi_en": {"metadata": STEREOSET}})


@pytest.mark.parametrize("undefined, verdict", [(0, "above"), (30, "above"), (80, None)])
def test_a_ci_on_fewer_resamples_carries_a_caveat_and_below_95_percent_no_verdict(tmp_path, undefined, verdict):
    ss = {**with_ci(58.0, 4, "ss"), "ss_ci_undefined": undefined}
    _stereoset(tmp_path, "m", ss, **with_ci(90.0, 2, "lms"), **with_ci(75.0, 3, "icat"))
    report = build_report([tmp_path])
    (cell,) = report.task_cells("stereoset_multi_en")
    assert cell.estimate("ss").undefined == undefined
    assert cell_verdict(cell, "ss") == verdict
    found = [f for f in report.warnings if f.kind == "undefined resamples"]
    data = report_json(report)["tasks"]["stereoset_multi_en"]["m"]["metrics"]["ss"]
    assert data["ci_undefined"] == undefined and data["verdict"] == verdict
    markdown = render_markdown(report, details=True)
    if not undefined:
        assert not found and describe(cell, "ss") == "prefers stereotypes, +8.0 from 50"
        return
    assert [(f.task, f.metrics, f.caveat) for f in found] == [
        ("stereoset_multi_en", ("ss",), f"CI on {1000 - undefined}/1000 resamples")
    ]
    assert data["caveats"] == [f"CI on {1000 - undefined}/1000 resamples"]
    assert f"ss undefined on {undefined} of 1000 bootstrap resamples" in markdown
    if verdict is None:
        words = describe(cell, "ss")
        assert (
            words
            == "no verdict: its 95% CI rests on 920 of 1000 resamples (< 95%; the metric is undefined on the others)"
        )
        assert "prefers stereotypes" not in markdown


def test_a_bound_is_printed_with_the_digits_that_tell_it_from_the_ideal(tmp_path):
    ss = {"ss": 55.0, "ss_ci_low": 50.01, "ss_ci_high": 60.0}
    _stereoset(tmp_path, "m", ss, **with_ci(90.0, 2, "lms"), **with_ci(75.0, 3, "icat"))
    report = build_report([tmp_path])
    markdown = render_markdown(report, details=True)
    assert "55.00 [50.01, 60.00]: prefers stereotypes, +5.00 from 50" in markdown
    assert "[50.0, 60.0]" not in markdown
    assert parse_tables(markdown)["stereoset_multi_en"]["m"]["ss (ideal 50)"] == "55.00 [50.01, 60.00] Δ+5.00"
    other = tmp_path / "below"
    _stereoset(other, "m", {"ss": 45.0, "ss_ci_low": 40.0, "ss_ci_high": 49.9996})
    row = parse_tables(render_markdown(build_report([other]), details=True))["stereoset_multi_en"]["m"]
    assert row["ss (ideal 50)"] == "45.0000 [40.0000, 49.9996] Δ-5.0000"


def test_declared_metrics_without_interval_keys_are_shown_nan_as_nan(tmp_path):
    path = write_results(
        tmp_path, "m", {"stereoset_multi_en": {**with_ci(55.0, 3, "ss"), "lms": 91.0, "icat": float("nan")}}
    )
    assert "icat_ci_low" not in json.loads(path.read_text())["results"]["stereoset_multi_en"]
    report = build_report([tmp_path])
    (cell,) = report.task_cells("stereoset_multi_en")
    assert cell.headlines == ["ss", "lms", "icat"]
    row = parse_tables(render_markdown(report, details=True))["stereoset_multi_en"]["m"]
    assert (row["lms ↑"], row["icat ↑"]) == ("91.0", "nan")
    metrics = report_json(report)["tasks"]["stereoset_multi_en"]["m"]["metrics"]
    assert metrics["lms"]["value"] == 91.0 and metrics["lms"]["ci_low"] is None
    assert metrics["icat"]["value"] is None and "icat" in metrics


def test_the_export_records_the_undefined_resamples_beside_the_interval(tmp_path):
    ss = {**with_ci(58.0, 4, "ss"), "ss_ci_undefined": 12}
    path = _stereoset(tmp_path, "m", ss, **with_ci(90.0, 2, "lms"), **with_ci(75.0, 3, "icat"))
    run = load_run(path)
    headlines, _ = plugin_headlines(run, "stereoset_multi_en", run.declaration("stereoset_multi_en"), None)
    by_metric = {headline.metric: headline for headline in headlines}
    assert by_metric["ss"].undefined == 12 and by_metric["lms"].undefined is None
    details = _score_details(by_metric["ss"])
    assert details["details"]["bootstrap_undefined_resamples"] == "12"
    assert details["uncertainty"]["confidence_interval"]["lower"] == 54.0
    assert "bootstrap_undefined_resamples" not in _score_details(by_metric["lms"])["details"]
