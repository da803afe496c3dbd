"""``lm-eval-stereo report`` over real lm_eval runs of three tiny models, and over small synthetic results files.

The real runs (one session fixture, the three lm_eval processes run side by side with ``--log_samples``) give the
StereoSet, GEST and GerBBQ+ tables, figures and paired comparisons (checked against references computed here from the
samples); synthetic files give the S_JSD and leakage figures, each warning with a fixture that triggers it and one
that does not, broken files, runs without samples and a significant paired difference in the summary; the page
layout is checked on the HTML and, where Debian's chromium is installed, in a real headless browser.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_command, run_lm_eval
from markdown_tables import parse_tables, section_lines, section_rows
from scipy import stats
from suite_tools import skip_reason

from lm_eval_stereo.report import ReportError, build_report, render_markdown
from lm_eval_stereo.report.figures import WIDTH_PX, dot_plot_height, require_matplotlib
from lm_eval_stereo.report.formatting import format_estimate, format_value
from lm_eval_stereo.report.html import render_html, write_html
from lm_eval_stereo.report.model import Estimate
from lm_eval_stereo.report.tables import MAX_COLUMNS, Table, split
from lm_eval_stereo.results.declarations import Declaration, declaration_of
from lm_eval_stereo.results.ideals import Ideal
from lm_eval_stereo.results.model_names import model_name
from lm_eval_stereo.results.run import Run
from lm_eval_stereo.tasks.gest.figure import HEIGHT_PX as GEST_HEIGHT_PX
from lm_eval_stereo.tasks.stereoset_multi.figure import HEIGHT_PX as STEREOSET_HEIGHT_PX

LIMIT = 3
#: model 0 runs the two groups (for the totals), models 1 and 2 one member each (smaller, faster runs)
TASKS = ("stereoset_multi,gest_en,gerbbq_mc", "stereoset_multi_en,gest_en,gerbbq_mc_amb", "stereoset_multi_en,gest_en")


@dataclass
class ModelRuns:
    root: Path
    runs: list[LmEvalRun]
    labels: list[str]


@pytest.fixture(scope="session")
def model_runs(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> ModelRuns:
    """Three tiny causal LMs (seeds 0, 1, 2) evaluated by the real lm_eval command, each into its own folder."""
    from lm_eval_stereo.local_models.tiny import build_causal_lm

    root = tmp_path_factory.mktemp("report_runs")
    models = [tiny_causal, *(build_causal_lm(tmp_path_factory.mktemp(f"model{seed}"), seed=seed) for seed in (1, 2))]

    def evaluate(index: int) -> LmEvalRun:
        args = ["--model", "hf", "--model_args", f"pretrained={models[index]},dtype=float32", "--device", "cpu"]
        args += ["--tasks", TASKS[index], "--limit", str(LIMIT), "--batch_size", "8", "--log_samples"]
        return run_lm_eval(args, root / f"out{index}")

    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = list(pool.map(evaluate, range(3)))
    return ModelRuns(root, runs, [model_name(str(model)) for model in models])


@dataclass
class ReportOutputs:
    """What one ``lm-eval-stereo report --details --html DIR --json FILE`` of the three real runs wrote (``--details``
    changes the printed markdown only)."""

    markdown: str
    html_dir: Path
    json_file: Path


@pytest.fixture(scope="session")
def report_outputs(model_runs: ModelRuns, tmp_path_factory: pytest.TempPathFactory) -> ReportOutputs:
    folder = tmp_path_factory.mktemp("report_outputs")
    html_dir, json_file = folder / "html", folder / "report.json"
    printed = report_cli(model_runs.root, "--details", "--html", html_dir, "--json", json_file).stdout
    return ReportOutputs(printed, html_dir, json_file)


@pytest.fixture(scope="session")
def markdown(report_outputs: ReportOutputs) -> str:
    """``lm-eval-stereo report --details`` of the three real runs."""
    return report_outputs.markdown


def report_cli(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess:
    """``lm-eval-stereo report ARGS`` (a child of the fork server of the runs: :func:`lm_eval_runner.run_command`)."""
    proc = run_command("report", *args)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def places(*values: float) -> int | None:
    """Decimals for three significant digits of the largest magnitude (None: scientific below 1e-3)."""
    scale = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    if scale == 0:
        return 3
    return None if scale < 1e-3 else max(0, 2 - math.floor(math.log10(scale)))


def fmt(value, sign: str = "", decimals: int | None | str = "own") -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    decimals = places(value) if decimals == "own" else decimals
    return f"{value:{sign}.3g}" if decimals is None else f"{value:{sign}.{decimals}f}"


def test_numbers_have_three_significant_digits():
    assert [format_value(v) for v in (2.3149e-05, -0.0004, 0.0, 0.25, 57.34, 0.91249, 1234.5, 100.0)] == [
        "2.31e-05",
        "-0.0004",
        "0.000",
        "0.250",
        "57.3",
        "0.912",
        "1234",
        "100",
    ]
    assert format_value(-1.5e-06, "+") == "-1.5e-06" and format_value(0.5, "+") == "+0.500"
    assert format_value(7, "+") == "7", "integers as they are"


def test_an_estimate_shares_the_decimals_of_its_largest_magnitude():
    assert format_estimate(Estimate(57.34, 55.0, 59.61), None) == "57.3 [55.0, 59.6]"
    assert format_estimate(Estimate(0.91249, 0.9, 0.92501), None) == "0.912 [0.900, 0.925]"
    assert format_estimate(Estimate(-0.02, -0.15, 0.11), Ideal("target", 0.0)) == "-0.020 [-0.150, 0.110] Δ-0.020"
    assert format_estimate(Estimate(60.0, 55.0, 65.0, 2.5), None) == "60.0 ± 2.5 [55.0, 65.0]"
    assert format_estimate(Estimate(2.31e-05, 1.2e-05, 3.5e-05), None) == "2.31e-05 [1.2e-05, 3.5e-05]"


def expected_cell(results: dict, task: str, name: str, ideal: float | None = None) -> str:
    """What the table must show for a metric of a results file: value, ± lm_eval's stderr where it is a number,
    [low, high] where the task has a CI, Δ to a middle ideal, all with the decimals of the largest of value and CI."""
    metrics = results["results"][task]
    value = metrics[f"{name},none"]
    bounds = [metrics[f"{name}_ci_{side},none"] for side in ("low", "high") if f"{name}_ci_{side},none" in metrics]
    decimals = places(value, *bounds)
    text = fmt(value, decimals=decimals)
    if isinstance(stderr := metrics.get(f"{name}_stderr,none"), float):
        text += f" ± {fmt(stderr, decimals=decimals)}"
    if bounds:
        text += f" [{fmt(bounds[0], decimals=decimals)}, {fmt(bounds[1], decimals=decimals)}]"
    if ideal is not None and math.isfinite(value):
        text += f" Δ{fmt(value - ideal, '+', decimals)}"
    return text


# --- tables from the real runs ---------------------------------------------------------------------------------------


def test_table_values_and_intervals_equal_the_results_files(model_runs, markdown):
    tables = parse_tables(markdown)
    checked = 0
    for run, label in zip(model_runs.runs, model_runs.labels):
        for task in ("stereoset_multi_en", "gest_en"):
            row = tables[task][label]
            if task.startswith("stereoset"):
                assert row["lms ↑"] == expected_cell(run.results, task, "lms")
                assert row["icat ↑"] == expected_cell(run.results, task, "icat")
                assert row["ss (ideal 50)"] == expected_cell(run.results, task, "ss", ideal=50)
                assert row["count"] == str(run.metric(task, "count")) == str(LIMIT)
                assert row["ties"] == str(run.metric(task, "ties"))
            else:
                assert row["gs (ideal 1)"] == expected_cell(run.results, task, "gs", ideal=1)
                assert row["q_09_self_confident (ideal 0)"] == expected_cell(
                    run.results, task, "q_09_self_confident", 0
                )
                assert row["unscored"] == str(run.metric(task, "unscored"))
            assert row["items"] == f"{LIMIT} of {run.results['n-samples'][task]['original']}"
            checked += 1
    amb = tables["gerbbq_mc_amb"]
    assert set(amb) == set(model_runs.labels[:2]), "model 2 did not run GerBBQ+: no row"
    for run, label in zip(model_runs.runs[:2], model_runs.labels[:2]):
        assert amb[label]["accuracy ↑"] == expected_cell(run.results, "gerbbq_mc_amb", "accuracy")
        assert amb[label]["bias (ideal 0)"] == expected_cell(run.results, "gerbbq_mc_amb", "bias", ideal=0)
        assert amb[label]["undetermined ↓"] == fmt(run.metric("gerbbq_mc_amb", "undetermined"))
    assert checked == 6
    assert set(tables["stereoset_multi_de"]) == {model_runs.labels[0]}


def test_metrics_with_an_ideal_in_the_middle_have_no_arrow(markdown):
    tables = parse_tables(markdown)
    headers = {header for table in tables.values() for row in table.values() for header in row}
    for name, ideal in (("ss", 50), ("bias", 0), ("gs", 1), ("q_16_strong", 0)):
        assert f"{name} (ideal {ideal})" in headers
        assert not {f"{name} ↑", f"{name} ↓"} & headers
    assert {"lms ↑", "icat ↑", "accuracy ↑", "undetermined ↓", "ties", "count"} <= headers
    for header in headers - {"model", "items"}:
        if "(ideal " in header:
            assert "↑" not in header and "↓" not in header, header


def test_group_rows_total_the_counts_of_their_members(model_runs, markdown):
    run, label = model_runs.runs[0], model_runs.labels[0]
    tables = parse_tables(markdown)
    languages = ("en", "de", "fr", "es", "tr")
    members = [f"stereoset_multi_{lang}" for lang in languages]
    group = tables["stereoset_multi"][label]
    total = sum(run.metric(task, "count") for task in members)
    assert group["count"] == str(total) == str(5 * LIMIT)
    assert run.metric("stereoset_multi", "count") == LIMIT, "lm_eval's own group row is the mean"
    assert group["ties"] == str(sum(run.metric(task, "ties") for task in members))
    original = sum(run.results["n-samples"][task]["original"] for task in members)
    assert group["items"] == f"{5 * LIMIT} of {original}"
    lms = run.metric("stereoset_multi", "lms")
    assert group["lms ↑"] == expected_cell(run.results, "stereoset_multi", "lms")
    assert "[" not in group["lms ↑"], "the group's mean has no interval (a mean of bounds is none)"
    assert lms == pytest.approx(sum(run.metric(task, "lms") for task in members) / 5)
    gerbbq = tables["gerbbq_mc"][label]
    assert gerbbq["items"] == f"{2 * LIMIT} of {2 * run.results['n-samples']['gerbbq_mc_amb']['original']}"
    pooled = sum(run.metric(task, "undetermined") for task in ("gerbbq_mc_amb", "gerbbq_mc_dis")) / 2
    assert gerbbq["undetermined ↓"] == fmt(pooled)


def test_html_page_and_figures(model_runs, report_outputs):
    html_dir, json_file = report_outputs.html_dir, report_outputs.json_file
    page = PageParser.parse((html_dir / "index.html").read_text())
    sizes = {src: (width, height) for src, width, height in page.images}
    expected = {
        "stereoset.png": (WIDTH_PX, STEREOSET_HEIGHT_PX),
        "gest_gest_en.png": (WIDTH_PX, GEST_HEIGHT_PX),
        "german.png": (WIDTH_PX, dot_plot_height(2)),  # accuracy and bias
    }
    assert sizes == expected, "no S_JSD or leakage figure without their metrics"
    for src, size in sizes.items():
        assert png_size(html_dir / src) == size, src
        assert (html_dir / src).stat().st_size > 5000, src
    assert len(page.captions) == 3 and all("How to read this:" in caption for caption in page.captions)
    assert any("(100, 50)" in caption or "LMS 100, SS 50" in caption for caption in page.captions)
    run, label = model_runs.runs[0], model_runs.labels[0]
    assert page.cell("stereoset_multi_de", label, "icat ↑") == expected_cell(run.results, "stereoset_multi_de", "icat")
    row = page.row("Provenance", [label, "stereoset_multi_en"])
    assert row["version"] == str(run.results["versions"]["stereoset_multi_en"])
    assert row["normalization"] == run.metric("stereoset_multi_en", "normalization")
    assert row["normalization"].startswith("token (")
    assert [row[name] for name in ("n-shot", "limit", "items", "lm_eval")] == [
        "0",
        str(LIMIT),
        f"{LIMIT} of 4229",
        run.results["lm_eval_version"],
    ]
    data = json.loads(json_file.read_text())
    lms = data["tasks"]["stereoset_multi_en"][label]["metrics"]["lms"]
    assert lms["value"] == run.metric("stereoset_multi_en", "lms")
    assert (lms["ci_low"], lms["ci_high"]) == (
        run.metric("stereoset_multi_en", "lms_ci_low"),
        run.metric("stereoset_multi_en", "lms_ci_high"),
    )
    assert lms["stderr"] == run.results["results"]["stereoset_multi_en"]["lms_stderr,none"]
    assert isinstance(lms["stderr"], float), "the plugin's bootstrap stderr reaches lm_eval's <metric>_stderr"
    assert (lms["ideal"], lms["direction"]) == (None, "higher")
    ss = data["tasks"]["stereoset_multi_en"][label]["metrics"]["ss"]
    assert (ss["value"], ss["ideal"], ss["direction"]) == (run.metric("stereoset_multi_en", "ss"), 50, "target")
    assert data["tasks"]["stereoset_multi"][label]["counts"]["count"] == 5 * LIMIT


def test_newest_run_per_model_unless_all_runs(model_runs, tmp_path):
    run, label = model_runs.runs[0], model_runs.labels[0]
    older = json.loads(json.dumps(run.results))
    older["date"] -= 3600
    older["results"]["stereoset_multi_en"]["lms,none"] = 12.5
    folder = tmp_path / "older"
    folder.mkdir()
    (folder / "results_2020-01-01T00-00-00.json").write_text(json.dumps(older))
    newest = parse_tables(render_markdown(build_report([model_runs.root, folder]), details=True))["stereoset_multi_en"]
    assert newest[label]["lms ↑"] == expected_cell(run.results, "stereoset_multi_en", "lms")
    assert len(newest) == 3
    every = parse_tables(render_markdown(build_report([model_runs.root, folder], all_runs=True), details=True))[
        "stereoset_multi_en"
    ]
    assert len(every) == 4
    mine = {row_label: row for row_label, row in every.items() if row_label.startswith(f"{label} @ ")}
    assert sorted(row["lms ↑"].split(" ")[0] for row in mine.values()) == sorted(
        [expected_cell(results, "stereoset_multi_en", "lms").split(" ")[0] for results in (older, run.results)]
    )


# --- synthetic results: S_JSD, leakage, warnings, broken files ---------------------------------------------------------


def write_results(
    directory: Path,
    pretrained: str,
    tasks: dict[str, dict],
    *,
    limit: float | None = None,
    items: dict[str, tuple[int, int]] | None = None,
    date: float = 1.7e9,
    backend: str = "hf",
    configs: dict[str, dict] | None = None,
) -> Path:
    """A results file laid out as lm_eval writes one (``<dir>/<model>/results_<time>.json``, ``"N/A"`` stderrs);
    ``configs`` adds to a task's config (e.g. its ``dataset_kwargs``)."""
    results = {}
    for task, metrics in tasks.items():
        results[task] = {"alias": task, "name": task}
        for name, value in metrics.items():
            results[task][f"{name},none"] = value
            results[task].setdefault(f"{name}_stderr,none", "N/A")
    n_samples = {task: {"original": 100, "effective": 100} for task in tasks}
    for task, (effective, original) in (items or {}).items():
        n_samples[task] = {"original": original, "effective": effective}
    data = {
        "results": results,
        "group_subtasks": {},
        "configs": {
            task: {"task": task, "metadata": {"version": 2.0}} | (configs or {}).get(task, {}) for task in tasks
        },
        "versions": {task: 2.0 for task in tasks},
        "n-shot": dict.fromkeys(tasks, 0),
        "n-samples": n_samples,
        "config": {"model": backend, "model_args": f"pretrained={pretrained}", "limit": limit},
        "lm_eval_version": "0.4.13",
        "date": date,
    }
    folder = directory / pretrained.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"results_{date}.json"
    path.write_text(json.dumps(data))
    return path


def with_ci(value: float, half_width: float = 0.05, name: str = "") -> dict[str, float]:
    return {name: value, f"{name}_ci_low": value - half_width, f"{name}_ci_high": value + half_width}


def s_jsd_tasks(shift: float) -> dict[str, dict]:
    tasks = {}
    for lang in ("de", "fr"):
        tasks[f"s_jsd_{lang}"] = {
            **with_ci(0.1 + shift, 0.02, "s_jsd"),
            **with_ci(55 + shift, 3, "b_s_jsd"),
            **with_ci(48 - shift, 3, "cps"),
        }
    tasks["stereotype_leakage_de"] = {"leak_coef_en": 0.3 + shift, "leak_coef_fr": -0.1, "count": 50, "n_leaks": 1}
    tasks["stereotype_leakage_fr"] = {"leak_coef_en": 0.2, "leak_coef_de": shift, "count": 50}
    return tasks


def test_s_jsd_and_leakage_figures_when_their_metrics_are_present(tmp_path):
    for index, shift in enumerate((0.0, 0.1, 0.2)):
        write_results(tmp_path / "runs", f"org/model-{index}", s_jsd_tasks(shift))
    report = build_report([tmp_path / "runs"])
    write_html(report, tmp_path / "html")
    tables = parse_tables(render_markdown(report, details=True))
    row = tables["s_jsd_de"]["org/model-1"]
    assert row["s_jsd (ideal 0)"] == "0.200 [0.180, 0.220] Δ+0.200", "S_JSD is signed: either side is a bias"
    assert row["b_s_jsd (ideal 50)"] == "55.1 [52.1, 58.1] Δ+5.1"
    assert row["cps (ideal 50)"] == "47.9 [44.9, 50.9] Δ-2.1"
    assert tables["stereotype_leakage_de"]["org/model-2"]["count"] == "50"
    assert tables["stereotype_leakage_de"]["org/model-2"]["n_leaks (ideal 0)"] == "1 Δ+1.00", "no CI: declared"
    assert "leak_coef_en" not in tables["stereotype_leakage_de"]["org/model-2"], "undirected in the declaration"
    page = PageParser.parse((tmp_path / "html" / "index.html").read_text())
    sizes = {src: (width, height) for src, width, height in page.images}
    assert sizes == {"s_jsd.png": (WIDTH_PX, dot_plot_height(3)), "leakage.png": (WIDTH_PX, dot_plot_height(3))}
    for src, size in sizes.items():
        assert png_size(tmp_path / "html" / src) == size
    assert any("leak_coef_<source>" in caption for caption in page.captions)


def test_stderr_is_shown_when_the_results_have_a_number(tmp_path):
    tasks = {"stereoset_multi_en": {**with_ci(60.0, 5, "lms"), "lms_stderr": 2.5, **with_ci(52.0, 5, "ss")}}
    write_results(tmp_path, "m", tasks)
    row = parse_tables(render_markdown(build_report([tmp_path]), details=True))["stereoset_multi_en"]["m"]
    assert row["lms ↑"] == "60.0 ± 2.5 [55.0, 65.0]"
    assert row["ss (ideal 50)"] == "52.0 [47.0, 57.0] Δ+2.0", "N/A stderr is left out"


#: warning kind -> (task, metrics that trigger it, metrics that do not, phrase of the message)
WARNING_CASES = {
    "gerbbq undetermined": (
        "gerbbq_amb",
        {**with_ci(0.5, name="accuracy"), "undetermined": 0.25, "empty": 0.0},
        {**with_ci(0.5, name="accuracy"), "undetermined": 0.05, "empty": 0.0},
        "unparseable: undetermined 25.0% > 10%",
    ),
    "persona unclassified": (
        "stereo_persona_de",
        {**with_ci(0.6, name="stereo_accuracy"), "unclassified_share": 0.4, "n_generations": 20},
        {**with_ci(0.6, name="stereo_accuracy"), "unclassified_share": 0.02, "n_generations": 20},
        "unparseable: unclassified_share 40.0% > 10%",
    ),
    "gest mt detection yield": (
        "gest_mt_ru",
        {**with_ci(0.2, name="f_s"), **with_ci(0.6, name="f_m"), "detection_yield": 0.5, "count": 40},
        {**with_ci(0.2, name="f_s"), **with_ci(0.6, name="f_m"), "detection_yield": 0.95, "count": 40},
        "low detection yield: detection_yield 50.0% < 80%",
    ),
    "ties": (
        "stereoset_multi_en",
        {**with_ci(90.0, name="lms"), **with_ci(45.0, name="ss"), "count": 100, "ties": 7},
        {**with_ci(90.0, name="lms"), **with_ci(45.0, name="ss"), "count": 100, "ties": 1},
        "ties: 7 of 100 items tied (7.0% > 1%)",
    ),
    "unscored": (
        "gest_en",
        {**with_ci(1.2, name="gs"), "count": 97, "unscored": 3},
        {**with_ci(1.2, name="gs"), "count": 100, "unscored": 0},
        "unscored: unscored = 3",
    ),
    "leakage unmatched": (
        "stereotype_leakage_gen_en",
        {"n_leaks": 0, "fit_converged": 1, "generations": 50, "unmatched": 40, "neither": 0},
        {"n_leaks": 0, "fit_converged": 1, "generations": 50, "unmatched": 5, "neither": 0},
        "unparseable: unmatched 40 of 50 generations (80.0% > 10%)",
    ),
    "leakage fit": (
        "stereotype_leakage_zh",
        {"n_leaks": 0, "fit_converged": 0, "nan_scores": 0},
        {"n_leaks": 0, "fit_converged": 1, "nan_scores": 0},
        "no fit: fit_converged = 0",
    ),
    "NaN": (
        "gest_en",
        {**with_ci(1.2, name="gs"), **with_ci(float("nan"), name="q_01_emotional"), "count": 100},
        {**with_ci(1.2, name="gs"), **with_ci(-0.3, name="q_01_emotional"), "count": 100},
        "NaN: NaN in q_01_emotional",
    ),
}


@pytest.mark.parametrize("case", sorted(WARNING_CASES))
def test_each_warning_fires_when_it_should_and_only_then(tmp_path, case):
    task, bad, good, phrase = WARNING_CASES[case]
    write_results(tmp_path / "bad", "bad-model", {task: bad})
    write_results(tmp_path / "good", "good-model", {task: good})
    report = build_report([tmp_path / "bad", tmp_path / "good"])
    markdown, page = render_markdown(report, details=True), render_html(report, [])
    kind = phrase.split(":")[0]
    assert [(f.model, f.task, f.kind) for f in report.warnings] == [("bad-model", task, kind)]
    assert f"- ⚠ bad-model: {phrase}" in markdown
    assert "- ⚠ good-model" not in markdown and "good-model · " not in page
    assert f"bad-model · {task} · {phrase}" in PageParser.parse(page).warnings[0]


def test_hf_prefix_scoring_and_hf_generation_of_one_model_are_one_row(tmp_path):
    """``hf-prefix`` computes ``hf``'s numbers: a model's scoring run with it and its generative run with ``hf``
    (``make demo``) are one model of the report, another model stays another row."""
    metrics = {**with_ci(60.0, 5, "lms"), **with_ci(52.0, 5, "ss"), "count": 100, "ties": 0}
    write_results(tmp_path / "a", "org/model", {"stereoset_multi_en": metrics}, backend="hf-prefix")
    write_results(tmp_path / "b", "org/model", {"gerbbq_amb": {**with_ci(0.5, 0.1, "accuracy")}}, date=1.8e9)
    write_results(tmp_path / "c", "org/other", {"stereoset_multi_en": metrics}, backend="hf-prefix")
    report = build_report([tmp_path])
    assert [row.label for row in report.rows] == ["org/model", "org/other"]
    assert {task for task, key in report.cells if key == "hf pretrained=org/model"} == {
        "stereoset_multi_en",
        "gerbbq_amb",
    }


def test_limit_warning_from_the_option_or_from_fewer_items(tmp_path):
    metrics = {**with_ci(60.0, 5, "lms"), **with_ci(52.0, 5, "ss"), "count": 100, "ties": 0}
    task = "stereoset_multi_en"
    write_results(tmp_path, "limited", {task: {**metrics, "count": 5}}, limit=5, items={task: (5, 4229)})
    write_results(tmp_path, "subset", {task: metrics}, items={task: (100, 4229)})
    write_results(tmp_path, "full", {task: metrics}, limit=None, items={task: (4229, 4229)})
    write_results(tmp_path, "limit-above-size", {task: metrics}, limit=5000.0, items={task: (4229, 4229)})
    report = build_report([tmp_path])
    found = {f.model: f.message for f in report.warnings if f.kind == "limit"}
    assert found == {
        "limited": "scored on 5 of 4229 items (--limit 5): not the benchmark's full figure",
        "subset": "scored on 100 of 4229 items: not the benchmark's full figure",
    }
    assert "full" not in found and "limit-above-size" not in found  # a limit above the size scored every item
    assert "- ⚠ limited: limit: scored on 5 of 4229 items (--limit 5)" in render_markdown(report, details=True)


def test_truncated_results_file_is_an_error_naming_it(model_runs, tmp_path):
    source = next(model_runs.runs[0].output_dir.rglob("results_*.json"))
    broken = tmp_path / "only" / "results_broken.json"
    broken.parent.mkdir()
    broken.write_text(source.read_text()[: len(source.read_text()) // 2])
    proc = report_cli(broken.parent, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"error: {broken}: not a readable lm_eval results file (corrupt or truncated?)" in proc.stderr
    not_results = tmp_path / "list" / "results_list.json"
    not_results.parent.mkdir()
    not_results.write_text("[1, 2]")
    with pytest.raises(ReportError, match=f"{not_results}: not an lm_eval results file"):
        build_report([not_results.parent])
    not_results.write_text('{"results": {"gest_en": 1.5}}')
    with pytest.raises(ReportError, match=f"{not_results}: not an lm_eval results file \\(malformed gest_en\\)"):
        build_report([not_results.parent])


def test_corrupt_file_next_to_good_ones_is_skipped_with_a_warning(model_runs, tmp_path):
    shutil.copytree(model_runs.runs[1].output_dir, tmp_path / "runs")
    broken = tmp_path / "runs" / "results_corrupt.json"
    broken.write_bytes(b"\x00\xff{")
    proc = report_cli(tmp_path / "runs", "--details")
    assert f"warning: {broken}: not a readable lm_eval results file" in proc.stderr
    first_screen = proc.stdout.split("\n## ")[1]
    assert first_screen.startswith("Results"), "said on the first screen"
    assert (
        f"- ⚠ skipped file: 1 results file could not be read: {broken}: not a readable lm_eval results" in first_screen
    )
    assert "(skipped)" in proc.stdout
    assert list(parse_tables(proc.stdout)["stereoset_multi_en"]) == [model_runs.labels[1]]


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ReportError, match=r"pip install 'lm-eval-stereo\[report\]'"):
        require_matplotlib()


def results_of(task: str, names: list[str], metric_set: str | None = None) -> Run:
    """A results file holding ``task`` with metrics ``names``, its config naming ``metric_set`` (None: a file written
    before tasks recorded their declaration)."""
    metadata = {"version": 1.0} | ({"metric_set": metric_set} if metric_set else {})
    data = {"results": {task: {f"{name},none": 0.0 for name in names}}, "configs": {task: {"metadata": metadata}}}
    return Run(Path("results_2026-01-01T00-00-00.json"), data)


def declared_ideal(task: str, metric_set: str, name: str):
    declaration = declaration_of(results_of(task, [name], metric_set), task)
    assert isinstance(declaration, Declaration), (task, metric_set)
    return declaration.ideal(name)


def test_ideals_come_from_the_metric_declarations():
    from lm_eval_stereo.tasks.german_gender_bias.gerbbq.metrics import METRICS as GERBBQ
    from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET

    for metric_set, name in ((STEREOSET, "ss"), (STEREOSET, "intra_ss"), (GERBBQ, "bias"), (GERBBQ, "accuracy")):
        declared = metric_set.metric(name)
        ideal = declared_ideal("my_task", metric_set.id, name)
        assert (ideal.direction, ideal.value) == (
            ("target", declared.ideal) if declared.direction == "ideal" else (declared.direction, None)
        )
    stereoset, gerbbq = "stereoset_multi.scores", "german_gender_bias.gerbbq"
    assert declared_ideal("x", stereoset, "ss").value == 50 and declared_ideal("x", gerbbq, "bias").value == 0
    assert declared_ideal("x", gerbbq, "accuracy").direction == "higher"
    assert declared_ideal("x", "gest.translation", "f_m").value == 0.5
    assert declared_ideal("x", "gest.scores", "q_05_social").value == 0
    assert declared_ideal("x", stereoset, "ties") is None, "counts have no direction"
    assert declared_ideal("x", stereoset, "normalization") is None, "text has no direction"
    assert (declared_ideal("x", "s_jsd.causal", "cps").value, declared_ideal("x", "s_jsd.causal", "s_jsd").value) == (
        50,
        0,
    )
    leakage = "stereotype_leakage.regression"
    assert declared_ideal("x", leakage, "n_leaks").value == 0
    assert declared_ideal("x", leakage, "leak_coef_en").direction == "target", "the benchmark's report_ideals"
    assert declared_ideal("x", leakage, "corr_human_en") is None
    assert declared_ideal("x", "s_jsd.causal", "token_acc_more").direction == "higher"
    assert declared_ideal("x", stereoset, "gs") is None, "another benchmark's metric is not this task's"


# --- paired comparisons from the real --log_samples runs --------------------------------------------------------------


def sample_items(run: LmEvalRun, task: str) -> dict[str, dict]:
    """The plugin items of a run's samples by key (the item is logged under the task's first metric)."""
    return {str(s[s["metrics"][0]]["key"]): s[s["metrics"][0]] for s in run.samples[task]}


def pro(item: dict) -> int:
    """StereoSet's judgement of an item, written out: the stereotype scores above the anti-stereotype."""
    return int(item["stereotype"] > item["anti-stereotype"])


@pytest.fixture(scope="session")
def report_data(report_outputs: ReportOutputs) -> dict:
    """``lm-eval-stereo report --json`` of the three real runs."""
    return json.loads(report_outputs.json_file.read_text())


def test_models_are_compared_on_the_same_items(model_runs, report_data):
    paired = report_data["paired"]
    assert paired["without_samples"] == [] and paired["not_compared"] == []
    by_pair = {(r["task"], r["a"], r["b"]): r for r in paired["models"]}
    index = {label: i for i, label in enumerate(model_runs.labels)}
    labels = model_runs.labels
    pairs = [(index[r["a"]], index[r["b"]]) for r in paired["models"] if r["task"] == "stereoset_multi_en"]
    assert sorted(map(sorted, pairs)) == [[0, 1], [0, 2], [1, 2]], "every pair of models once, A - B in table order"
    for i, j in pairs:
        run_a, run_b = model_runs.runs[i], model_runs.runs[j]
        result = by_pair[("stereoset_multi_en", labels[i], labels[j])]
        found = {c["metric"]: c for c in result["comparisons"]}
        assert set(found) == {"lms", "ss", "icat"}
        for name in ("lms", "ss", "icat"):
            expected = run_a.metric("stereoset_multi_en", name) - run_b.metric("stereoset_multi_en", name)
            assert found[name]["difference"] == pytest.approx(expected, abs=1e-9), "same 3 items in both runs"
            assert found[name]["ci_low"] <= found[name]["difference"] + 1e-9 <= found[name]["ci_high"] + 2e-9
            assert 0 < found[name]["p"] <= 1 and found[name]["p"] <= found[name]["p_holm"] <= 1
        items_a, items_b = sample_items(run_a, "stereoset_multi_en"), sample_items(run_b, "stereoset_multi_en")
        assert set(items_a) == set(items_b) and len(items_a) == LIMIT
        high_a = sum(pro(items_a[k]) > pro(items_b[k]) for k in items_a)
        high_b = sum(pro(items_a[k]) < pro(items_b[k]) for k in items_a)
        ss = found["ss"]
        assert (ss["test"], ss["discordant"], ss["items"]) == ("exact McNemar", [high_a, high_b], LIMIT)
        expected_p = stats.binomtest(high_a, high_a + high_b, 0.5).pvalue if high_a + high_b else 1.0
        assert ss["p"] == pytest.approx(expected_p, rel=1e-12)
        assert found["icat"]["test"] == "sign-flip permutation" and found["icat"]["permutations"] >= 20
        gs = next(c for c in by_pair[("gest_en", labels[i], labels[j])]["comparisons"] if c["metric"] == "gs")
        assert gs["difference"] == pytest.approx(run_a.metric("gest_en", "gs") - run_b.metric("gest_en", "gs"))
    (gerbbq,) = [r for r in paired["models"] if r["task"] == "gerbbq_mc_amb"]
    assert {gerbbq["a"], gerbbq["b"]} == set(labels[:2])
    assert {c["metric"] for c in gerbbq["comparisons"]} == {"accuracy", "bias"}
    assert not any(r["task"] == "gerbbq_mc_amb" and labels[2] in (r["a"], r["b"]) for r in paired["models"])
    holm = sorted(c["p_holm"] for r in paired["models"] for c in r["comparisons"])
    assert holm == sorted(holm) and all(0 < p <= 1 for p in holm)


def test_languages_are_compared_on_parallel_items_with_their_flips(model_runs, report_data):
    run, label = model_runs.runs[0], model_runs.labels[0]
    mine = [r for r in report_data["paired"]["languages"] if r["model"] == label]
    languages = ("de", "en", "es", "fr", "tr")
    assert {(r["a"], r["b"]) for r in mine} == {
        (f"stereoset_multi_{a}", f"stereoset_multi_{b}") for i, a in enumerate(languages) for b in languages[i + 1 :]
    }
    assert not any(r["model"] != label for r in report_data["paired"]["languages"]), "others ran one language"
    result = next(r for r in mine if (r["a"], r["b"]) == ("stereoset_multi_de", "stereoset_multi_en"))
    ss = next(c for c in result["comparisons"] if c["metric"] == "ss")
    de = {key.removeprefix("de/"): item for key, item in sample_items(run, "stereoset_multi_de").items()}
    en = {key.removeprefix("en/"): item for key, item in sample_items(run, "stereoset_multi_en").items()}
    assert set(de) == set(en) and len(de) == LIMIT, "the first documents of each language are translations"
    flips = sorted((key, 100.0 * pro(de[key]), 100.0 * pro(en[key])) for key in de if pro(de[key]) != pro(en[key]))
    assert sorted((f["item"], f["a"], f["b"]) for f in ss["flips"]) == flips
    assert ss["difference"] == pytest.approx(
        run.metric("stereoset_multi_de", "ss") - run.metric("stereoset_multi_en", "ss")
    )


def test_report_leads_with_the_results_then_the_reading_and_the_summary(model_runs, markdown):
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert headings[:5] == [
        "## Results",
        "## Reading",
        "## Summary",
        "## Model vs model (paired)",
        "## Language vs language (paired)",
    ]
    assert headings[5] == "## Details" and headings[-1] == "## Provenance"
    run, label = model_runs.runs[0], model_runs.labels[0]
    results = section_rows(markdown, "Results")
    shown = [(row["model"], row["task"]) for row in results]
    tasks = {task for task in run.results["results"] if task.startswith("stereoset_multi_") or task == "gest_en"}
    assert len(shown) == len(set(shown)) and {(label, task) for task in tasks} <= set(shown), "one row per task"
    de = next(row for row in results if (row["model"], row["task"]) == (label, "stereoset_multi_de"))
    assert (de["benchmark"], de["language"], de["headline"]) == ("StereoSet", "de", "SS (ideal 50)"), "its primary"
    value = expected_cell(run.results, "stereoset_multi_de", "ss").split(" ")[0]
    assert de["value [95% CI]"].startswith(value + " [") and de["verdict"], "value, CI and verdict"
    summary = parse_tables(markdown)["Summary"]
    ss = summary["StereoSet de · SS (stereoset_multi_de)"]
    assert set(ss) == {"headline (task)", "ideal", *model_runs.labels}, "three models: one column each"
    assert ss["ideal"] == "50" and summary["StereoSet en · LMS (stereoset_multi_en)"]["ideal"] == "↑"
    value = expected_cell(run.results, "stereoset_multi_de", "ss").split(" ")[0]
    assert ss[label].startswith(value + " ["), "the value and its CI, three significant digits"
    gs_undefined = run.results["results"]["gest_en"]["gs_ci_undefined,none"]
    gs_words = ("no verdict: its 95% CI rests on",) if gs_undefined > 50 else ("no detectable bias", "stereotyped")
    assert any(words in summary["GEST en · g_s (gest_en)"][label] for words in gs_words), "a verdict, or why none"
    assert not any(" q_" in row or "g_s t" in row for row in summary), "views stay in the details"
    assert not any("(stereoset_multi)" in row for row in summary), "groups (no CI) stay in the details"
    reading = markdown.split("## Reading")[1].split("\n## ")[0]
    assert f"- {label}: " in reading and "StereoSet: " in reading
    warnings = section_lines(markdown, "Results")
    limit_lines = [line for line in warnings if line.startswith("- ⚠ †") and " limit: " in line]
    assert len(limit_lines) == 1 and "stereoset_multi_en" in limit_lines[0] and "gest_en" in limit_lines[0]
    mark = limit_lines[0].split(" ")[2]
    assert all(mark in row["verdict"].split(" ") for row in results), "every value scored on part of its data"
    for line in markdown.splitlines():
        if line.startswith("|---"):
            assert line.count("|") - 1 <= MAX_COLUMNS


def results_and_samples(
    directory: Path, pretrained: str, pro_flags: list[int], ids: dict[str, int] | None = None
) -> None:
    """StereoSet results with their samples files as lm_eval --log_samples writes them (items under ``lms``): per
    language of ``ids`` (default English) one task whose item ids start at the given number."""
    from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS

    tasks, samples = {}, {}
    for lang, first in (ids or {"en": 0}).items():
        items = []
        for i, flag in enumerate(pro_flags):
            stereo, anti = (2.0, 1.0) if flag else (1.0, 2.0)
            items.append(
                {"key": f"{lang}/intrasentence/{first + i:04d}", "test": "intrasentence", "target": f"t{i % 4}"}
                | {"bias_type": "race", "stereotype": stereo, "anti-stereotype": anti, "unrelated": 0.0}
            )
        tasks[f"stereoset_multi_{lang}"] = METRICS.compute(items)
        samples[f"stereoset_multi_{lang}"] = items
    path = write_results(directory, pretrained, tasks, items={task: (60, 60) for task in tasks})
    stamp = path.stem.removeprefix("results_")
    for task, items in samples.items():
        lines = [json.dumps({"doc_id": i, "metrics": list(METRICS.names), "lms": item}) for i, item in enumerate(items)]
        (path.parent / f"samples_{task}_{stamp}.jsonl").write_text("\n".join(lines) + "\n")


def test_language_tasks_without_shared_ids_are_named_not_compared(tmp_path):
    results_and_samples(tmp_path, "parallel", [1] * 40 + [0] * 20, {"de": 0, "en": 0})
    results_and_samples(tmp_path, "disjoint", [1] * 40 + [0] * 20, {"de": 0, "en": 1000})
    report = build_report([tmp_path])
    assert [(r.model, r.a, r.b) for r in report.paired.languages] == [
        ("parallel", "stereoset_multi_de", "stereoset_multi_en")
    ]
    assert all(c.difference == 0 and c.p == 1 for c in report.paired.languages[0].comparisons), "same judgements"
    assert report.paired.notes == [
        "stereoset_multi_en: disjoint vs parallel: no items in common",
        "disjoint: stereoset_multi_<lang> tasks share no item ids (de-en): not translations of the same items, "
        "no language comparison",
    ]


def test_summary_marks_significant_paired_differences(tmp_path):
    results_and_samples(tmp_path, "biased", [1] * 54 + [0] * 6)
    results_and_samples(tmp_path, "fair", [1] * 30 + [0] * 30)
    results_and_samples(tmp_path, "fair-too", [0] * 30 + [1] * 30)
    report = build_report([tmp_path])
    summary = parse_tables(render_markdown(report, details=True))["Summary"]
    ss, lms = summary["StereoSet en · SS (stereoset_multi_en)"], summary["StereoSet en · LMS (stereoset_multi_en)"]
    assert ss["biased"].startswith("90.0 [") and ss["biased"].endswith(": prefers stereotypes, +40.0 from 50 >B >C")
    assert ss["fair"].endswith(" <A") and "no detectable bias with n = 60 (±" in ss["fair"]
    assert lms["fair"] == "100 [100, 100]", "equal LMS: no marker, no verdict for a directed metric"
    (fair_pair,) = [r for r in report.paired.models if (r.a, r.b) == ("fair", "fair-too")]
    ss = next(c for c in fair_pair.comparisons if c.metric == "ss")
    assert (ss.difference, ss.discordant, ss.p) == (0.0, (30, 30), 1.0), "same SS, every item flipped"


def test_a_corrupt_samples_line_is_named_and_the_rest_compared(tmp_path):
    results_and_samples(tmp_path, "good", [1] * 10 + [0] * 10)
    results_and_samples(tmp_path, "broken", [1] * 20)
    samples = next((tmp_path / "broken").glob("samples_*.jsonl"))
    samples.write_text(samples.read_text().replace('"doc_id": 3,', '"doc_id": 3'))
    report = build_report([tmp_path])
    (pair,) = report.paired.models
    assert {c.n for c in pair.comparisons} == {19}, "the 19 readable items of the broken file"
    assert report.paired.notes == [
        f"1 malformed line(s) of {samples} skipped ({samples}:4: not a JSON line (Expecting ',' delimiter: line 1 "
        "column 14 (char 13))): broken on stereoset_multi_en compared on its other 19 items"
    ]
    assert f"- Not compared: 1 malformed line(s) of {samples} skipped" in render_markdown(report, details=True)


def test_paired_options_of_the_command(tmp_path):
    results_and_samples(tmp_path, "biased", [1] * 54 + [0] * 6)
    results_and_samples(tmp_path, "fair", [1] * 30 + [0] * 30)
    bad = report_cli(tmp_path, "--permutations", "0", check=False)
    assert bad.returncode == 2 and "--permutations must be at least 1, got 0" in bad.stderr
    few = tmp_path / "few.json"
    report_cli(tmp_path, "--permutations", "5", "--seed", "3", "--json", few)
    (result,) = json.loads(few.read_text())["paired"]["models"]
    icat = next(c for c in result["comparisons"] if c["metric"] == "icat")
    assert icat["permutations"] == 5 and icat["p"] == pytest.approx(1 / 6), "every permutation below |d|: 1/(P+1)"
    none = tmp_path / "none.json"
    proc = report_cli(tmp_path, "--no-paired", "--json", none)
    assert json.loads(none.read_text())["paired"] is None and "Paired comparisons were not computed." in proc.stdout


def test_runs_without_samples_are_named_once_and_not_compared(tmp_path):
    tasks = {"stereoset_multi_en": {**with_ci(60.0, 5, "lms"), **with_ci(52.0, 5, "ss"), "count": 100}}
    first = write_results(tmp_path, "model-a", tasks)
    second = write_results(tmp_path, "model-b", tasks)
    markdown = render_markdown(build_report([tmp_path]), details=True)
    lines = [line for line in markdown.splitlines() if "--log_samples" in line]
    assert lines == [
        "- No paired statistics for runs without per-item samples (rerun lm_eval with --log_samples): "
        f"model-a ({first}); model-b ({second})"
    ]
    assert "## Model vs model (paired)" not in markdown and "## Summary" in markdown
    assert "Paired comparisons were not computed." in render_markdown(
        build_report([tmp_path], paired=False), details=True
    )


def test_many_runs_without_samples_are_counted_per_model(tmp_path):
    """Above four results files the line counts them per model (the whole list is in --json)."""
    langs = ("en", "de", "fr")
    for i, lang in enumerate(langs):
        tasks = {f"stereoset_multi_{lang}": {**with_ci(60.0, 5, "lms"), **with_ci(52.0, 5, "ss"), "count": 100}}
        for model in ("model-a", "model-b"):
            write_results(tmp_path, model, tasks, date=1.7e9 + i)
    report = build_report([tmp_path])
    lines = [line for line in render_markdown(report, details=True).splitlines() if "--log_samples" in line]
    assert lines == [
        "- No paired statistics for 6 results files without per-item samples (rerun lm_eval with --log_samples; "
        "--json lists them): model-a: 3; model-b: 3"
    ]
    assert len(report.paired.without_samples) == 6


def test_wide_tables_split_keeping_groups_together():
    groups = [g for g, n in (("a", 3), ("b", 3), ("c", 2), ("d", 9), ("e", 1)) for _ in range(n)]
    table = Table("x", ["model", *(f"{g}{i}" for i, g in enumerate(groups))], [["row", *map(str, range(18))]])
    parts = split(table, groups=groups)
    assert [len(part.headers) for part in parts] == [7, 8, 6]
    assert [h for part in parts for h in part.headers[1:]] == table.headers[1:], "every column once, in order"
    assert all(part.headers[0] == "model" and part.rows[0][0] == "row" for part in parts)
    assert [h[0] for h in parts[0].headers[1:]] == ["a"] * 3 + ["b"] * 3, "c does not fit beside a and b: next table"
    plain = split(Table("p", [str(i) for i in range(17)], [list(map(str, range(17)))]), keep=2)
    assert [part.headers[:2] for part in plain] == [["0", "1"]] * 3 and sum(len(p.headers) - 2 for p in plain) == 15


# --- page layout -----------------------------------------------------------------------------------------------------


class LayoutParser(HTMLParser):
    """Columns per table, the order of the h2 headings and whether each warning item sits in a <details>."""

    def __init__(self) -> None:
        super().__init__()
        self.columns: list[int] = []
        self.headings: list[str] = []
        self.warning_items_outside_details = 0
        self.warning_items = 0
        self._open: list[str] = []
        self._h2: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.columns.append(0)
        elif tag == "th" and "tbody" not in self._open:
            self.columns[-1] += 1
        elif tag == "li" and "ul" in self._open:
            self.warning_items += 1
            self.warning_items_outside_details += "details" not in self._open
        elif tag == "h2":
            self._h2 = []
        if tag not in ("img", "meta", "br"):
            self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._h2 is not None:
            self.headings.append("".join(self._h2))
            self._h2 = None
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag)]

    def handle_data(self, data: str) -> None:
        if self._h2 is not None:
            self._h2.append(data)


@pytest.fixture(scope="session")
def report_page(report_outputs: ReportOutputs) -> Path:
    """``lm-eval-stereo report --html`` of the three real runs."""
    return report_outputs.html_dir / "index.html"


def test_page_layout_summary_first_narrow_tables_collapsed_warnings(report_page):
    layout = LayoutParser()
    layout.feed(report_page.read_text())
    assert layout.headings[:2] == ["Results", "Every headline"]
    assert layout.headings.index("Details") > layout.headings.index("Figures") > layout.headings.index("Every headline")
    assert layout.columns and max(layout.columns) <= MAX_COLUMNS
    assert layout.warning_items > 0 and layout.warning_items_outside_details == 0


#: the laptop screen the page must fit, in CSS pixels
SCREEN_WIDTH = 1366


def test_page_fits_a_laptop_screen_in_headless_chromium(report_page, tmp_path):
    """The page's width with every collapsed block opened, in a 1366-pixel-wide headless chromium window."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip(skip_reason("chromium"))
    probe = tmp_path / "probe.html"
    script = (
        "<script>document.querySelectorAll('details').forEach(d => { d.open = true; });"
        "document.title = 'scrollWidth=' + document.documentElement.scrollWidth;</script>"
    )
    probe.write_text(report_page.read_text().replace("</body>", f"{script}</body>"))
    for figure in report_page.parent.glob("*.png"):
        shutil.copy(figure, tmp_path / figure.name)
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={SCREEN_WIDTH},768",
        "--dump-dom",
        probe.as_uri(),
    ]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
    width = int(dom.split("<title>scrollWidth=")[1].split("<")[0])
    assert 0 < width <= SCREEN_WIDTH


def test_results_without_a_declaration_are_read_through_the_one_fallback():
    """Results written before tasks recorded their benchmark and metric set: the benchmark whose task patterns match
    the name, and its metric set whose metrics fit the results."""
    from lm_eval_stereo.tasks.german_gender_bias.gerbbq.metrics import METRICS as GERBBQ
    from lm_eval_stereo.tasks.gest.metrics import MT_METRICS, PAIRS_METRICS, score_metric_set
    from lm_eval_stereo.tasks.s_jsd.metrics import metric_set as s_jsd_set
    from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET
    from lm_eval_stereo.tasks.stereotype_leakage.metrics import LEAKAGE_METRICS

    gest = score_metric_set("gest_en", ["t0", "t1", "t2"])
    cases = [
        ("stereoset_multi_de", STEREOSET),
        ("gest_mt_ru", MT_METRICS),
        ("gerbbq_mc_amb", GERBBQ),
        ("gest_en", gest),
        ("gest_pairs_cs", PAIRS_METRICS),
        ("s_jsd_de", s_jsd_set("s_jsd_de", causal=True)),
        ("s_jsd_mlm_de", s_jsd_set("s_jsd_mlm_de")),
    ]
    for task, expected in cases:
        found = declaration_of(results_of(task, [*expected.names]), task)
        assert found is not None and found.metric_set.names == expected.names, task
        assert found.metric_set.id == expected.id, task
    leakage_names = [m.name for m in LEAKAGE_METRICS if m.numeric]
    leakage = declaration_of(results_of("stereotype_leakage_en", leakage_names), "stereotype_leakage_en")
    assert leakage.metric_set.id == "stereotype_leakage.regression"
    assert declaration_of(results_of("hellaswag", ["acc", "acc_norm"]), "hellaswag") is None, "lm_eval's own task"
    assert declaration_of(results_of("my_stereoset", [*STEREOSET.names]), "my_stereoset") is None, "unknown name"
    gest_found = declaration_of(results_of("gest_en", [*gest.names]), "gest_en")
    assert [gest_found.is_detail(n) for n in ("q_01_emotional", "gs_t2", "gs", "count")] == [True, True, False, False]
    mt_found = declaration_of(results_of("gest_mt_ru", [*MT_METRICS.names]), "gest_mt_ru")
    assert [mt_found.is_detail(n) for n in ("p_16_strong", "f_s")] == [True, False]


def test_a_recorded_declaration_wins_over_the_name():
    """A task recorded as StereoSet is StereoSet whatever it is called, and a recorded id no benchmark declares is no
    plugin task."""
    from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET

    found = declaration_of(results_of("gest_en", [*STEREOSET.names], STEREOSET.id), "gest_en")
    assert found.benchmark.name == "stereoset_multi" and found.metric_set.id == STEREOSET.id
    assert declaration_of(results_of("gest_en", ["gs"], "nobody.nothing"), "gest_en") is None


# --- reading the HTML page and PNG headers ---------------------------------------------------------------------------


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR", path
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


class PageParser(HTMLParser):
    """Images, figure captions, warning items and tables (with the heading before each) of the report page."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[tuple[str, int, int]] = []
        self.captions: list[str] = []
        self.warnings: list[str] = []
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._text: list[str] | None = None
        self._heading = ""

    @classmethod
    def parse(cls, page: str) -> PageParser:
        parser = cls()
        parser.feed(page)
        parser.close()
        return parser

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self.images.append((values["src"], int(values["width"]), int(values["height"])))
        elif tag == "table":
            self.tables.append((self._heading, []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        if tag in ("figcaption", "li", "td", "th", "h2", "h3"):
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        text = "".join(self._text or [])
        if tag == "figcaption":
            self.captions.append(text)
        elif tag == "li":
            self.warnings.append(text)
        elif tag in ("td", "th"):
            self.tables[-1][1][-1].append(text)
        elif tag in ("h2", "h3"):
            self._heading = text
        if tag in ("figcaption", "li", "td", "th", "h2", "h3"):
            self._text = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)

    def tables_after(self, heading: str) -> list[list[list[str]]]:
        """The tables under ``heading`` (a wide table is split into several)."""
        return [rows for title, rows in self.tables if title == heading]

    def row(self, heading: str, first: list[str]) -> dict[str, str]:
        """``{header: cell}`` of the row starting with the cells ``first``, merged over the tables under
        ``heading``."""
        found: dict[str, str] = {}
        for rows in self.tables_after(heading):
            for row in rows[1:]:
                if row[: len(first)] == first:
                    found.update(zip(rows[0], row))
        return found

    def cell(self, heading: str, label: str, header: str) -> str:
        """The cell of column ``header`` in the row of ``label`` of the tables under ``heading``."""
        return self.row(heading, [label])[header]


def test_hf_and_hf_prefix_runs_of_one_task_are_kept_apart_named_by_the_backend(tmp_path):
    """``hf-prefix`` scores the reference's own tokens where ``hf`` flags a token boundary, so the two backends'
    numbers of one task can differ: runs of one model with each on the same task are two rows, named by the backend,
    and a warning names their files (the newer no longer replaces the older silently)."""
    metrics = {**with_ci(60.0, 5, "lms"), **with_ci(52.0, 5, "ss"), "count": 100, "ties": 0}
    write_results(tmp_path / "a", "org/model", {"stereoset_multi_en": metrics}, backend="hf-prefix")
    write_results(tmp_path / "b", "org/model", {"stereoset_multi_en": metrics}, date=1.8e9)
    report = build_report([tmp_path])
    assert [row.label for row in report.rows] == ["org/model [model=hf-prefix]", "org/model [model=hf]"]
    assert len(report.task_cells("stereoset_multi_en")) == 2
    (apart,) = [finding.message for finding in report.warnings if finding.kind == "runs kept apart"]
    assert apart.startswith("hf pretrained=org/model: runs kept apart, one row each, as they differ in what changes")
    markdown = render_markdown(report)
    assert f"- ⚠ {apart}" in markdown, "the warning, once, under the results"
    assert f"[model=hf-prefix]: {tmp_path / 'a'}" in apart and f"[model=hf]: {tmp_path / 'b'}" in apart
