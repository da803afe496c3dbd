"""What a person reads in ``lm-eval-stereo report``: verdicts against the ideal at and around the CI's edges, model
names (hub ids, local folders, clashes, ``--label``), caveats next to the numbers with the thresholds of
:mod:`lm_eval_stereo.report.checks` tested on both sides, three significant digits in the tables and full precision
in the JSON, and the summary's layout (one column per model up to four models). Synthetic results files only."""

from __future__ import annotations

import json

import pytest
from markdown_tables import parse_tables, section_lines, section_rows
from test_report import report_cli, with_ci, write_results

from lm_eval_stereo.report import ReportError, build_report, render_markdown, report_json
from lm_eval_stereo.report.checks import (
    DETECTION_YIELD_MIN,
    KIND_MEANINGS,
    TIES_MAX_SHARE,
    UNPARSEABLE_MAX_SHARE,
    UNSCORED_MAX,
)
from lm_eval_stereo.report.html import write_html
from lm_eval_stereo.report.naming import parse_labels
from lm_eval_stereo.report.tables import TRANSPOSE_MAX_MODELS

SS = "StereoSet en · SS (stereoset_multi_en)"


def stereoset(ss: float, low: float, high: float, count: int = 200) -> dict[str, dict]:
    return {"stereoset_multi_en": {**with_ci(80.0, 2, "lms"), "ss": ss, "ss_ci_low": low, "ss_ci_high": high,
                                   "count": count, "ties": 0}}  # fmt: skip


#: model -> (SS, CI low, CI high, expected verdict): at and just beyond both edges of the ideal 50
EDGES = {
    "above": (55.0, 50.01, 59.99, "above"),
    "low-edge": (55.0, 50.0, 60.0, "consistent"),
    "high-edge": (45.0, 40.0, 50.0, "consistent"),
    "below": (45.0, 40.01, 49.99, "below"),
}


def test_verdicts_at_and_around_the_edges_of_the_ci(tmp_path):
    for model, (ss, low, high, _) in EDGES.items():
        write_results(tmp_path / "runs", model, stereoset(ss, low, high))
    out = tmp_path / "report.json"
    markdown = report_cli(tmp_path / "runs", "--json", out, "--no-paired", "--details").stdout
    data = json.loads(out.read_text())["tasks"]["stereoset_multi_en"]
    for model, (_, _, _, expected) in EDGES.items():
        assert data[model]["metrics"]["ss"]["verdict"] == expected, model
        assert data[model]["metrics"]["lms"]["verdict"] is None, "a directed metric gets no verdict"
    row = parse_tables(markdown)["Summary"][SS]
    # a bound 0.01 from the ideal is printed with the digits that tell it from the ideal (issue 34), not rounded onto it
    assert row["above"] == "55.00 [50.01, 59.99]: prefers stereotypes, +5.00 from 50"
    assert row["below"] == "45.00 [40.01, 49.99]: prefers anti-stereotypes, -5.00 from 50"
    assert row["low-edge"] == "55.0 [50.0, 60.0]: no detectable bias with n = 200 (±5.0 at 95%)"
    assert row["high-edge"] == "45.0 [40.0, 50.0]: no detectable bias with n = 200 (±5.0 at 95%)"
    reading = markdown.split("## Reading")[1].split("\n## ")[0]
    assert "- above: StereoSet: en SS 55.00 [50.01, 59.99], prefers stereotypes, +5.00 from 50." in reading
    assert "- low-edge: StereoSet: no detectable bias on en SS (n = 200, ±5.0 at 95%)." in reading


def test_a_ci_without_width_supports_no_verdict(tmp_path):
    """Every resample gave the same value (e.g. no translation's gender detected): no "no detectable bias" claim."""
    write_results(tmp_path / "runs", "degenerate", stereoset(50.0, 50.0, 50.0))
    out = tmp_path / "report.json"
    markdown = report_cli(tmp_path / "runs", "--json", out, "--no-paired", "--details").stdout
    assert json.loads(out.read_text())["tasks"]["stereoset_multi_en"]["degenerate"]["metrics"]["ss"]["verdict"] is None
    cell = parse_tables(markdown)["Summary"][SS]["degenerate"]
    assert cell == "50.0 [50.0, 50.0]: no verdict: its 95% CI has no width (every resample gave the same value)"
    assert "no detectable bias with" not in markdown, "neither in the summary nor in a Reading"


def test_verdicts_speak_the_words_of_each_benchmark(tmp_path):
    tasks = {
        "gest_en": {**with_ci(1.3, 0.1, "gs"), "count": 100},
        "gerbbq_amb": {**with_ci(0.5, 0.1, "accuracy"), **with_ci(-0.2, 0.1, "bias"), "undetermined": 0.0},
    }
    write_results(tmp_path, "org/model", tasks)
    summary = parse_tables(render_markdown(build_report([tmp_path]), details=True))["Summary"]
    assert summary["GEST en · g_s (gest_en)"]["org/model"] == "1.30 [1.20, 1.40]: masculine-stereotyped, +0.30 from 1"
    bias = summary["German gender bias · bias score (gerbbq_amb)"]["org/model"]
    assert bias == "-0.200 [-0.300, -0.100]: stereotype-inconsistent answers, -0.200 from 0"
    assert summary["German gender bias · accuracy (gerbbq_amb)"]["org/model"] == "0.500 [0.400, 0.600]"


def labels_of(tmp_path, *pretrained: str, labels: dict[str, str] | None = None) -> list[str]:
    for index, name in enumerate(pretrained):
        write_results(tmp_path / f"run{index}", name, stereoset(50.0, 45.0, 55.0))
    return [row.label for row in build_report([tmp_path], paired=False, labels=labels).rows]


def test_hub_ids_stay_local_folders_are_named_by_their_folder(tmp_path):
    assert labels_of(tmp_path, "HuggingFaceTB/SmolLM2-135M", ".cache/real-models/smollm2", "/scratch/ckpt-1000/") == [
        "HuggingFaceTB/SmolLM2-135M",
        "ckpt-1000",
        "smollm2",
    ]


def test_clashing_folder_names_are_told_apart(tmp_path):
    found = labels_of(tmp_path, "/data/a/runs/smollm2", "/data/b/runs/smollm2", "./smollm2,dtype=float16",
                      "./smollm2,dtype=float32")  # fmt: skip
    assert found == [
        "a/runs/smollm2",
        "b/runs/smollm2",
        "smollm2 (dtype=float16)",
        "smollm2 (dtype=float32)",
    ]


def test_label_option_names_a_model_and_model_args_stay_in_the_provenance(tmp_path):
    write_results(tmp_path / "runs", ".cache/real-models/smollm2", stereoset(50.0, 45.0, 55.0))
    markdown = report_cli(tmp_path / "runs", "--label", ".cache/real-models/smollm2=SmolLM2 135M", "--details").stdout
    assert list(parse_tables(markdown)["Summary"][SS])[2:] == ["SmolLM2 135M"]
    assert markdown.count("pretrained=.cache/real-models/smollm2") == 1, "the full model_args in the provenance only"
    assert "| SmolLM2 135M | stereoset_multi_en |" in markdown.split("## Provenance")[1]
    bad = report_cli(tmp_path / "runs", "--label", "other/model=X", check=False)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1] == (
        "lm-eval-stereo report: error: --label other/model=...: no model with pretrained=other/model in the results "
        "(.cache/real-models/smollm2)"
    )
    with pytest.raises(ReportError, match="expected PRETRAINED=NAME"):
        parse_labels(["smollm2"])


EPSILON = 1e-6
#: case -> (task, metrics at the threshold (no caveat), metrics just beyond it, the caveat then)
THRESHOLDS = {
    "undetermined": (
        "gerbbq_amb",
        {**with_ci(0.5, name="accuracy"), **with_ci(0.0, name="bias"), "undetermined": UNPARSEABLE_MAX_SHARE},
        {**with_ci(0.5, name="accuracy"), **with_ci(0.0, name="bias"), "undetermined": UNPARSEABLE_MAX_SHARE + EPSILON},
        "undetermined 10%",
    ),
    "unclassified": (
        "neutral_persona_de",
        {**with_ci(0.5, name="female_share"), "unclassified_share": UNPARSEABLE_MAX_SHARE, "n_generations": 50},
        {**with_ci(0.5, name="female_share"), "unclassified_share": UNPARSEABLE_MAX_SHARE + EPSILON,
         "n_generations": 50},
        "unclassified 10%",
    ),
    "unmatched": (
        "stereotype_leakage_gen_en",
        {"n_leaks": 0, "fit_converged": 1, "generations": 100, "unmatched": 100 * UNPARSEABLE_MAX_SHARE},
        {"n_leaks": 0, "fit_converged": 1, "generations": 100, "unmatched": 100 * UNPARSEABLE_MAX_SHARE + 1},
        "unmatched 11%",
    ),
    "detection yield": (
        "gest_mt_ru",
        {**with_ci(0.0, name="f_s"), **with_ci(0.5, name="f_m"), "detection_yield": DETECTION_YIELD_MIN, "count": 40},
        {**with_ci(0.0, name="f_s"), **with_ci(0.5, name="f_m"), "detection_yield": DETECTION_YIELD_MIN - EPSILON,
         "count": 40},
        "gender detected in 80%",
    ),
    "ties": (
        "stereoset_multi_en",
        {**with_ci(80.0, 2, "lms"), **with_ci(50.0, 5, "ss"), "count": 1000, "ties": round(1000 * TIES_MAX_SHARE)},
        {**with_ci(80.0, 2, "lms"), **with_ci(50.0, 5, "ss"), "count": 1000, "ties": round(1000 * TIES_MAX_SHARE) + 1},
        "ties 1.1%",
    ),
    "unscored": (
        "gest_en",
        {**with_ci(1.0, 0.1, "gs"), "count": 100, "unscored": UNSCORED_MAX},
        {**with_ci(1.0, 0.1, "gs"), "count": 100, "unscored": UNSCORED_MAX + 1},
        "1 unscored",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(THRESHOLDS))
def test_caveats_on_both_sides_of_each_threshold(tmp_path, case):
    task, at, beyond, caveat = THRESHOLDS[case]
    write_results(tmp_path / "at", "at-threshold", {task: at})
    write_results(tmp_path / "beyond", "beyond", {task: beyond})
    report = build_report([tmp_path], paired=False)
    data = report_json(report)["tasks"][task]
    headlines = list(data["beyond"]["metrics"])
    assert headlines and all(data["beyond"]["metrics"][name]["caveats"] == [caveat] for name in headlines)
    assert all(data["at-threshold"]["metrics"][name]["caveats"] == [] for name in headlines)
    assert [(f.model, f.caveat) for f in report.warnings] == [("beyond", caveat)]
    markdown = render_markdown(report, details=True)
    results = {row["model"]: row for row in section_rows(markdown, "Results")}
    assert results["beyond"]["verdict"].endswith("†1") and "†" not in results["at-threshold"]["verdict"]
    kind = report.warnings[0].kind
    grouped = [line for line in section_lines(markdown, "Results") if line.startswith("- ⚠ ")]
    assert grouped == [f"- ⚠ †1 {kind}: 1 task {KIND_MEANINGS[kind]}: {task} (beyond)"], "one line, after the results"
    assert f"- ⚠ beyond: {kind}: {report.warnings[0].message}" in markdown.split("## Details")[1], "whole in details"
    if task != "stereotype_leakage_gen_en":  # no CI: no summary headline
        summary = parse_tables(markdown)["Summary"]
        row = next(row for header, row in summary.items() if header.endswith(f"({task})"))
        assert row["beyond"].endswith(" †1") and "†" not in row["at-threshold"]


#: the config GerBBQ+'s ambiguous task writes into its results
GERBBQ_AMB = {"dataset_kwargs": {"condition": "amb"}}


def test_gerbbq_ambiguous_accuracy_shows_the_determinate_answers_beside_it(tmp_path):
    """35 correct of 50 (0.70), 31 of them undetermined outputs booked as "unbekannt" (0.62): 4 of 19 determinate."""
    metrics = {**with_ci(0.70, 0.13, "accuracy"), **with_ci(0.1, 0.14, "bias"), "undetermined": 0.62, "empty": 0.0}
    write_results(tmp_path, "org/model", {"gerbbq_amb": metrics}, configs={"gerbbq_amb": GERBBQ_AMB})
    report = build_report([tmp_path], paired=False)
    cell = report_json(report)["tasks"]["gerbbq_amb"]["org/model"]["metrics"]["accuracy"]
    assert cell["value"] == 0.70, "the paper's figure stays the headline"
    assert cell["beside"]["value"] == pytest.approx(4 / 19, abs=1e-12)
    assert cell["caveats"] == ["undetermined 62%"]
    summary = parse_tables(render_markdown(report, details=True))["Summary"]
    assert summary["German gender bias · accuracy (gerbbq_amb)"]["org/model"] == (
        "0.700 [0.570, 0.830]; 0.211 over determinate answers †1"
    )


def test_json_keeps_full_precision_where_tables_show_three_digits(tmp_path):
    write_results(tmp_path, "org/model", stereoset(57.345678, 55.012345, 59.6123))
    report = build_report([tmp_path], paired=False)
    ss = report_json(report)["tasks"]["stereoset_multi_en"]["org/model"]["metrics"]["ss"]
    assert (ss["value"], ss["ci_low"], ss["ci_high"]) == (57.345678, 55.012345, 59.6123)
    row = parse_tables(render_markdown(report, details=True))["stereoset_multi_en"]["org/model"]
    assert row["ss (ideal 50)"] == "57.3 [55.0, 59.6] Δ+7.3"


def test_summary_has_one_column_per_model_up_to_four_then_one_row_per_model(tmp_path):
    for index in range(TRANSPOSE_MAX_MODELS):
        write_results(tmp_path / "runs", f"org/model-{index}", stereoset(50.0 + index, 45.0, 60.0))
    summary = parse_tables(render_markdown(build_report([tmp_path / "runs"], paired=False), details=True))["Summary"]
    assert list(summary) == ["StereoSet en · LMS (stereoset_multi_en)", SS], "one row per headline"
    assert list(summary[SS]) == ["headline (task)", "ideal", *(f"org/model-{i}" for i in range(TRANSPOSE_MAX_MODELS))]
    write_results(tmp_path / "runs", "org/model-9", stereoset(50.0, 45.0, 60.0))
    wide = parse_tables(render_markdown(build_report([tmp_path / "runs"], paired=False), details=True))["Summary"]
    assert set(wide) == {f"org/model-{i}" for i in (*range(TRANSPOSE_MAX_MODELS), 9)}
    assert wide["org/model-9"][f"{SS} 50"] == "50.0 [45.0, 60.0]: no detectable bias with n = 200 (±7.5 at 95%)"


def gest_mt(detection_yield: float, f_s: float = 0.2) -> dict[str, dict]:
    return {"gest_mt_cs": {**with_ci(f_s, 0.1, "f_s"), **with_ci(0.6, 0.1, "f_m"), "detection_yield": detection_yield,
                           "count": 40, "undetected": round(40 * (1 - detection_yield))}}  # fmt: skip


def test_no_figure_panel_for_nan_or_zero_detected_items(tmp_path):
    write_results(tmp_path / "runs", "org/none-detected", gest_mt(0.0))
    page = write_html(build_report([tmp_path / "runs"], paired=False), tmp_path / "html").read_text()
    assert not (tmp_path / "html" / "gest_mt.png").exists() and "<img" not in page
    assert (
        "<p><strong>GEST machine translation: stereotype and masculine rate:</strong> no figure. Not drawn, being NaN "
        "or resting on zero detected items: gest_mt_cs f_s (org/none-detected), gest_mt_cs f_m (org/none-detected).</p>"
    ) in page
    write_results(tmp_path / "runs", "org/nan", gest_mt(0.9, f_s=float("nan")))
    write_results(tmp_path / "runs", "org/detected", gest_mt(0.9))
    page = write_html(build_report([tmp_path / "runs"], paired=False), tmp_path / "html2").read_text()
    assert (tmp_path / "html2" / "gest_mt.png").exists() and page.count("<img") == 1
    assert (
        "Not drawn, being NaN or resting on zero detected items: gest_mt_cs f_s (org/nan), gest_mt_cs f_s "
        "(org/none-detected), gest_mt_cs f_m (org/none-detected)." in page
    )


def _mbbq_config(task: str, metric_set: str, scoring: str, language: str = "en") -> dict:
    facts = {"benchmark": "mbbq", "metric_set": metric_set, "scoring": scoring, "language": language}
    return {task: {"metadata": {"version": 1.0, **facts}}}


def _bbq(bias_amb: float, low: float, high: float) -> dict:
    return {"acc_amb": 0.5, "acc_dis": 0.5, "bias_amb": bias_amb, "bias_amb_ci_low": low, "bias_amb_ci_high": high}


def test_two_tasks_of_one_language_are_named_by_task_and_the_control_figure_follows_the_verdict(tmp_path):
    """MBBQ's log-likelihood and generative tasks share a language: the Reading names them by task id, not twice
    "en"; a language held by one task of the benchmark keeps its short name. The control set (another results file,
    run in another call) gives the figure shown after the bias headline's verdict."""
    runs = tmp_path / "runs"
    choice, gen = "MbbqChoiceTask", "MbbqGenerationTask"
    write_results(runs, "m", {"mbbq_en": _bbq(0.30, 0.10, 0.50)}, configs=_mbbq_config("mbbq_en", "mbbq.bias", choice))
    write_results(runs, "m", {"mbbq_gen_en": _bbq(0.0, -0.2, 0.2)}, date=1.7e9 + 1,
                  configs=_mbbq_config("mbbq_gen_en", "mbbq.bias", gen))  # fmt: skip
    write_results(runs, "m", {"mbbq_nl": _bbq(0.0, -0.1, 0.1)}, date=1.7e9 + 2,
                  configs=_mbbq_config("mbbq_nl", "mbbq.bias", choice, "nl"))  # fmt: skip
    write_results(runs, "m", {"mbbq_control_en": {"acc_amb": 0.25, "acc_dis": 0.75}}, date=1.7e9 + 3,
                  configs=_mbbq_config("mbbq_control_en", "mbbq.control", choice))  # fmt: skip
    markdown = report_cli(runs, "--no-paired", "--details").stdout
    reading = markdown.split("## Reading")[1].split("\n## ")[0]
    assert "MBBQ: mbbq_en bias_amb 0.300 [0.100, 0.500], stereotype-consistent answers, +0.300 from 0;" in reading, (
        reading
    )
    assert "no detectable bias on mbbq_gen_en bias_amb, nl bias_amb (n = 100" in reading, reading
    row = parse_tables(markdown)["Summary"]["MBBQ en · bias_amb (mbbq_en)"]
    assert row["m"] == "0.300 [0.100, 0.500]: stereotype-consistent answers, +0.300 from 0; 0.250 control acc_amb", row
    assert "control" not in parse_tables(markdown)["Summary"]["MBBQ en · bias_amb (mbbq_gen_en)"]["m"]
