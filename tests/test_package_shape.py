"""The one-folder-per-benchmark shape: generated YAMLs are current and agree with the Python metric declarations,
every task YAML names a SummaryTask, options go through the one parser, and lm_eval is patched in one place."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lm_eval_runner import REPO, run_lm_eval

from lm_eval_stereo import tasks_path
from lm_eval_stereo.core import options
from lm_eval_stereo.core.errors import OptionError
from lm_eval_stereo.tasks.german_gender_bias.answers import GEN_PREFIX
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS as STEREOSET_METRICS

GENERATORS = sorted(tasks_path().glob("*/_generate_configs.py"))


class _Loader(yaml.SafeLoader):
    """Reads task YAMLs without resolving ``!function`` tags (kept as their dotted path)."""


_Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _yaml(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)


@pytest.mark.parametrize("generator", GENERATORS, ids=lambda p: p.parent.name)
def test_generated_configs_are_current(generator: Path) -> None:
    proc = subprocess.run([sys.executable, str(generator), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_benchmark_has_a_generator_and_its_own_folder() -> None:
    assert {p.parent.name for p in GENERATORS} == {"stereoset_multi", "gest", "s_jsd", "stereotype_leakage"}
    for folder in ("stereoset_multi", "gest", "german_gender_bias", "s_jsd", "stereotype_leakage"):
        names = {p.name for p in (tasks_path() / folder).iterdir()}
        assert {"README.md", "__init__.py"} <= names
        # the German suite has one subfolder per sub-benchmark, each with its own metrics.py
        assert any(path.name == "metrics.py" for path in (tasks_path() / folder).rglob("*.py"))


def test_group_metrics_are_generated_from_the_python_declaration() -> None:
    group = _yaml(tasks_path() / "stereoset_multi" / "_stereoset_multi.yaml")
    assert group["task"] == ["stereoset_multi_tasks"]
    assert [entry["metric"] for entry in group["aggregate_metric_list"]] == list(STEREOSET_METRICS.group_means())
    assert (
        "lms_ci_low" not in STEREOSET_METRICS.group_means() and "normalization" not in STEREOSET_METRICS.group_means()
    )


def test_no_yaml_repeats_metric_names_and_every_task_is_a_summary_task() -> None:
    from lm_eval_stereo.core.summary import SummaryTask

    for path in tasks_path().rglob("*"):
        if not (path.name.endswith(".yaml") or path.name.endswith("_yaml")):
            continue
        config = _yaml(path)
        assert "metric_list" not in config, path
        if "class" in config:
            module, _, name = config["class"].rpartition(".")
            assert issubclass(getattr(importlib.import_module(module), name), SummaryTask), path


def test_german_prefill_in_yaml_equals_the_python_marker() -> None:
    folder = tasks_path() / "german_gender_bias"
    assert _yaml(folder / "_german_generation_yaml")["gen_prefix"] == GEN_PREFIX
    assert _yaml(folder / "gerbbq" / "_gerbbq_mc_template_yaml")["gen_prefix"] == GEN_PREFIX


def test_flag_parses_the_same_truth_values_everywhere() -> None:
    for value in (True, "true", "1", 1, "YES", "on"):
        assert options.flag(value) is True
    for value in (False, "false", "0", 0, "no", "Off"):
        assert options.flag(value) is False
    with pytest.raises(OptionError, match="'exclude_undetermined' must be true or false"):
        options.flag("maybe", "exclude_undetermined")


def test_unknown_key_lists_the_accepted_ones_and_suggests_the_near_miss() -> None:
    from lm_eval_stereo.tasks.stereoset_multi.task import OPTIONS

    given = {"pretrained": "gpt2", "dtype": "float32", "version": 1.0, "span_mode": "all", "normalisation": "byte"}
    with pytest.raises(OptionError) as error:
        options.parse("stereoset_multi_en", OPTIONS, given)
    message = str(error.value)
    assert "'normalisation' (did you mean 'normalization'?)" in message
    assert "this task accepts: normalization (default 'token')" in message
    del given["normalisation"]
    parsed = options.parse("stereoset_multi_en", OPTIONS, {**given, "normalization": "BYTE"})
    assert parsed == {"normalization": "byte", "intrasentence_scoring": "reference", "intrasentence_start": "reference"}


def test_unknown_metadata_key_stops_lm_eval_with_the_option_list(tiny_causal: Path, tmp_path: Path) -> None:
    run = run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu",
         "--tasks", "stereoset_multi_en", "--limit", "2", "--metadata", '{"normalisation": "byte"}'],
        tmp_path,
        check=False,
    )  # fmt: skip
    assert run.returncode != 0
    assert "unknown --metadata key 'normalisation' (did you mean 'normalization'?)" in run.stderr


def _plugin_imports(path: Path) -> set[str]:
    """The ``lm_eval_stereo.*`` modules a file imports, at any depth of its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lm_eval_stereo"):
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names if alias.name.startswith("lm_eval_stereo"))
    return names


@pytest.mark.parametrize(
    "layer, forbidden",
    [("core", "lm_eval_stereo.models"), ("core", "lm_eval_stereo.tasks"), ("report", "lm_eval_stereo.models")],
)
def test_imports_go_one_way(layer: str, forbidden: str) -> None:
    """Task machinery (``core``) imports neither the backends (``models``) nor the benchmarks (``tasks``: it reads the
    registry they fill), and the report never imports the backends; ``models`` and ``tasks`` may use ``core``."""
    offenders = {
        path.relative_to(REPO).as_posix(): sorted(name for name in _plugin_imports(path) if name.startswith(forbidden))
        for path in (REPO / "lm_eval_stereo" / layer).rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


@pytest.mark.parametrize("package", ["report", "models"])
def test_modules_of_a_package_do_not_import_each_other_in_a_cycle(package: str) -> None:
    """Lazy imports inside functions count too: a cycle hidden in a function is still a cycle."""
    folder = REPO / "lm_eval_stereo" / package
    graph = {
        path.stem: {
            name.rsplit(".", 1)[-1] for name in _plugin_imports(path) if name.startswith(f"lm_eval_stereo.{package}.")
        }
        for path in folder.glob("*.py")
    }
    order: list[str] = []
    while graph:
        ready = sorted(name for name, needs in graph.items() if not needs - set(order))
        assert ready, f"import cycle among {sorted(graph)}"
        order += ready
        graph = {name: needs for name, needs in graph.items() if name not in ready}
    assert len(order) == len(list(folder.glob("*.py")))


def test_declared_plugin_model_arguments_are_the_backends_own() -> None:
    from lm_eval.models.huggingface import HFLM

    from lm_eval_stereo.models.hf_prefix import HFPrefixLM
    from lm_eval_stereo.models.masked_lm import HFMaskedLM
    from lm_eval_stereo.models.replay import ReplayLM

    hf = set(inspect.signature(HFLM.__init__).parameters)
    own = set()
    for cls in (HFMaskedLM, ReplayLM, HFPrefixLM):
        own |= set(inspect.signature(cls.__init__).parameters) - hf - {"self", "args", "kwargs", "_"}
    assert own == set(options.PLUGIN_MODEL_ARGUMENTS)


def test_lm_eval_is_patched_only_by_the_autoload_module() -> None:
    patchers = []
    for path in (REPO / "lm_eval_stereo").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "setattr(module." in text or "cls.__init__ = " in text or "cls.parse_args = " in text:
            patchers.append(path.relative_to(REPO).as_posix())
    assert patchers == ["lm_eval_stereo/_autoload.py"]
    assert not list((REPO / "lm_eval_stereo").rglob("validate_*.py"))  # development scripts live in scripts/


def test_stderr_field_carries_the_seeded_bootstrap_standard_error(tiny_causal: Path, tmp_path: Path) -> None:
    from lm_eval_stereo.tasks.german_gender_bias.gerbbq.metrics import METRICS as GERBBQ_METRICS

    run = run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu",
         "--tasks", "gerbbq_mc_dis", "--limit", "30", "--log_samples"],
        tmp_path,
    )  # fmt: skip
    items = sorted((sample["accuracy"] for sample in run.samples["gerbbq_mc_dis"]), key=lambda item: item["key"])
    expected = GERBBQ_METRICS.intervals(items)
    for name in ("accuracy", "bias"):
        assert run.metric("gerbbq_mc_dis", f"{name}_stderr") == pytest.approx(expected[f"{name}_stderr_boot"])
        assert run.metric("gerbbq_mc_dis", f"{name}_stderr") > 0
    assert run.metric("gerbbq_mc_dis", "bias_f_stderr") == "N/A"  # no interval declared, no standard error claimed
