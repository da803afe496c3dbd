"""The results layer (``lm_eval_stereo/results/``): a run read once, what tasks record, headlines from declarations,
and the legacy reading of results written before tasks recorded their facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lm_eval_runner import REPO, run_lm_eval

from lm_eval_stereo.core import registry
from lm_eval_stereo.core.metrics import Metric, MetricSet, ideal
from lm_eval_stereo.core.near_ties import names as near_tie_fields
from lm_eval_stereo.core.truncation import TRUNCATED
from lm_eval_stereo.report import build_report
from lm_eval_stereo.report.model import Cell, Row
from lm_eval_stereo.results import legacy
from lm_eval_stereo.results.run import Run, load_run, load_runs
from lm_eval_stereo.results.selection import select_runs
from lm_eval_stereo.tasks.gest.metrics import MT_METRICS
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET

REAL_MODELS = REPO / "docs" / "real_models" / "results"


def stereoset_results(extra: dict[str, float] | None = None) -> dict:
    """A results file of the group ``stereoset_multi`` over ``_de`` and ``_en``, written by today's tasks."""
    values = {f"{name},none": 0 if name.endswith("_ci_undefined") else 0.5 for name in STEREOSET.names}
    values |= {f"{k},none": v for k, v in (extra or {}).items()}
    metadata = {
        "version": 1.0,
        "benchmark": "stereoset_multi",
        "metric_set": STEREOSET.id,
        "key_field": "key",
    }
    tasks = ("stereoset_multi_de", "stereoset_multi_en")
    return {
        "results": {"stereoset_multi": {"count,none": 4}} | {task: dict(values) for task in tasks},
        "group_subtasks": {"stereoset_multi": list(tasks)},
        "configs": {task: {"metadata": {**metadata, "language": task[-2:]}} for task in tasks},
        "config": {"model": "hf", "model_args": "pretrained=m"},
        "n-samples": {task: {"effective": 2, "original": 2} for task in tasks},
        "date": 1.0,
    }


def test_a_declaration_is_resolved_once_per_task_and_run(tmp_path, monkeypatch):
    """The report (cells, lm_eval's groups, paired comparisons) and the export resolve each task's declaration once
    per run, groups from their members' resolved declarations."""
    from lm_eval_stereo.export.collect import collect

    calls: list[str] = []
    bench = registry.benchmark("stereoset_multi")
    factory = bench.metric_sets[STEREOSET.id]

    def counting(task, metadata):
        calls.append(task)
        return factory(task, metadata)

    monkeypatch.setitem(bench.metric_sets, STEREOSET.id, counting)  # type: ignore[arg-type]
    (tmp_path / "results_2026-01-01T00-00-00.json").write_text(json.dumps(stereoset_results()))
    report = build_report([tmp_path])
    assert sorted(calls) == ["stereoset_multi_de", "stereoset_multi_en"]
    assert report.cell("stereoset_multi", report.rows[0]).declaration.benchmark is bench
    (run,) = report.runs
    collect(run, run.tasks)
    assert sorted(calls) == ["stereoset_multi_de", "stereoset_multi_en"], "the export reads the same run's"


def test_headlines_come_from_the_declaration():
    """A metric declared with an interval is a headline; hand-written ``_ci_low``/``_ci_high`` keys of a metric
    declared without one do not make it one, and give it no CI."""
    run = Run(Path("results_x.json"), stereoset_results({"ties_ci_low": 0.0, "ties_ci_high": 1.0}))
    cell = Cell("stereoset_multi_de", Row("m", "m", "hf", {}), run)
    assert "ties" in cell.values and "ties" not in cell.headlines
    assert cell.estimate("ties").low is None
    declared = [m.name for m in STEREOSET.metrics if m.has_interval]
    assert cell.headlines == [name for name in cell.values if name in declared]
    assert cell.estimate("ss").low == 0.5


def test_a_metric_names_its_interval_kind():
    assert Metric("x", "info", ci=True).interval == "bootstrap"
    assert ideal("p", 0.5, interval="agresti-coull").has_interval
    assert not ideal("p", 0.5, interval="agresti-coull").ci, "computed by summarize, not the seeded resampler"
    with pytest.raises(ValueError, match="interval bounds"):
        Metric("p_ci_low", "info")
    with pytest.raises(ValueError, match="unknown interval kind"):
        Metric("p", "info", interval="wald")  # type: ignore[arg-type]
    # GEST-MT's per-stereotype intervals are declared by their metric: the same result names as before
    p = MT_METRICS.metric("p_01_emotional")
    assert (p.interval, p.detail) == ("agresti-coull", True)
    assert MT_METRICS.names[MT_METRICS.names.index("p_01_emotional") :][:3] == (
        "p_01_emotional",
        "p_01_emotional_ci_low",
        "p_01_emotional_ci_high",
    )
    assert "p_01_emotional" not in MT_METRICS.headlines and MT_METRICS.headlines == ("f_s", "f_m")
    with pytest.raises(RuntimeError, match="did not compute"):
        MetricSet("x", (ideal("p", 0.5, interval="agresti-coull"),), lambda items: {"p": 0.5}).compute([])


def test_the_run_selection_is_the_one_rule(tmp_path):
    """Per model and task the newest run; with ``all_runs`` every run; ``tasks`` limits what a run offers."""
    older, newer = stereoset_results(), stereoset_results()
    newer["date"] = 2.0
    del newer["results"]["stereoset_multi_en"]
    (tmp_path / "results_a.json").write_text(json.dumps(older))
    (tmp_path / "results_b.json").write_text(json.dumps(newer))
    runs, _ = load_runs([tmp_path])
    chosen = {run.path.name: tasks for run, tasks in select_runs(runs).chosen}
    assert chosen == {
        "results_a.json": ["stereoset_multi_en"],
        "results_b.json": ["stereoset_multi", "stereoset_multi_de"],
    }
    assert len(select_runs(runs, all_runs=True).chosen) == 2
    only_de = select_runs(runs, tasks=lambda run: [t for t in run.tasks if t.endswith("_de")]).chosen
    assert [(run.path.name, tasks) for run, tasks in only_de] == [("results_b.json", ["stereoset_multi_de"])]


def test_the_legacy_reading_of_the_committed_real_model_results(monkeypatch):
    """docs/REAL_MODELS.md rests mostly on results that record no declaration: every plugin task there resolves
    through the legacy module to a metric set that declares its results (all their intervals; a leakage run's one
    extra count aside) with GEST's templates from ``count_<t>``. The runs written after tasks recorded their facts
    (MBBQ, KoBBQ, EuroGEST) resolve without it."""
    files = sorted(REAL_MODELS.rglob("results_*.json"))
    assert len(files) >= 77
    legacy_calls: list[str] = []
    resolve = legacy.declaration

    def counting(run, task, recorded):
        legacy_calls.append(task)
        return resolve(run, task, recorded)

    monkeypatch.setattr(legacy, "declaration", counting)
    resolved = recorded = 0
    for path in files:
        run = load_run(path)
        for task in run.tasks:
            if "key_field" in run.metadata(task):
                before = len(legacy_calls)
                assert run.declaration(task) is not None and len(legacy_calls) == before, (path, task)
                recorded += 1
                continue
            before = len(legacy_calls)
            declaration = run.declaration(task)
            if registry.lm_eval_task(task) is not None:  # lm_eval's own task that a benchmark declares, by name
                assert declaration is not None and len(legacy_calls) == before, (path, task)
                continue
            if registry.benchmark_by_task_name(task) is None:
                assert declaration is None, (path, task)
                continue
            assert declaration is not None and declaration.metric_sets, (path, task)
            if not run.members(task):
                names, declared = set(run.values(task)), set(declaration.metric_set.names)
                with_interval = {m.name for m in declaration.metric_set.metrics if m.has_interval} & names
                assert legacy.interval_metrics(names) == with_interval, (path, task)
                assert len(names - declared) <= 0.1 * len(names), (path, task, names - declared)
                resolved += 1
                if task.startswith("gest_en"):
                    templates = sorted(n.removeprefix("count_") for n in run.values(task) if n.startswith("count_"))
                    assert [f"gs_{t}" for t in templates] == [
                        m.name
                        for m in declaration.metric_set.metrics
                        if m.name.startswith("gs_") and "base" not in m.name
                    ]
    assert resolved >= 77 and len(legacy_calls) >= resolved and recorded >= 12
    assert legacy.item_key({"id": 3}) == 3 and legacy.item_key({"key": "a", "id": 3}) == "a"


def test_tasks_record_language_key_field_and_templates(tiny_causal: Path, tmp_path: Path, monkeypatch):
    """Through lm_eval: each task records its language, the key field of its items and its benchmark facts (GEST's
    prompt templates), and readers resolve it from there without the legacy module; GEST-MT's results keep their
    names (interval bounds of its per-stereotype shares included)."""
    run = run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu",
         "--tasks", "gest_en,gest_mt_cs,stereoset_multi_de", "--limit", "2", "--log_samples",
         "--gen_kwargs", "max_gen_toks=8"],
        tmp_path,
    )  # fmt: skip
    configs = run.results["configs"]
    recorded = {task: {k: configs[task]["metadata"].get(k) for k in registry.RECORDED} for task in configs}
    assert recorded == {
        "gest_en": {
            "language": "en",
            "key_field": "id",
            "facts": {"templates": ["t0", "t1"]},
            "scoring": "GestEnglishTask",
        },
        "gest_mt_cs": {"language": "cs", "key_field": "id", "facts": None, "scoring": "GestTranslationTask"},
        "stereoset_multi_de": {"language": "de", "key_field": "key", "facts": None, "scoring": "StereoSetTask"},
    }
    mt = {key.partition(",")[0] for key in run.results["results"]["gest_mt_cs"] if "," in key}
    assert {name for name in mt if not name.endswith("_stderr")} == {*MT_METRICS.names, TRUNCATED}

    monkeypatch.setattr(legacy, "declaration", lambda *args: pytest.fail("a recorded task needs no guessing"))
    (results,) = tmp_path.rglob("results_*.json")
    loaded = load_run(results)
    declared = loaded.declaration("gest_en").metric_set
    counted = {TRUNCATED, *near_tie_fields(declared.headlines)}  # the counts SummaryTask adds to every comparison task
    assert {*declared.names, *counted} == set(loaded.values("gest_en"))
    assert loaded.language("stereoset_multi_de") == ("de", "stereoset_multi.scores/StereoSetTask")
    logged = loaded.logged("gest_en")
    assert logged.error is None and len(logged.items) == 2
    assert all(item["id"] == int(key) for key, item in logged.items.items())
    assert all(key in logged.documents for key in logged.items)
    assert loaded.options("gest_en").keys().isdisjoint(registry.RECORDED), "not options: not in the provenance"
