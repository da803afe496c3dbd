"""The one-folder-per-benchmark shape: generated YAMLs are current and agree with the Python metric declarations,
every task YAML names a SummaryTask, options go through the one parser, and lm_eval is patched in one place."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

import lm_eval_targets
import pytest
import yaml
from lm_eval_runner import REPO, run_lm_eval

from lm_eval_stereo import _autoload, cli_lm_eval, tasks_path
from lm_eval_stereo.core import model_tokenizer, options
from lm_eval_stereo.core.errors import OptionError
from lm_eval_stereo.core.values import flag, parse_model_args
from lm_eval_stereo.hooks.registry import PLUGIN_MODELS
from lm_eval_stereo.results.run import Run
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


def test_every_benchmark_has_its_own_folder_and_a_generator_for_its_languages() -> None:
    """The registry's benchmarks are the task folders with an ``__init__.py`` (each folder one, each benchmark one);
    a benchmark of several languages generates its per-language YAMLs, unless its tasks are lm_eval's own."""
    from lm_eval_stereo.tasks import BENCHMARKS

    folders = sorted(path.parent.name for path in tasks_path().glob("*/__init__.py"))
    assert sorted(bench.name for bench in BENCHMARKS) == folders
    generated = {path.parent.name for path in GENERATORS} - {"leaderboard"}  # the leaderboard groups: no benchmark
    assert generated <= set(folders)
    own_tasks = {bench.name for bench in BENCHMARKS if bench.lm_eval_tasks is None}
    assert {bench.name for bench in BENCHMARKS if len(bench.languages) > 1} & own_tasks <= generated
    for folder in folders:
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
        assert flag(value) is True
    for value in (False, "false", "0", 0, "no", "Off"):
        assert flag(value) is False
    with pytest.raises(OptionError, match="'exclude_undetermined' must be true or false"):
        flag("maybe", "exclude_undetermined")


def test_trust_remote_code_on_means_true_everywhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``trust_remote_code=on`` (lm_eval hands it to the tasks as the string "on"): the tokenizer the tasks load
    trusts remote code; the report and the start-up hook read the model arguments with the one parser, in each form
    lm_eval accepts; the hook's own switch reads on/off the same way."""
    trusted: list[bool] = []
    monkeypatch.setattr(model_tokenizer, "_load", lambda name, revision, trust: trusted.append(trust))
    for given in ("on", "ON", True, 1, "off", False, None):
        model_tokenizer.load_tokenizer({"pretrained": "m", "trust_remote_code": given})
    assert trusted == [True, True, True, True, False, False, False]
    with pytest.raises(OptionError, match="'trust_remote_code' must be true or false"):
        model_tokenizer.load_tokenizer({"pretrained": "m", "trust_remote_code": "maybe"})

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    for folder, stops in ((model, False), (tmp_path / "missing", True)):
        expected = {"pretrained": str(folder), "trust_remote_code": "on"}
        forms = (f"pretrained={folder},trust_remote_code=on", json.dumps(expected), dict(expected))
        for model_args in forms:
            assert parse_model_args(model_args) == expected
            assert flag(parse_model_args(model_args)["trust_remote_code"]) is True
            assert Run(tmp_path / "results.json", {"config": {"model_args": model_args}}).model_args == expected
            if stops:
                with pytest.raises(SystemExit):
                    cli_lm_eval.check_pretrained(model_args)
            else:
                cli_lm_eval.check_pretrained(model_args)

    for setting, on in (("on", True), ("OFF", False), ("0", False), ("", True)):
        monkeypatch.setenv(_autoload.AUTOLOAD_ENV, setting)
        assert _autoload.enabled() is on
    monkeypatch.setenv(_autoload.AUTOLOAD_ENV, "maybe")
    with pytest.warns(_autoload.PluginHookWarning, match="'LM_EVAL_STEREO_AUTOLOAD' must be true or false"):
        assert _autoload.enabled() is True


def test_unknown_key_lists_the_accepted_ones_and_suggests_the_near_miss() -> None:
    from lm_eval_stereo.tasks.stereoset_multi.task import OPTIONS

    given = {"pretrained": "gpt2", "dtype": "float32", "version": 1.0, "span_mode": "all", "normalisation": "byte"}
    with pytest.raises(OptionError) as error:
        options.parse("stereoset_multi_en", OPTIONS, given, model_arguments=("pretrained", "dtype"))
    message = str(error.value)
    assert "'normalisation' (did you mean 'normalization'?)" in message
    assert "this task accepts: normalization (default 'token')" in message
    del given["normalisation"]
    parsed = options.parse("stereoset_multi_en", OPTIONS, {**given, "normalization": "BYTE"}, ("pretrained", "dtype"))
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


def _module_paths_in_strings(path: Path, package: str) -> set[str]:
    """Module paths into ``package`` that a file writes in its strings (docstrings, messages, ``module:function``
    targets): the package itself, a module below it (dotted) or a file below it (with slashes)."""
    pattern = re.compile(re.escape(package).replace(r"\.", "[./]") + r"\b[\w./:<>]*")
    return {
        found
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for found in pattern.findall(node.value)
    }


@pytest.mark.parametrize(
    "layer, forbidden, nor_in_strings",
    [
        ("core", "lm_eval_stereo.models", False),
        ("core", "lm_eval_stereo.tasks", True),
        ("datastore", "lm_eval_stereo.tasks", True),
        ("report", "lm_eval_stereo.models", False),
        ("export", "lm_eval_stereo.report", False),
    ],
)
def test_imports_go_one_way(layer: str, forbidden: str, nor_in_strings: bool) -> None:
    """Task machinery (``core``) imports neither the backends (``models``) nor the benchmarks (``tasks``: it reads the
    registry they fill), the data commands (``datastore``) do not import the benchmarks either, and the report never
    imports the backends; ``models`` and ``tasks`` may use ``core``. The export and the report stand side by side on
    the results layer: no module of the export imports the report, at module level or inside a function. ``core`` and ``datastore`` do not even name a
    module of the benchmarks in a string (a ``module:function`` to import later, a docstring): a new benchmark,
    its upstream sources and its mirror conversion change nothing there."""
    offenders = {}
    for path in (REPO / "lm_eval_stereo" / layer).rglob("*.py"):
        names = {name for name in _plugin_imports(path) if name.startswith(forbidden)}
        if nor_in_strings:
            names |= _module_paths_in_strings(path, forbidden)
        offenders[path.relative_to(REPO).as_posix()] = sorted(names)
    assert {path: names for path, names in offenders.items() if names} == {}


def _code_strings_and_names(path: Path) -> list[tuple[int, str]]:
    """The string constants (docstrings left out: they may name a benchmark as an example), identifiers and imported
    module paths of a file, with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize("layer", ["results", "report", "export"])
def test_the_readers_name_no_benchmark(layer: str) -> None:
    """The results layer, the report and the export import no module of a benchmark (only the tasks package, whose
    import registers them) and name none in their code: no benchmark's name, title or task-name stem in a string, an
    identifier or an import. What they say of a benchmark comes from its declaration."""
    import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
    from lm_eval_stereo.core import registry

    words = {bench.name for bench in registry.benchmarks()} | {bench.title for bench in registry.benchmarks()}
    words |= {pattern.rstrip("*_") for bench in registry.benchmarks() for pattern in bench.task_patterns}
    words |= {"gerbbq", "leak_", "icat", "persona", "sexist"}  # the suites' parts and their metric stems
    naming = re.compile("|".join(rf"(?<![a-z]){re.escape(word)}(?![a-z])" for word in sorted(words)), re.I)
    offenders = [
        f"{path.relative_to(REPO).as_posix()}:{line}: {text[:80]!r}"
        for path in sorted((REPO / "lm_eval_stereo" / layer).rglob("*.py"))
        for line, text in _code_strings_and_names(path)
        if naming.search(text) and text != "lm_eval_stereo.tasks"
    ]
    assert offenders == []


@pytest.mark.parametrize("package", ["report", "models", "hooks"])
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


def _module_names() -> dict[str, Path]:
    """Every module of the plugin by its dotted name (a package by its own name, for its ``__init__.py``)."""
    modules = {}
    for path in (REPO / "lm_eval_stereo").rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(path: Path, modules: Collection[str]) -> set[str]:
    """The plugin's modules that a file imports anywhere: at module level, in class bodies, under ``if
    TYPE_CHECKING:`` (a cycle through type hints is a cycle too) and inside functions (a lazy import only hides a
    cycle). ``from package import name`` counts as an import of the module ``package.name`` where there is one, else
    of ``package``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {
                f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                for alias in node.names
            }
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found & set(modules)


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """An import cycle of ``graph`` (module -> the modules it imports) as a chain that ends where it starts; empty
    when every module can be loaded after the modules it imports."""
    while ready := {name for name, needs in graph.items() if not needs & graph.keys()}:
        graph = {name: needs for name, needs in graph.items() if name not in ready}
    # what is left needs another module that is left: follow the first need until a module repeats
    chain = sorted(graph)[:1]
    while chain and chain[-1] not in chain[:-1]:
        chain.append(min(graph[chain[-1]] & graph.keys()))
    return chain[chain.index(chain[-1]) :] if chain else []


def test_no_import_cycle_among_the_plugins_modules() -> None:
    """Every module of the plugin can be loaded after the modules it imports, counting the imports inside functions
    and under ``TYPE_CHECKING``: no two modules need each other, through any chain."""
    modules = _module_names()
    cycle = _cycle({name: _imports(path, modules) - {name} for name, path in modules.items()})
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_sees_a_cycle_through_a_function_level_import() -> None:
    """The check above finds the cycle the results layer once had: a reader importing the benchmarks, one of which
    imports a reader inside a function."""
    chain = {
        "results.declarations": {"tasks"},
        "tasks": {"tasks.leakage"},
        "tasks.leakage": {"tasks.leakage.command"},
        "tasks.leakage.command": {"results.run"},
        "results.run": {"results.declarations"},
        "core": set(),
    }
    assert _cycle(chain) == ["results.declarations", "tasks", "tasks.leakage", "tasks.leakage.command",
                             "results.run", "results.declarations"]  # fmt: skip
    chain["results.declarations"] = {"core"}  # the registry finds the benchmarks instead
    assert _cycle(chain) == []


def test_every_change_to_lm_eval_is_in_the_start_up_hooks_table() -> None:
    """The hooks installed into a fresh lm_eval change exactly the targets of ``_autoload.HOOKS`` (those of the
    modules this environment imports: the ``vllm`` module's where vLLM is installed, ``tests/backends/test_vllm.py``), at most
    about half of the 38 the plugin once changed, each with its scope and what the plugin's tasks lose without it."""
    found = lm_eval_targets.run()
    expected = lm_eval_targets.expected_targets(found["modules"])
    assert "lm_eval.evaluator" in found["modules"] and len(expected) == len(_autoload.HOOKS) <= 38 // 2
    assert sorted(set(found["targets"]) - expected) == [], "changed but not in _autoload.HOOKS"
    assert sorted(expected - set(found["targets"])) == [], "in _autoload.HOOKS but not changed"
    for hook in _autoload.HOOKS:
        module, _, function = hook.change.partition(":")
        assert callable(getattr(importlib.import_module(f"lm_eval_stereo.hooks.{module}"), function)), hook.target
        assert len(hook.scope.split()) > 5 and len(hook.loses.split()) > 2, hook.target


def test_the_target_check_counts_only_the_imported_modules_targets() -> None:
    assert lm_eval_targets.expected_targets(["lm_eval", "lm_eval.utils"]) == {"lm_eval.utils.make_table"}
    registered = lm_eval_targets.expected_targets(["lm_eval.models"])
    assert registered == {f"{lm_eval_targets.REGISTRY}[{name}]" for name in PLUGIN_MODELS}


def test_the_plugin_backends_are_registered_subclasses_of_lm_eval_s_lm() -> None:
    from importlib.util import find_spec

    from lm_eval.api.model import LM

    checked = []
    for name, target in PLUGIN_MODELS.items():
        module, _, cls = target.partition(":")
        if name == "vllm-prefix" and find_spec("vllm") is None:
            continue  # its base, lm_eval's VLLM, needs vLLM: checked in the vLLM venv (tests/backends/test_vllm_prefix.py)
        backend = getattr(importlib.import_module(module), cls)
        assert issubclass(backend, LM) and module.startswith("lm_eval_stereo.models."), name
        checked.append(name)
    assert {"hf-mlm", "hf-prefix", "replay", "local-completions-prefix"} <= set(checked)


@pytest.mark.parametrize("layer", ["tasks", "models"])
def test_tasks_and_models_import_neither_the_start_up_hook_nor_the_hooks(layer: str) -> None:
    """A benchmark and a backend sit below the start-up hook: what they need of the hooks' knowledge lives in
    ``core/``."""
    forbidden = ("lm_eval_stereo._autoload", "lm_eval_stereo.hooks")
    modules = _module_names()
    offenders = {
        path.relative_to(REPO).as_posix(): sorted(
            name for name in _imports(path, modules) if name.startswith(forbidden)
        )
        for path in (REPO / "lm_eval_stereo" / layer).rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def lm_eval_writes(source: str) -> list[str]:
    """The attribute writes of ``source`` onto an object it imported from lm_eval: ``X.attr = ...``, ``del X.attr``,
    ``setattr(X, ...)`` where ``X`` (or the root of ``X.y``) is a name bound by ``import lm_eval...`` or ``from
    lm_eval... import``."""
    tree = ast.parse(source)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "lm_eval"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "lm_eval":
            names |= {a.asname or a.name for a in node.names}

    def root(node: ast.AST) -> str | None:
        while isinstance(node, ast.Attribute):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    writes = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            if node.args and root(node.args[0]) in names:
                writes.append(ast.unparse(node))
        writes += [ast.unparse(t) for t in targets if isinstance(t, ast.Attribute) and root(t) in names]
    return writes


def test_models_patch_nothing_of_lm_eval() -> None:
    """``models/`` holds backends: subclasses, which change lm_eval's objects nowhere (that is ``hooks/``' job)."""
    writes = {
        path.relative_to(REPO).as_posix(): lm_eval_writes(path.read_text(encoding="utf-8"))
        for path in (REPO / "lm_eval_stereo" / "models").rglob("*.py")
    }
    assert {path: found for path, found in writes.items() if found} == {}
    assert not list((REPO / "lm_eval_stereo").rglob("validate_*.py"))  # development scripts live in scripts/


def test_the_write_check_sees_a_patch() -> None:
    source = (
        "import lm_eval.models.huggingface as hf\nfrom lm_eval.api.model import LM\nfrom x import Y\n"
        "def f(self):\n    hf.HFLM.x = 1\n    setattr(LM, 'y', 2)\n    LM.z += 1\n    self.w = 3\n    Y.v = 4\n"
    )
    assert sorted(lm_eval_writes(source)) == ["LM.z", "hf.HFLM.x", "setattr(LM, 'y', 2)"]
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
