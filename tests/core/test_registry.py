"""The benchmark registry: each benchmark declared once; ``--metadata`` parsed against every benchmark's options in a
fresh lm_eval process whatever the task order; a task with a name of the user's own reported as its benchmark."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from lm_eval_runner import run_lm_eval
from markdown_tables import parse_tables
from test_report import png_size, report_cli

from lm_eval_stereo import tasks_path
from lm_eval_stereo.core import registry
from lm_eval_stereo.tasks import BENCHMARKS

#: the benchmark folders of the tasks package: each holds a declaration in its __init__.py
FOLDERS = sorted(path.parent.name for path in tasks_path().glob("*/__init__.py"))


def test_every_benchmark_folder_is_declared_once_and_registered_through_the_entry_point():
    assert sorted(bench.name for bench in BENCHMARKS) == FOLDERS and len(FOLDERS) >= 8
    assert registry.benchmarks()[: len(BENCHMARKS)] == BENCHMARKS, "the plugin's own first, in its list's order"
    (own,) = [point for point in entry_points(group=registry.ENTRY_POINT_GROUP) if point.name == "lm_eval_stereo"]
    assert own.load() is BENCHMARKS
    for bench in BENCHMARKS:
        assert (tasks_path() / bench.name / "__init__.py").is_file()
        assert bench.sources and bench.languages and bench.figures and bench.metric_sets
        names = [option.name for option in bench.options]
        assert len(names) == len(set(names)), bench.name
        for metric_set_id, factory in bench.metric_sets.items():
            built = factory(f"{bench.name}_xx", {"facts": {"templates": ["t0"]}})
            assert built.id == metric_set_id, "a factory builds the metric set of its own id"
            assert registry.benchmark_of_metric_set(metric_set_id) is bench
    assert registry.benchmark_of_metric_set("gest.nothing") is None
    with pytest.raises(ValueError, match="declared twice"):
        registry.register(registry.Benchmark("gest", "GEST", (), (), {}, ()))


def test_every_option_of_every_benchmark_is_accepted_by_every_task():
    from lm_eval_stereo.core import options
    from lm_eval_stereo.tasks.stereoset_multi.task import OPTIONS

    every = {option.name: option.default for bench in BENCHMARKS for option in bench.options}
    assert {"judge_model", "persona_wording", "gest_version", "protocol", "span_mode", "perturb"} <= set(every)
    parsed = options.parse("stereoset_multi_en", OPTIONS, every)
    assert parsed == {option.name: option.default for option in OPTIONS}


@pytest.mark.parametrize("order", ["stereoset_multi_en,gest_en", "gest_en,stereoset_multi_en"])
def test_a_persona_option_next_to_stereoset_and_gest_in_a_fresh_lm_eval(tiny_causal: Path, tmp_path: Path, order):
    """One ``--metadata`` serves every task of a run: a persona option is accepted by StereoSet and GEST tasks
    although no persona task runs (the registry, not the import order, knows every option)."""
    run = run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu",
         "--tasks", order, "--limit", "2", "--metadata", '{"judge_model": "", "persona_wording": "typical"}'],
        tmp_path,
    )  # fmt: skip
    for task, metric_set in (("stereoset_multi_en", "stereoset_multi.scores"), ("gest_en", "gest.scores")):
        metadata = run.results["configs"][task]["metadata"]
        assert metadata["metric_set"] == metric_set and metadata["benchmark"] == metric_set.split(".")[0]
        assert metadata["persona_wording"] == "typical", "the option is recorded as given"
    assert run.results["results"]["stereoset_multi_en"]["count,none"] == 2


def user_task(folder: Path) -> Path:
    """A user's own YAML on the plugin's StereoSet template: German StereoSet under the name ``my_bias_de``."""
    folder.mkdir(parents=True, exist_ok=True)
    template = tasks_path() / "stereoset_multi" / "_stereoset_multi_template_yaml"
    (folder / "my_bias_de.yaml").write_text(
        f"include: {json.dumps(str(template))}\ntask: my_bias_de\ndataset_kwargs:\n  lang: de\n"
    )
    (folder / "english_stereotypes.yaml").write_text(
        f"include: {json.dumps(str(template))}\ntask: english_stereotypes\ndataset_kwargs:\n  lang: en\n"
    )
    return folder


@pytest.fixture(scope="module")
def user_named_runs(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tiny causal LMs on ``my_bias_de`` through lm_eval with ``--log_samples``."""
    from lm_eval_stereo.local_models.tiny import build_causal_lm

    include = user_task(tmp_path_factory.mktemp("user_tasks"))
    root = tmp_path_factory.mktemp("user_named_runs")
    models = [tiny_causal, build_causal_lm(tmp_path_factory.mktemp("model_seed1"), seed=1)]

    def evaluate(index: int) -> None:
        args = ["--model", "hf", "--model_args", f"pretrained={models[index]},dtype=float32", "--device", "cpu"]
        args += ["--tasks", "my_bias_de", "--limit", "12", "--log_samples", "--include_path", str(include)]
        run_lm_eval(args, root / f"out{index}")

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(evaluate, range(2)))
    return root


def test_a_task_with_the_users_own_name_is_reported_as_its_benchmark(user_named_runs: Path, tmp_path: Path):
    data_file, html = tmp_path / "report.json", tmp_path / "html"
    proc = report_cli(user_named_runs, "--json", data_file, "--html", html, "--details")
    data = json.loads(data_file.read_text())
    assert data["undeclared_tasks"] == [], "not taken for one of lm_eval's own tasks"
    tables = parse_tables(proc.stdout)
    ss = tables["Summary"]["StereoSet de · SS (my_bias_de)"]
    assert ss["ideal"] == "50" and len(ss) == 4, "the declared ideal and label of StereoSet's SS, one column per model"
    rows = tables["my_bias_de"]
    assert len(rows) == 2 and all("lms ↑" in row and "[" in row["ss (ideal 50)"] for row in rows.values())
    paired = tables["Model vs model (paired)"]["my_bias_de"]
    assert paired["items"] == "12", "model vs model on the items both runs scored"
    compared = {entry["task"] for entry in data["paired"]["models"]}
    assert "my_bias_de" in compared, "model vs model on the user's task, from its samples"
    assert png_size(html / "stereoset.png")[0] > 0, "StereoSet's declared figure is drawn for it"


def test_tasks_of_the_users_own_names_are_compared_language_against_language(tiny_causal: Path, tmp_path: Path):
    """``my_bias_de`` and ``english_stereotypes``, the StereoSet template in German and English under names that say
    nothing of a family or a language: the tasks record their language and scoring, so the report compares them
    language against language on their parallel items (issue 34: pairs from what the tasks record, not their names)."""
    include = user_task(tmp_path / "user_tasks")
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu"]
    args += ["--tasks", "my_bias_de,english_stereotypes", "--limit", "12", "--log_samples"]
    run_lm_eval([*args, "--include_path", str(include)], tmp_path / "out")
    data_file = tmp_path / "report.json"
    report_cli(tmp_path / "out", "--json", data_file)
    (languages,) = json.loads(data_file.read_text())["paired"]["languages"]
    assert {languages["a"], languages["b"]} == {"my_bias_de", "english_stereotypes"}
    assert languages["benchmark"] == "stereoset_multi.scores", "named by the metric set the two tasks share"
    compared = {comparison["metric"]: comparison["items"] for comparison in languages["comparisons"]}
    assert compared.keys() == {"lms", "ss", "icat"} and set(compared.values()) == {12}


def test_older_results_without_a_declaration_read_through_the_fallback(user_named_runs: Path, tmp_path: Path):
    """The same run with the recorded declaration removed: a standard task name still reads as its benchmark; the
    user's own name then cannot (it is said to be one of lm_eval's own tasks)."""
    from lm_eval_stereo.report import build_report
    from lm_eval_stereo.results.declarations import declaration_of

    source = sorted(user_named_runs.rglob("results_*.json"))[0]
    data = json.loads(source.read_text())
    config = data["configs"]["my_bias_de"]
    for key in ("benchmark", "metric_set"):
        config["metadata"].pop(key)
    data["results"]["stereoset_multi_de"] = data["results"]["my_bias_de"]
    data["configs"]["stereoset_multi_de"] = config
    old = tmp_path / "old" / "results_2026-01-01T00-00-00.json"
    old.parent.mkdir()
    old.write_text(json.dumps(data))
    report = build_report([old], paired=False)
    run = report.runs[0]
    found = declaration_of(run, "stereoset_multi_de")
    assert found is not None and found.metric_set.id == "stereoset_multi.scores"
    assert declaration_of(run, "my_bias_de") is None
    assert report.is_undeclared_task("my_bias_de") and not report.is_undeclared_task("stereoset_multi_de")
    assert report.ideal("stereoset_multi_de", "ss").value == 50
