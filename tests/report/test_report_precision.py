"""The dtype of every run in the report's provenance, and a warning where one task's runs differ in precision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_tables import section_lines, section_rows

from lm_eval_stereo.report import build_report, render_markdown
from lm_eval_stereo.report.html import render_html
from lm_eval_stereo.report.precision import dtype_text, normalise, precision
from lm_eval_stereo.results.run import Run

TASK = "stereoset_multi_en"


def write_run(directory: Path, model_args: str, *, model_dtype: str | None = None, ss: float = 52.0) -> Path:
    """A stereoset_multi_en results file as lm_eval writes one, with ``config.model_args`` and ``model_dtype``."""
    metrics = {"lms": 60.0, "ss": ss, "icat": 57.6, "count": 100, "ties": 0}
    for name in ("lms", "ss", "icat"):
        metrics |= {f"{name}_ci_low": metrics[name] - 5, f"{name}_ci_high": metrics[name] + 5}
    results = {TASK: {"alias": TASK, "name": TASK, **{f"{k},none": v for k, v in metrics.items()}}}
    config = {"model": "hf", "model_args": model_args, "limit": None}
    if model_dtype:
        config["model_dtype"] = model_dtype
    data = {
        "results": results,
        "group_subtasks": {},
        "configs": {TASK: {"task": TASK, "metadata": {"version": 2.0}}},
        "versions": {TASK: 2.0},
        "n-shot": {TASK: 0},
        "n-samples": {TASK: {"original": 100, "effective": 100}},
        "config": config,
        "lm_eval_version": "0.4.13",
        "date": 1.7e9,
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "results_2026-01-01T00-00-00.000000.json"
    path.write_text(json.dumps(data))
    return path


def provenance_dtypes(markdown: str) -> dict[str, str]:
    """Model label -> the dtype column of the provenance (the split table that has it)."""
    tables = markdown.split("## Provenance")[1].split("\n\n")
    table = next(t for t in tables if t.startswith("| model |") and "| dtype |" in t).splitlines()
    column = table[0].split(" | ").index("dtype")
    return {line.split(" | ")[0].lstrip("| "): line.split(" | ")[column] for line in table[2:]}


def test_a_float32_and_a_bfloat16_run_show_their_dtypes_and_a_warning(tmp_path):
    write_run(tmp_path / "f32", "pretrained=org/model,dtype=float32", model_dtype="torch.float32")
    write_run(tmp_path / "bf16", "pretrained=org/model,dtype=bfloat16", model_dtype="torch.bfloat16", ss=53.0)
    report = build_report([tmp_path])
    labels = sorted(row.label for row in report.rows)
    assert labels == ["org/model (dtype=bfloat16)", "org/model (dtype=float32)"]
    markdown = render_markdown(report, details=True)
    assert provenance_dtypes(markdown) == {
        "org/model (dtype=float32)": "float32",
        "org/model (dtype=bfloat16)": "bfloat16",
    }
    found = {f.model: f for f in report.warnings if f.kind == "precision"}
    assert sorted(found) == labels and all(f.task == TASK for f in found.values())
    assert found["org/model (dtype=bfloat16)"].message.startswith("scored in bfloat16, other runs of this task")
    assert "org/model (dtype=float32): float32" in found["org/model (dtype=bfloat16)"].message
    results = {row["model"]: row for row in section_rows(markdown, "Results")}
    assert all(row["verdict"].endswith("†1") for row in results.values()), "both values marked"
    warnings = [line for line in section_lines(markdown, "Results") if line.startswith("- ⚠")]
    assert warnings == ["- ⚠ †1 precision: 1 task scored in different dtypes by different models or runs: compare "
                        "their numbers only at equal dtype: stereoset_multi_en"]  # fmt: skip
    assert "- ⚠ org/model (dtype=bfloat16): precision: scored in bfloat16" in markdown
    provenance = markdown.split("## Provenance")[1]
    assert "⚠ The runs were scored in different precisions" in provenance
    assert "org/model (dtype=bfloat16): bfloat16; org/model (dtype=float32): float32" in provenance
    page = render_html(report, figures=[])
    assert "scored in different precisions" in page and "<th>dtype</th>" in page


def test_two_models_in_different_dtypes_are_warned_about_and_equal_dtypes_are_not(tmp_path):
    write_run(tmp_path / "a", "pretrained=org/a,dtype=bf16")
    write_run(tmp_path / "b", "pretrained=org/b", model_dtype="torch.float32")
    report = build_report([tmp_path])
    assert {f.model for f in report.warnings if f.kind == "precision"} == {"org/a", "org/b"}
    assert provenance_dtypes(render_markdown(report, details=True)) == {
        "org/a": "bfloat16",
        "org/b": "default (model config: float32)",
    }

    same = tmp_path / "same"
    write_run(same / "a", "pretrained=org/a,dtype=torch.float32")
    write_run(same / "b", "pretrained=org/b,dtype=auto", model_dtype="torch.float32")
    write_run(same / "c", "pretrained=org/c")  # no dtype known: shown, not a difference
    report = build_report([same])
    assert not [f for f in report.warnings if f.kind == "precision"]
    markdown = render_markdown(report, details=True)
    assert provenance_dtypes(markdown) == {
        "org/a": "float32",
        "org/b": "default (model config: float32)",
        "org/c": "default (model config)",
    }
    assert "different precisions" not in markdown


@pytest.mark.parametrize(
    ("value", "expected"),
    [("torch.bfloat16", "bfloat16"), ("bf16", "bfloat16"), ("BFloat16", "bfloat16"), ("fp32", "float32"),
     ("float", "float32"), ("half", "float16"), ("torch.float16", "float16"), ("auto", "auto")],
)  # fmt: skip
def test_dtype_spellings_are_one_precision(value, expected):
    assert normalise(value) == expected


def test_precision_prefers_the_argument_over_what_lm_eval_loaded(tmp_path):
    path = write_run(tmp_path, "pretrained=m,torch_dtype=float16", model_dtype="torch.float16")
    run = Run(path, json.loads(path.read_text()))
    assert (precision(run), dtype_text(run)) == ("float16", "float16")


def test_a_float32_and_a_bfloat16_run_of_one_model_are_kept_apart_through_lm_eval(tiny_causal: Path, tmp_path: Path):
    """One model folder run in float32, then (its config now saying bfloat16) in bfloat16, with the same
    ``--model_args``: the report merged them under one model (the newer run's numbers replacing the older's). Now
    they are two rows named by the dtype lm_eval recorded, warned about, and exported as two records."""
    import shutil

    from lm_eval_runner import run_lm_eval

    from lm_eval_stereo.export.command import main as export

    model = tmp_path / "model"
    shutil.copytree(tiny_causal, model)
    args = ["--model", "hf", "--model_args", f"pretrained={model}", "--tasks", TASK, "--limit", "4", "--log_samples"]
    first = run_lm_eval(args, tmp_path / "out")
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "torch_dtype": "bfloat16", "dtype": "bfloat16"}))
    second = run_lm_eval(args, tmp_path / "out")
    assert (first.results["config"]["model_dtype"], second.results["config"]["model_dtype"]) == (
        "torch.float32",
        "torch.bfloat16",
    )
    assert first.results["config"]["model_args"] == second.results["config"]["model_args"]
    report = build_report([tmp_path / "out"])
    labels = sorted(row.label for row in report.rows)
    assert labels == ["model [model_dtype=torch.bfloat16]", "model [model_dtype=torch.float32]"]
    assert len(report.task_cells(TASK)) == 2
    (apart,) = [finding for finding in report.warnings if finding.kind == "runs kept apart"]
    assert "[model_dtype=torch.bfloat16]: " in apart.message and "[model_dtype=torch.float32]: " in apart.message
    assert {f.model for f in report.warnings if f.kind == "precision"} == set(labels)
    out = tmp_path / "records"
    assert export([str(tmp_path / "out"), "--format", "eee", "--output", str(out), "--model-id", "org/tiny"]) == 0
    records = [json.loads(path.read_text()) for path in out.rglob("*.json")]
    assert sorted(r["source_metadata"]["additional_details"]["results_file"] for r in records) == sorted(
        path.name for path in (tmp_path / "out").rglob("results_*.json")
    )
