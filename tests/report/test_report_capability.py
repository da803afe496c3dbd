"""``lm-eval-stereo report`` over lm_eval's own tasks run beside the bias benchmarks.

Real runs: two tiny models evaluated by the real ``lm_eval`` command on StereoSet, GEST and local multiple-choice
tasks written as a user's YAML (a group with a nested subgroup, as ``mmlu``, and a task with two metrics). Fixture
results files in lm_eval's format give ``hellaswag``, a nested ``mmlu`` group and ``wikitext`` (lower is better, no
stderr) next to StereoSet.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from lm_eval_runner import TESTS, LmEvalRun, run_lm_eval
from local_tasks import GENERIC_DOCS, write_group, write_mc_task
from markdown_tables import parse_tables
from test_report import PageParser, expected_cell, fmt, png_size, report_cli

from lm_eval_stereo.report import build_report, render_markdown, report_json
from lm_eval_stereo.report.capability import Z_95, capability_figures, panel_points
from lm_eval_stereo.report.figures import WIDTH_PX, dot_plot_height
from lm_eval_stereo.results.model_names import model_name
from lm_eval_stereo.results.run import load_run

LIMIT = 3
BIAS_TASKS = ("stereoset_multi_en", "gest_en")
#: local_suite = (local_sub = local_mc_a + local_mc_b) + local_mc_c, as mmlu = (mmlu_stem = ...) + ...
SUITE, SUB, LEAVES, SOLO = "local_suite", "local_sub", ("local_mc_a", "local_mc_b", "local_mc_c"), "local_mc_solo"
FIXTURES = TESTS / "fixtures" / "report_capability"


def write_local_tasks(folder: Path) -> Path:
    for index, leaf in enumerate(LEAVES):
        write_mc_task(folder, leaf, GENERIC_DOCS[index:] + GENERIC_DOCS[:index])
    write_group(folder, SUB, list(LEAVES[:2]))
    write_group(folder, SUITE, [SUB, LEAVES[2]])
    return write_mc_task(folder, SOLO, GENERIC_DOCS, metrics=("acc", "acc_norm"))


@pytest.fixture(scope="module")
def runs(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[LmEvalRun], list[str]]:
    """Two tiny causal LMs (seeds 0, 1) on the bias tasks and the local tasks, by the real lm_eval command."""
    from lm_eval_stereo.local_models.tiny import build_causal_lm

    include = write_local_tasks(tmp_path_factory.mktemp("local_tasks"))
    root = tmp_path_factory.mktemp("capability_runs")
    models = [tiny_causal, build_causal_lm(tmp_path_factory.mktemp("model1"), seed=1)]

    def evaluate(index: int) -> LmEvalRun:
        args = ["--model", "hf", "--model_args", f"pretrained={models[index]},dtype=float32", "--device", "cpu"]
        args += ["--tasks", ",".join([*BIAS_TASKS, SUITE, SOLO]), "--limit", str(LIMIT), "--batch_size", "8"]
        return run_lm_eval([*args, "--include_path", str(include)], root / f"out{index}")

    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(evaluate, range(2)))
    return root, done, [model_name(str(model)) for model in models]


def capability_cell(results: dict, task: str, name: str) -> str:
    """What the report must show for a metric of lm_eval's own task: value ± lm_eval's stderr where it is a number."""
    metrics = results["results"][task]
    stderr = metrics[f"{name}_stderr,none"]
    return fmt(metrics[f"{name},none"]) + (f" ± {fmt(stderr)}" if isinstance(stderr, float) else "")


def test_plugin_tasks_are_told_from_lm_evals_own(runs):
    """By what the results record (a plugin task's config names its metric set), not by name."""
    from lm_eval_stereo.results.lm_eval_tasks import is_undeclared_task

    root, done, _ = runs
    run = load_run(sorted(root.rglob("results_*.json"))[0])
    plugin = [task for task in run.tasks if not is_undeclared_task(run, task)]
    assert plugin and all(
        run.data["configs"][task]["metadata"]["metric_set"] for task in plugin if task in run.data["configs"]
    )
    assert all(is_undeclared_task(run, task) for task in run.tasks if task not in plugin)
    assert {SUITE, *LEAVES} <= {task for task in run.tasks if is_undeclared_task(run, task)}


def test_capability_tables_and_summary_equal_the_results_files(runs):
    root, done, labels = runs
    markdown = render_markdown(build_report([root]), details=True)
    tables = parse_tables(markdown)
    assert {SUB, *LEAVES} & set(tables) == set(), "members of lm_eval's groups are left to the group"
    assert markdown.index("## Bias next to capability") < markdown.index("## gest_en")
    assert (
        markdown.index("## stereoset_multi_en")
        < markdown.index("## lm_eval's own tasks")
        < markdown.index("## Provenance")
    )
    for run, label in zip(done, labels):
        results = run.results
        assert results["higher_is_better"][SUITE]["acc"] is True
        suite = tables[SUITE][label]
        assert suite["acc ↑"] == capability_cell(results, SUITE, "acc")
        assert results["results"][SUITE]["acc,none"] == pytest.approx(
            sum(results["results"][leaf]["acc,none"] for leaf in LEAVES) / 3
        ), "lm_eval's own aggregate, shown as it is"
        assert suite["items"] == f"{3 * LIMIT} of {3 * len(GENERIC_DOCS)}"
        solo = tables[SOLO][label]
        assert (solo["acc ↑"], solo["acc_norm ↑"]) == (
            capability_cell(results, SOLO, "acc"),
            capability_cell(results, SOLO, "acc_norm"),
        )
        summary = tables["Bias next to capability"][label]
        assert summary["stereoset_multi_en ss (ideal 50)"] == expected_cell(results, "stereoset_multi_en", "ss", 50)
        assert summary["gest_en gs (ideal 1)"] == expected_cell(results, "gest_en", "gs", 1)
        assert summary[f"{SUITE} acc ↑"] == suite["acc ↑"] and summary[f"{SOLO} acc_norm ↑"] == solo["acc_norm ↑"]
        assert tables["stereoset_multi_en"][label]["lms ↑"] == expected_cell(results, "stereoset_multi_en", "lms")
    assert f"Group of 3 task(s) ({SUB}, {LEAVES[2]})" in markdown
    assert f"- ⚠ {labels[0]}: limit: scored on {3 * LIMIT} of {3 * len(GENERIC_DOCS)} items (--limit 3)" in markdown


def test_bias_against_capability_figures(runs, tmp_path):
    root, done, labels = runs
    report = build_report([root])
    points = {point.label: point for point in panel_points(report, "stereoset_multi_en", "ss", SOLO, "acc_norm")}
    assert sorted(points) == sorted(labels)
    for label, run in zip(labels, done):
        point = points[label]
        metrics, ss = run.results["results"][SOLO], run.results["results"]["stereoset_multi_en"]
        acc, stderr = metrics["acc_norm,none"], metrics["acc_norm_stderr,none"]
        assert (point.x, point.y) == (acc, ss["ss,none"])
        assert point.x_bounds == pytest.approx((acc - Z_95 * stderr, acc + Z_95 * stderr))
        assert point.y_bounds == (ss["ss_ci_low,none"], ss["ss_ci_high,none"])
    proc = report_cli(root, "--html", tmp_path / "html", "--details")
    page = PageParser.parse((tmp_path / "html" / "index.html").read_text())
    sizes = {src: (width, height) for src, width, height in page.images if src.startswith("capability_")}
    panels = dot_plot_height(3)  # local_suite acc, local_mc_solo acc and acc_norm
    assert sizes == {f"capability_{task}.png": (WIDTH_PX, panels) for task in BIAS_TASKS}
    for src, size in sizes.items():
        assert png_size(tmp_path / "html" / src) == size
    captions = [caption for caption in page.captions if "against lm_eval's own tasks" in caption]
    assert len(captions) == 2 and all("How to read this:" in caption for caption in captions)
    assert all("±1.96 × lm_eval's stderr" in caption and "ideal" in caption for caption in captions)
    assert page.cell(SOLO, labels[1], "acc ↑") == capability_cell(done[1].results, SOLO, "acc")
    assert "## lm_eval's own tasks" in proc.stdout


def test_no_figure_for_a_single_model(runs):
    root, _, _ = runs
    report = build_report([root / "out0"])
    assert capability_figures(report) == []
    assert "## Bias next to capability" in render_markdown(report, details=True), (
        "the summary still shows the one model"
    )


def test_hellaswag_and_nested_mmlu_groups_from_lm_eval_results_files():
    report = build_report([FIXTURES])
    assert report.tasks == ["gsm8k", "hellaswag", "mmlu", "stereoset_multi_en", "wikitext"], "mmlu's subgroups stay in"
    tables = parse_tables(render_markdown(report, details=True))
    files = {label: json.loads(next((FIXTURES / label.replace("/", "__")).glob("*.json")).read_text())
             for label in ("org/model-a", "org/model-b")}  # fmt: skip
    for label, results in files.items():
        mmlu = tables["mmlu"][label]
        assert mmlu["acc ↑"] == capability_cell(results, "mmlu", "acc") and mmlu["items"] == "499"
        assert tables["hellaswag"][label]["acc_norm ↑"] == capability_cell(results, "hellaswag", "acc_norm")
        assert tables["wikitext"][label]["word_perplexity ↓"] == fmt(
            results["results"]["wikitext"]["word_perplexity,none"]
        )
        assert tables["Bias next to capability"][label]["mmlu acc ↑"] == mmlu["acc ↑"]
        gsm8k = results["results"]["gsm8k"]
        assert tables["gsm8k"][label]["exact_match ↑"] == (
            f"{fmt(gsm8k['exact_match,strict-match'])} ± {fmt(gsm8k['exact_match_stderr,strict-match'])}"
        ), "the first filter"
        assert tables["gsm8k"][label]["exact_match[flexible-extract] ↑"] == (
            f"{fmt(gsm8k['exact_match,flexible-extract'])} ± {fmt(gsm8k['exact_match_stderr,flexible-extract'])}"
        ), "a second filter, with the direction of its metric"
    assert [f.kind for f in report.warnings] == [], "full runs: no limit warning"
    data = report_json(report)
    assert data["undeclared_tasks"] == ["gsm8k", "hellaswag", "mmlu", "wikitext"]
    perplexity = data["tasks"]["wikitext"]["org/model-b"]["metrics"]["word_perplexity"]
    assert (perplexity["value"], perplexity["stderr"], perplexity["direction"]) == (22.5, None, "lower")
    assert data["tasks"]["mmlu"]["org/model-a"]["members"] == [
        "mmlu_formal_logic", "mmlu_world_religions", "mmlu_abstract_algebra", "mmlu_college_physics"
    ]  # fmt: skip
    figures = capability_figures(report)
    assert [(figure.file, figure.height) for figure in figures] == [
        ("capability_stereoset_multi_en.png", dot_plot_height(8))
    ]
    low, high = panel_points(report, "stereoset_multi_en", "ss", "mmlu", "acc")[1].x_bounds
    mmlu_b = files["org/model-b"]["results"]["mmlu"]
    assert (low + high) / 2 == pytest.approx(mmlu_b["acc,none"])
    assert (high - low) / 2 == pytest.approx(Z_95 * mmlu_b["acc_stderr,none"])
    assert panel_points(report, "stereoset_multi_en", "ss", "wikitext", "word_perplexity")[0].x_bounds is None


def test_results_of_lm_evals_own_tasks_only_are_said_so(tmp_path):
    for source in FIXTURES.rglob("results_*.json"):
        data = json.loads(source.read_text())
        del data["results"]["stereoset_multi_en"]
        target = tmp_path / source.relative_to(FIXTURES)
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(data))
    proc = report_cli(tmp_path, "--details")
    message = "no bias benchmark of lm-eval-stereo in these 2 results file(s): they hold only lm_eval's own tasks"
    assert f"warning: {message} (gsm8k, hellaswag, mmlu, wikitext)" in proc.stderr
    assert f"- ⚠ {message}" in proc.stdout
    assert "## lm_eval's own tasks" in proc.stdout and "## Bias next to capability" not in proc.stdout
    assert not math.isnan(float(parse_tables(proc.stdout)["mmlu"]["org/model-a"]["acc ↑"].split(" ")[0]))
    shutil.rmtree(tmp_path / "org__model-b")
    assert "they hold only lm_eval's own tasks" in report_cli(tmp_path).stderr


def test_the_markdown_and_the_html_page_hold_their_sections_in_the_one_order(runs):
    """Both outputs render :data:`~lm_eval_stereo.report.sections.SECTIONS` in its order (they drifted apart once:
    "Bias next to capability" after the rankings in the markdown, after the summary in the HTML)."""
    from html import unescape

    from lm_eval_stereo.report.html import render_html
    from lm_eval_stereo.report.sections import SECTIONS

    report = build_report([runs[0]])
    order = [section.key for section in SECTIONS]
    by_heading = {heading: section.key for section in SECTIONS for heading in section.headings}
    markdown = [by_heading[h] for h in re.findall(r"^## (.+)$", render_markdown(report, details=True), re.M)
                if h in by_heading]  # fmt: skip
    page = [by_heading.get(unescape(h), {s.title: s.key for s in SECTIONS}.get(unescape(h)))
            for h in re.findall(r"<h2>(.+?)</h2>", render_html(report, []))]  # fmt: skip
    assert None not in page
    for shown in (markdown, page):
        keys = list(dict.fromkeys(shown))
        assert keys == sorted(keys, key=order.index)
        assert {"results", "headlines", "capability_summary", "details", "lm_eval_tasks", "provenance"} <= set(keys)
    assert list(dict.fromkeys(markdown)) == list(dict.fromkeys(page))


def test_every_section_is_rendered_from_the_one_list(monkeypatch):
    """Each renderer holds a part for every section (the markdown all but the figures) and renders them in the order
    of SECTIONS, whatever a report holds: each part replaced by its key, the outputs are the list itself."""
    from lm_eval_stereo.report import html, markdown
    from lm_eval_stereo.report.sections import SECTIONS

    order = [section.key for section in SECTIONS]
    assert list(html.HTML_SECTIONS) == order
    assert list(markdown.MARKDOWN_SECTIONS) == [s.key for s in SECTIONS if s.where != "html"]
    for key in order:
        monkeypatch.setitem(html.HTML_SECTIONS, key, lambda report, figures, key=key: [f"[{key}]"])
        if key in markdown.MARKDOWN_SECTIONS:
            monkeypatch.setitem(markdown.MARKDOWN_SECTIONS, key, lambda report, key=key: [f"[{key}]"])
    monkeypatch.setattr(markdown, "results_markdown", lambda report: ["[results]"])
    report = build_report([FIXTURES])
    assert re.findall(r"\[(\w+)\]", html.render_html(report, [])) == order
    assert re.findall(r"\[(\w+)\]", markdown.render_markdown(report, details=True)) == order[:6] + order[7:]
