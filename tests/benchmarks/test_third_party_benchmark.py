"""A benchmark from outside the package plugs in the documented way and gets everything a built-in one gets.

``tests/fixtures/third_party/toybench`` is a small benchmark package of its own: a declaration, a data file, a metric
set with a bootstrap interval and an item score, a task class and two language YAMLs. The test installs it into a
temporary site folder with a distribution whose entry point names its declaration in the group
``lm_eval_stereo.benchmarks`` (as ``pip install`` of a package declaring
``[project.entry-points."lm_eval_stereo.benchmarks"]`` would), runs it through the real ``lm_eval`` with
``--include_path`` on two tiny models, then through ``lm-eval-stereo report`` (its ideal, CI, verdict, figure and paired
tests) and ``lm-eval-stereo export`` (its record with the interval and per-item lines). No line of ``core/``,
``results/``, ``report/`` or ``export/`` names it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from lm_eval_runner import REPO, TESTS, LmEvalRun, run_command, run_lm_eval

from lm_eval_stereo.core.values import parse_model_args
from lm_eval_stereo.tasks import BENCHMARKS

FIXTURE = TESTS / "fixtures" / "third_party" / "toybench"
TASKS = ("toybench_en", "toybench_de")
#: the documents per language in the fixture's data file
SENTENCES = 8


@dataclass
class ToyRuns:
    site: Path
    output: Path
    #: what the runs add to the tests' environment: the site folder first on ``PYTHONPATH``
    env: dict[str, str]
    runs: dict[str, LmEvalRun]


def _install(site: Path) -> None:
    """The package and a distribution that names its declaration in the entry-point group."""
    shutil.copytree(FIXTURE, site / "toybench")
    dist = site / "toybench-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toybench\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[lm_eval_stereo.benchmarks]\ntoybench = toybench:BENCHMARK\n", encoding="utf-8"
    )


@pytest.fixture(scope="module")
def toy(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> ToyRuns:
    """toybench_en and toybench_de through lm_eval on two tiny models (seeds 0 and 1), samples logged."""
    from lm_eval_stereo.local_models.tiny import build_causal_lm

    site = tmp_path_factory.mktemp("site")
    _install(site)
    other = build_causal_lm(tmp_path_factory.mktemp("tiny_other"), seed=1)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))}
    output = tmp_path_factory.mktemp("toy_out")
    runs = {}
    for name, model in (("seed0", tiny_causal), ("seed1", other)):
        args = ["--model", "hf", "--model_args", f"pretrained={model},dtype=float32", "--device", "cpu"]
        args += ["--batch_size", "8", "--tasks", ",".join(TASKS), "--include_path", str(site / "toybench")]
        runs[name] = run_lm_eval([*args, "--log_samples"], output / name, env=env)
    return ToyRuns(site, output, env, runs)


def _console(toy: ToyRuns, *args: str) -> subprocess.CompletedProcess:
    """``lm-eval-stereo ARGS...`` with the site folder on the path, in the fork server of the ``lm_eval`` runs."""
    return run_command(*args, env=toy.env, timeout=600)


def test_lm_eval_runs_it_with_its_declared_metrics_and_interval(toy: ToyRuns) -> None:
    for run in toy.runs.values():
        for task in TASKS:
            metadata = run.results["configs"][task]["metadata"]
            assert metadata["benchmark"] == "toybench" and metadata["metric_set"] == "toybench.scores"
            share, low, high = (run.metric(task, f"masculine_share{suffix}") for suffix in ("", "_ci_low", "_ci_high"))
            items = [sample["masculine_share"] for sample in run.samples[task]]
            assert run.metric(task, "count") == len(items) == SENTENCES
            assert share == pytest.approx(sum(item["masculine"] for item in items) / SENTENCES, abs=1e-12)
            assert 0.0 <= low <= share <= high <= 1.0


def test_the_report_reads_it_from_its_declaration(toy: ToyRuns, tmp_path: Path) -> None:
    proc = _console(
        toy, "report", str(toy.output), "--html", str(tmp_path / "html"), "--json", str(tmp_path / "r.json")
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    shares = [cell["metrics"]["masculine_share"] for task in TASKS for cell in report["tasks"][task].values()]
    assert len(shares) == 4
    for share in shares:
        assert share["ideal"] == 0.5 and share["direction"] == "target"
        assert share["ci_low"] <= share["value"] <= share["ci_high"]
        assert bool(share["verdict"]) == (share["ci_low"] < share["ci_high"])  # no verdict from a CI without width
    assert any(share["verdict"] for share in shares)
    assert {entry["task"] for entry in report["paired"]["models"]} == set(TASKS)
    for entry in report["paired"]["models"]:
        (comparison,) = entry["comparisons"]
        assert comparison["metric"] == "masculine_share" and comparison["items"] == SENTENCES
    languages = report["paired"]["languages"]
    assert len(languages) == 2 and all({e["a"], e["b"]} == set(TASKS) for e in languages)
    figure = tmp_path / "html" / "toybench.png"
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "toybench.png" in (tmp_path / "html" / "index.html").read_text(encoding="utf-8")


def test_the_export_publishes_it_with_its_interval_and_items(toy: ToyRuns, tmp_path: Path) -> None:
    # two local folders: each named by the hub id of its weights
    ids = [f"--model-id={parse_model_args(run.results['config']['model_args'])['pretrained']}=toy-org/{name}"
           for name, run in toy.runs.items()]  # fmt: skip
    proc = _console(toy, "export", str(toy.output), "--format", "eee", "--output", str(tmp_path), *ids)
    assert proc.returncode == 0, proc.stderr
    records = sorted(tmp_path.rglob("*.json"))
    assert len(records) == 2
    published = []
    for path in records:
        record = json.loads(path.read_text(encoding="utf-8"))
        results = {result["evaluation_result_id"]: result for result in record["evaluation_results"]}
        scores = []
        for task in TASKS:
            details = results[f"{task}/masculine_share"]["score_details"]
            interval = details["uncertainty"]["confidence_interval"]
            assert interval["lower"] <= details["score"] <= interval["upper"]
            scores.append((details["score"], interval["lower"], interval["upper"]))
        published.append(scores)
        lines = path.with_name(f"{path.stem}_samples.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == 2 * SENTENCES
    ran = [
        [
            tuple(run.metric(task, f"masculine_share{suffix}") for suffix in ("", "_ci_low", "_ci_high"))
            for task in TASKS
        ]
        for run in toy.runs.values()
    ]
    assert sorted(published) == sorted(ran)


def test_no_line_of_the_shared_layers_names_it() -> None:
    package = REPO / "lm_eval_stereo"
    layers = [package / name for name in ("core", "results", "report", "export", "datastore")]
    naming = [str(path) for layer in layers for path in layer.rglob("*.py") if "toybench" in path.read_text()]
    assert naming == []


def test_an_entry_point_that_is_no_benchmark_is_left_out_with_a_warning_naming_it(tmp_path: Path) -> None:
    dist = tmp_path / "broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n", encoding="utf-8")
    entries = "[lm_eval_stereo.benchmarks]\nnot_one = json:dumps\nmissing = no_such_module:BENCHMARK\n"
    (dist / "entry_points.txt").write_text(entries, encoding="utf-8")
    script = (
        "import warnings; warnings.simplefilter('always')\n"
        "import lm_eval_stereo.tasks\n"
        "from lm_eval_stereo.core import registry\n"
        "print(','.join(b.name for b in registry.benchmarks()))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(tmp_path), os.environ.get("PYTHONPATH"))))}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ",".join(bench.name for bench in BENCHMARKS)
    assert (
        "benchmark entry point not_one = json:dumps (lm_eval_stereo.benchmarks) is left out: TypeError" in proc.stderr
    )
    assert "benchmark entry point missing = no_such_module:BENCHMARK" in proc.stderr
    assert "ModuleNotFoundError" in proc.stderr
