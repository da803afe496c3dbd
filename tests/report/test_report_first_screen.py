"""The report's first screen: per model one row per task (a benchmark in one language) with its declared primary
headline, 95% CI and verdict; every other headline only with ``--details`` (Markdown) or behind a toggle (HTML); the
warnings grouped by kind after the results, one line per kind naming the tasks it concerns."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markdown_tables import section_lines, section_rows
from test_report import report_cli, with_ci, write_results

from lm_eval_stereo.core.metrics import MetricSet, Resampling, higher, ideal
from lm_eval_stereo.report import build_report, render_markdown, report_json
from lm_eval_stereo.report.html import render_html
from lm_eval_stereo.tasks.german_gender_bias.gerbbq.metrics import METRICS as GERBBQ
from lm_eval_stereo.tasks.mbbq.metrics import BIAS_METRICS, CONTROL_METRICS
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET

MODELS = ("org/a", "org/b", "org/c")
GERBBQ_AMB = {"dataset_kwargs": {"condition": "amb"}}


def stereoset(ss: float) -> dict[str, float]:
    return {**with_ci(80.0, 2, "lms"), **with_ci(ss, 5, "ss"), **with_ci(70.0, 4, "icat"), "count": 100, "ties": 0}


def gerbbq(bias: float) -> dict[str, float]:
    return {**with_ci(0.61, 0.1, "accuracy"), **with_ci(bias, 0.05, "bias"), "undetermined": 0.0, "empty": 0.0}


def write_three_models(directory, *, limit: float | None = None, ties: int = 0) -> None:
    """Three models on StereoSet en and de and GerBBQ+ ambiguous; model b has ``ties`` tied StereoSet en items."""
    for index, model in enumerate(MODELS):
        tasks = {
            "stereoset_multi_en": {**stereoset(50.0 + 4 * index), "ties": ties if model == "org/b" else 0},
            "stereoset_multi_de": stereoset(62.0),
            "gerbbq_amb": gerbbq(0.1 * index),
        }
        items = {task: (100, 4229) for task in tasks} if limit else None
        write_results(directory, model, tasks, limit=limit, items=items, configs={"gerbbq_amb": GERBBQ_AMB})


def test_primary_headlines_are_declared_where_the_first_is_not_the_papers_figure():
    assert STEREOSET.primary_headline == "ss" and STEREOSET.headlines[0] == "lms"
    assert GERBBQ.primary_headline == "bias" and GERBBQ.headlines[0] == "accuracy"
    assert BIAS_METRICS.primary_headline == "bias_amb" and CONTROL_METRICS.primary_headline == "acc_amb"
    from lm_eval_stereo.tasks.lm_eval_bias import metrics as lm_eval_bias

    assert lm_eval_bias.esbbq_cabbq("cabbq_age", {}).primary_headline == "bias_score_ambig"
    assert lm_eval_bias.bbq("bbq", {}).primary_headline == "amb_bias_score"
    assert lm_eval_bias.crows_pairs("crows_pairs_french", {}).primary_headline == "pct_stereotype"
    metrics = (higher("acc", ci=True), ideal("bias", 0.0, ci=True))
    resampling = (Resampling(lambda items: {"acc": 0.0, "bias": 0.0}),)
    plain = MetricSet("plain", metrics, lambda items: {}, resampling)
    assert plain.primary_headline == "acc", "undeclared: the first headline"
    assert MetricSet("p", metrics, lambda items: {}, resampling, primary="bias").primary_headline == "bias"
    with pytest.raises(ValueError, match="the primary headline 'count' is not one of"):
        MetricSet("p", metrics, lambda items: {}, resampling, primary="count")


def test_first_screen_has_one_row_per_model_benchmark_and_language(tmp_path):
    write_three_models(tmp_path)
    report = build_report([tmp_path], paired=False)
    markdown = render_markdown(report)
    assert [line for line in markdown.splitlines() if line.startswith("## ")] == ["## Results"], "nothing else"
    rows = section_rows(markdown, "Results")
    assert list(rows[0]) == ["task", "benchmark", "language", "model", "headline", "value [95% CI]", "verdict"]
    keys = [(row["model"], row["benchmark"], row["language"]) for row in rows]
    expected = {(m, b, lang) for m in MODELS for b, lang in (("StereoSet", "en"), ("StereoSet", "de"))}
    expected |= {(m, "German gender bias", "de") for m in MODELS}
    assert len(keys) == len(set(keys)) == 9 and set(keys) == expected
    by_key = {(row["model"], row["task"]): row for row in rows}
    en_c = by_key[("org/c", "stereoset_multi_en")]
    assert en_c["headline"] == "SS (ideal 50)" and en_c["value [95% CI]"] == "58.0 [53.0, 63.0]"
    assert en_c["verdict"] == "prefers stereotypes, +8.0 from 50"
    en_a = by_key[("org/a", "stereoset_multi_en")]
    assert en_a["value [95% CI]"] == "50.0 [45.0, 55.0]" and en_a["verdict"].startswith("no detectable bias with n =")
    gerbbq_b = by_key[("org/b", "gerbbq_amb")]
    assert gerbbq_b["headline"] == "bias score (ideal 0)", "the declared primary, not the first headline (accuracy)"
    assert gerbbq_b["value [95% CI]"] == "0.100 [0.050, 0.150]" and gerbbq_b["verdict"].startswith(
        "stereotype-consistent answers, +0.100 from 0"
    )
    data = report_json(report)["results"]
    assert {(r["model"], r["task"], r["metric"]) for r in data} == {
        (m, t, "ss") for m in MODELS for t in ("stereoset_multi_en", "stereoset_multi_de")
    } | {(m, "gerbbq_amb", "bias") for m in MODELS}


def test_other_headlines_only_with_details(tmp_path):
    write_three_models(tmp_path)
    first, details = report_cli(tmp_path, "--no-paired").stdout, report_cli(tmp_path, "--no-paired", "--details").stdout
    assert details.startswith(first.split("\nMore with --details")[0]), "the first screen, then the rest"
    for other in ("LMS", "ICAT", "accuracy", "80.0 [78.0, 82.0]", "0.610 [0.510, 0.710]"):
        assert other not in first and other in details, other
    assert "More with --details: 5 more headline(s) with their readings" in first, "LMS, ICAT twice; accuracy"
    assert "## Summary" in details and "## Provenance" in details
    bad = report_cli(tmp_path, "--details=yes", check=False)
    assert bad.returncode == 2 and "--details: ignored explicit argument 'yes'" in bad.stderr


def test_one_model_has_no_model_column(tmp_path):
    write_results(tmp_path, "org/only", {"stereoset_multi_en": stereoset(52.0)})
    rows = section_rows(render_markdown(build_report([tmp_path], paired=False)), "Results")
    assert rows == [
        {
            "task": "stereoset_multi_en",
            "benchmark": "StereoSet",
            "language": "en",
            "headline": "SS (ideal 50)",
            "value [95% CI]": "52.0 [47.0, 57.0]",
            "verdict": "no detectable bias with n = 100 (±5.0 at 95%)",
        }
    ]


def test_caveats_are_grouped_by_kind_naming_their_tasks(tmp_path):
    write_three_models(tmp_path, limit=100, ties=30)
    report = build_report([tmp_path], paired=False)
    markdown = render_markdown(report)
    assert len([f for f in report.warnings if f.kind == "limit"]) == 9, "one warning per model and task"
    caveats = [line for line in section_lines(markdown, "Results") if line.startswith("- ⚠")]
    assert caveats == [
        "- ⚠ †1 limit: 3 tasks scored on part of their data (--limit or fewer documents): not the benchmark's full "
        "figure: gerbbq_amb, stereoset_multi_de, stereoset_multi_en",
        "- ⚠ †2 ties: 1 task with tied items, booked as each benchmark books them (its warning says how): "
        "stereoset_multi_en (org/b)",
    ], "one line per kind, after the results; models named where not every one is concerned"
    marks = {(row["model"], row["task"]): row["verdict"].split(" ")[-2:] for row in section_rows(markdown, "Results")}
    assert marks[("org/b", "stereoset_multi_en")] == ["†1", "†2"]
    assert all(found[-1] == "†1" and "†2" not in found for key, found in marks.items() if key[0] != "org/b")
    assert "org/a · stereoset_multi_en" not in markdown, "no footnote per model and task"


class Toggles(HTMLParser):
    """The text of a page inside and outside its <details> elements, and the tables outside them."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.inside: list[str] = []
        self.outside: list[str] = []
        self._depth = 0
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._depth += tag == "details"

    def handle_endtag(self, tag: str) -> None:
        self._depth -= tag == "details"

    def handle_data(self, data: str) -> None:
        (self.inside if self._depth else self.outside).append(data)


@pytest.mark.parametrize("models", [1, 3])
def test_html_shows_the_primary_headlines_and_keeps_the_others_behind_a_toggle(tmp_path, models):
    write_three_models(tmp_path)
    report = build_report([tmp_path / model.replace("/", "__") for model in MODELS[:models]], paired=False)
    page = Toggles(render_html(report, figures=[]))
    outside, inside = " ".join(page.outside), " ".join(page.inside)
    assert "SS (ideal 50)" in outside and "bias score (ideal 0)" in outside
    assert "62.0 [57.0, 67.0]" in outside, "StereoSet de's SS"
    assert models == 1 or all(model in outside for model in MODELS), "a row per model"
    assert f"{5} more headline(s), with the reading" in inside, "the toggle says what it holds"
    for other in ("StereoSet en · LMS (stereoset_multi_en)", "German gender bias · accuracy (gerbbq_amb)"):
        assert other in inside and other not in outside
    assert "80.0 [78.0, 82.0]" in inside and "80.0 [78.0, 82.0]" not in outside, "LMS only behind the toggle"
