"""``lm-eval-stereo report`` over real lm_eval runs of three tiny models, and over small synthetic results files.

The real runs (one session fixture, the three lm_eval processes run side by side) give the StereoSet, GEST and
GerBBQ+ tables and figures; synthetic files give the S_JSD and leakage figures (those tasks do not exist yet), each
warning with a fixture that triggers it and one that does not, and broken files.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval
from markdown_tables import parse_tables

from lm_eval_stereo.report import ReportError, build_report, render_markdown
from lm_eval_stereo.report.figures import (
    GEST_HEIGHT_PX,
    STEREOSET_HEIGHT_PX,
    WIDTH_PX,
    dot_plot_height,
    require_matplotlib,
)
from lm_eval_stereo.report.formatting import format_value
from lm_eval_stereo.report.html import render_html, write_html
from lm_eval_stereo.report.ideals import ideal_for

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
    from lm_eval_stereo.testing.tiny_models import build_causal_lm

    root = tmp_path_factory.mktemp("report_runs")
    models = [tiny_causal, *(build_causal_lm(tmp_path_factory.mktemp(f"model{seed}"), seed=seed) for seed in (1, 2))]

    def evaluate(index: int) -> LmEvalRun:
        args = ["--model", "hf", "--model_args", f"pretrained={models[index]},dtype=float32", "--device", "cpu"]
        args += ["--tasks", TASKS[index], "--limit", str(LIMIT), "--batch_size", "8"]
        return run_lm_eval(args, root / f"out{index}")

    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = list(pool.map(evaluate, range(3)))
    return ModelRuns(root, runs, [str(model) for model in models])


@pytest.fixture(scope="session")
def markdown(model_runs: ModelRuns) -> str:
    """``lm-eval-stereo report`` of the three real runs."""
    return report_cli(model_runs.root).stdout


def report_cli(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).parent / "lm-eval-stereo"), "report", *map(str, args)]
    proc = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ))
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def fmt(value, sign: str = "") -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return f"{value:{sign}.3g}" if 0 < abs(value) < 1e-3 else f"{value:{sign}.4f}"


def test_small_values_keep_three_significant_digits():
    assert [format_value(v) for v in (2.3149e-05, -0.0004, 0.0, 0.25)] == ["2.31e-05", "-0.0004", "0.0000", "0.2500"]
    assert format_value(-1.5e-06, "+") == "-1.5e-06" and format_value(0.5, "+") == "+0.5000"


def expected_cell(results: dict, task: str, name: str, ideal: float | None = None) -> str:
    """What the table must show for a metric of a results file: value, ± lm_eval's stderr where it is a number,
    [low, high] where the task has a CI, Δ to a middle ideal."""
    metrics = results["results"][task]
    value = metrics[f"{name},none"]
    text = fmt(value)
    if isinstance(stderr := metrics.get(f"{name}_stderr,none"), float):
        text += f" ± {fmt(stderr)}"
    if f"{name}_ci_low,none" in metrics:
        text += f" [{fmt(metrics[f'{name}_ci_low,none'])}, {fmt(metrics[f'{name}_ci_high,none'])}]"
    if ideal is not None and math.isfinite(value):
        text += f" Δ{fmt(value - ideal, '+')}"
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
                assert row["q_09_self_confident (ideal 0)"].startswith(fmt(run.metric(task, "q_09_self_confident")))
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
        name = header.split(" ")[0]
        ideal = ideal_for(name)
        if ideal is not None and ideal.direction == "target":
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


def test_html_page_and_figures(model_runs, tmp_path):
    html_dir, json_file = tmp_path / "html", tmp_path / "report.json"
    report_cli(model_runs.root, "--html", html_dir, "--json", json_file)
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
    provenance = page.table_after("Provenance")
    row = next(r for r in provenance if r[:2] == [label, "stereoset_multi_en"])
    assert row[2] == str(run.results["versions"]["stereoset_multi_en"])
    assert row[4] == run.metric("stereoset_multi_en", "normalization") and row[4].startswith("token (")
    assert row[5:9] == ["0", str(LIMIT), f"{LIMIT} of 4229", run.results["lm_eval_version"]]
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
    newest = parse_tables(render_markdown(build_report([model_runs.root, folder])))["stereoset_multi_en"]
    assert newest[label]["lms ↑"] == expected_cell(run.results, "stereoset_multi_en", "lms")
    assert len(newest) == 3
    every = parse_tables(render_markdown(build_report([model_runs.root, folder], all_runs=True)))["stereoset_multi_en"]
    assert len(every) == 4
    mine = {row_label: row for row_label, row in every.items() if row_label.startswith(f"{label} @ ")}
    assert sorted(row["lms ↑"].split(" ")[0] for row in mine.values()) == sorted(
        ["12.5000", fmt(run.metric("stereoset_multi_en", "lms"))]
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
) -> Path:
    """A results file laid out as lm_eval writes one (``<dir>/<model>/results_<time>.json``, ``"N/A"`` stderrs)."""
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
        "configs": {task: {"task": task, "metadata": {"version": 2.0}} for task in tasks},
        "versions": {task: 2.0 for task in tasks},
        "n-shot": dict.fromkeys(tasks, 0),
        "n-samples": n_samples,
        "config": {"model": "hf", "model_args": f"pretrained={pretrained}", "limit": limit},
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
    tables = parse_tables(render_markdown(report))
    row = tables["s_jsd_de"]["org/model-1"]
    assert row["s_jsd (ideal 0)"] == "0.2000 [0.1800, 0.2200] Δ+0.2000", "S_JSD is signed: either side is a bias"
    assert row["b_s_jsd (ideal 50)"] == "55.1000 [52.1000, 58.1000] Δ+5.1000"
    assert row["cps (ideal 50)"] == "47.9000 [44.9000, 50.9000] Δ-2.1000"
    assert tables["stereotype_leakage_de"]["org/model-2"]["count"] == "50"
    assert tables["stereotype_leakage_de"]["org/model-2"]["n_leaks (ideal 0)"] == "1 Δ+1.0000", "no CI: declared"
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
    row = parse_tables(render_markdown(build_report([tmp_path])))["stereoset_multi_en"]["m"]
    assert row["lms ↑"] == "60.0000 ± 2.5000 [55.0000, 65.0000]"
    assert row["ss (ideal 50)"] == "52.0000 [47.0000, 57.0000] Δ+2.0000", "N/A stderr is left out"


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
    markdown, page = render_markdown(report), render_html(report, [])
    kind = phrase.split(":")[0]
    assert [(f.model, f.task, f.kind) for f in report.warnings] == [("bad-model", task, kind)]
    assert f"- ⚠ bad-model: {phrase}" in markdown
    assert "good-model: " not in markdown
    assert f"bad-model · {task} · {phrase}" in PageParser.parse(page).warnings[0]


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
        "limit-above-size": "scored on 4229 of 4229 items (--limit 5000): not the benchmark's full figure",
    }
    assert "full" not in found
    assert "- ⚠ limited: limit: scored on 5 of 4229 items (--limit 5)" in render_markdown(report)


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
    proc = report_cli(tmp_path / "runs")
    assert f"warning: {broken}: not a readable lm_eval results file" in proc.stderr
    assert f"- ⚠ {broken}: not a readable lm_eval results file" in proc.stdout
    assert "(skipped)" in proc.stdout
    assert list(parse_tables(proc.stdout)["stereoset_multi_en"]) == [model_runs.labels[1]]


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ReportError, match=r"pip install 'lm-eval-stereo\[report\]'"):
        require_matplotlib()


def test_ideals_come_from_the_metric_declarations():
    from lm_eval_stereo.tasks.german_gender_bias.gerbbq_metrics import METRICS as GERBBQ
    from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET

    for metric_set, name in ((STEREOSET, "ss"), (STEREOSET, "intra_ss"), (GERBBQ, "bias"), (GERBBQ, "accuracy")):
        declared = metric_set.metric(name)
        ideal = ideal_for(name)
        assert (ideal.direction, ideal.value) == (
            ("target", declared.ideal) if declared.direction == "ideal" else (declared.direction, None)
        )
    assert (ideal_for("ss").value, ideal_for("bias").value, ideal_for("accuracy").direction) == (50, 0, "higher")
    assert (ideal_for("gs_t1").value, ideal_for("q_05_social").value, ideal_for("f_m").value) == (1, 0, 0.5)
    assert ideal_for("ties") is None and ideal_for("normalization") is None, "counts and text have no direction"
    assert (ideal_for("cps").value, ideal_for("s_jsd").value, ideal_for("n_leaks").value) == (50, 0, 0)
    assert ideal_for("leak_coef_en").direction == "target", "the report's reading of an undirected declaration"
    assert ideal_for("token_acc_more").direction == "higher" and ideal_for("corr_human_en") is None


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

    def table_after(self, heading: str) -> list[list[str]]:
        return next(rows for title, rows in self.tables if title == heading)

    def cell(self, heading: str, label: str, header: str) -> str:
        """The cell of column ``header`` in the row of ``label`` of the table under ``heading``."""
        rows = self.table_after(heading)
        return next(row for row in rows[1:] if row[0] == label)[rows[0].index(header)]
