"""The start-up hook's table (``lm_eval_stereo._autoload.HOOKS``) and how it installs its hooks: every target with the
parameters of the installed lm_eval, one wrapping idiom, a changed target or an unsupported lm_eval left alone with
one line saying what the plugin's tasks lose, and docs/ARCHITECTURE.md's table generated from it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from lm_eval_runner import REPO

from lm_eval_stereo import _autoload
from lm_eval_stereo.core.signatures import PluginHookWarning, shape
from lm_eval_stereo.hooks import MARK, is_wrapped, original_of, wrap


def test_each_hook_names_the_parameters_its_target_has_in_the_installed_lm_eval():
    """Every target of the table, in this lm_eval 0.4.13, has the parameters its hook was written for, and is one the
    hook installed (marked), or a name it registered."""
    import lm_eval.api.registry
    import lm_eval.models  # noqa: F401 - the registry's names

    from lm_eval_stereo.core.signatures import shape as parameters

    for hook in _autoload.HOOKS:
        __import__(hook.module)
        owner, name = _autoload._owner(hook.target)
        if hook.target.endswith("]"):
            assert parameters(owner.register) == hook.signature and name in owner, hook.target
        else:
            assert parameters(original_of(owner, name)) == hook.signature, hook.target
            assert is_wrapped(original_of(owner, name)), hook.target


def test_the_architecture_page_s_table_is_generated_from_the_hooks_table():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "hooks_table.py"), "--check"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for hook in _autoload.HOOKS:
        assert f"| `{hook.target}` |" in page and hook.scope.replace("|", "\\|") in page


def test_the_table_check_sees_a_stale_table(tmp_path, monkeypatch):
    import hooks_table

    page = tmp_path / "ARCHITECTURE.md"
    page.write_text(f"# A\n\n{hooks_table.START}\n| old | row |\n{hooks_table.END}\n", encoding="utf-8")
    monkeypatch.setattr(hooks_table, "PAGE", page)
    monkeypatch.setattr(hooks_table, "REPO", tmp_path)
    assert hooks_table.main(["--check"]) == 1
    assert hooks_table.main([]) == 0 and hooks_table.main(["--check"]) == 0
    assert "| `lm_eval.evaluator.evaluate` |" in page.read_text(encoding="utf-8")


class _Wrapped:
    @staticmethod
    def static(value: int) -> int:
        return value

    def method(self, value: int) -> int:
        return value


def test_wrap_marks_what_it_installs_and_wraps_once():
    def doubled(original):
        function = getattr(original, "__func__", original)
        return staticmethod(lambda value: 2 * function(value)) if isinstance(original, staticmethod) else (
            lambda self, value: 2 * function(self, value)
        )  # fmt: skip

    for name in ("static", "method"):
        wrap(_Wrapped, name, doubled)
        wrap(_Wrapped, name, doubled)  # hooked twice: wrapped once
        assert is_wrapped(vars(_Wrapped)[name])
    assert _Wrapped.static(3) == 6 and _Wrapped().method(3) == 6
    assert isinstance(vars(_Wrapped)["static"], staticmethod)


def test_one_wrapping_idiom_no_mark_set_by_hand_and_no_argument_read_by_position():
    """Nothing of the package sets the wrapper mark itself (``wrap`` does), and no wrapper of ``hooks/`` or mixin of
    ``models/`` reads an argument by its position (``args[1]``, ``len(args) > 1``): they bind by name."""
    by_hand, by_position = [], []
    for path in (REPO / "lm_eval_stereo").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == MARK and isinstance(node.ctx, ast.Store):
                by_hand.append(f"{path.name}:{node.lineno}")
            if path.parent.name in ("hooks", "models") and isinstance(node, ast.Subscript):
                if isinstance(node.value, ast.Name) and node.value.id == "args":
                    by_position.append(f"{path.name}:{node.lineno}")
            if path.parent.name in ("hooks", "models") and isinstance(node, ast.Call):
                if getattr(node.func, "id", None) == "len" and getattr(node.args[0], "id", None) == "args":
                    by_position.append(f"{path.name}:{node.lineno}")
    assert by_hand == [] and by_position == []


@pytest.fixture
def changed_task_manager(monkeypatch):
    """lm_eval's ``lm_eval.tasks.manager`` as a later release might have it: ``TaskManager.__init__`` with other
    parameters; the hooks' warnings reset."""

    class TaskManager:
        def __init__(self, paths=None):  # no include_path any more
            self.paths = paths

    fake = types.ModuleType("lm_eval.tasks.manager")
    fake.TaskManager = TaskManager
    monkeypatch.setitem(sys.modules, "lm_eval.tasks.manager", fake)
    monkeypatch.setattr(_autoload, "_warned", set())
    return TaskManager


def test_a_target_whose_parameters_changed_is_left_alone_with_one_line(changed_task_manager):
    (hook,) = [hook for hook in _autoload.HOOKS if hook.module == "lm_eval.tasks.manager"]
    with pytest.warns(PluginHookWarning) as caught:
        _autoload._run_hooks("lm_eval.tasks.manager")
        _autoload._run_hooks("lm_eval.tasks.manager")
    assert len(caught) == 1, "one line per hook, once"
    message = str(caught[0].message)
    assert message == (
        "lm_eval.tasks.manager.TaskManager.__init__ is left as lm_eval has it (its parameters are (self, paths), the "
        f"plugin was written for ({hook.signature})): the plugin's tasks lose {hook.loses}"
    )
    assert not is_wrapped(vars(changed_task_manager)["__init__"])
    assert changed_task_manager(paths=["x"]).paths == ["x"], "lm_eval's class is left as it was"


def test_a_missing_target_is_left_alone_with_one_line_and_the_other_hooks_install(monkeypatch):
    """A release without ``EvaluationTracker.save_results_samples``: that hook warns; its module's other hook
    (``sanitize_model_name``) is installed."""

    class EvaluationTracker:
        pass

    def sanitize_model_name(model_name):
        return model_name

    fake = types.ModuleType("lm_eval.loggers.evaluation_tracker")
    fake.EvaluationTracker, fake.sanitize_model_name = EvaluationTracker, sanitize_model_name
    monkeypatch.setitem(sys.modules, "lm_eval.loggers.evaluation_tracker", fake)
    monkeypatch.setattr(_autoload, "_warned", set())
    with pytest.warns(PluginHookWarning, match=r"save_results_samples is left as lm_eval has it \(not found: KeyError"):
        _autoload._run_hooks("lm_eval.loggers.evaluation_tracker")
    assert is_wrapped(fake.sanitize_model_name) and fake.sanitize_model_name("..") == "__"


def test_an_unsupported_lm_eval_gets_no_hook(monkeypatch):
    import importlib.metadata

    monkeypatch.setattr(_autoload, "_supported", None)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.5.1")
    with pytest.warns(PluginHookWarning, match="lm_eval 0.5.1 is not supported") as caught:
        assert _autoload.supported() is False
        _autoload._run_hooks("lm_eval.tasks.manager")
    assert len(caught) == 1


FAKE_MANAGER = """class TaskManager:
    def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None, *, cache=None):
        self.include_path = include_path
"""


def _stock_function(name: str, parameters: str) -> str:
    """The source of a function ``name`` of ``parameters`` (a hook's ``signature``), every one defaulting to None."""
    return f"def {name}({', '.join(f'{p}=None' for p in parameters.split(', '))}):\n    return 'stock'\n"


#: lm_eval 0.4.13's ``evaluate`` and ``simple_evaluate``, as far as their hooks see them
FAKE_EVALUATOR = "".join(
    _stock_function(hook.target.rsplit(".", 1)[1], hook.signature)
    for hook in _autoload.HOOKS
    if hook.module == "lm_eval.evaluator"
)


def fake_lm_eval(folder: Path, version: str) -> dict[str, str]:
    """An lm_eval of ``version`` whose ``TaskManager.__init__`` gained a keyword-only parameter and whose
    ``evaluate`` is 0.4.13's; the environment of a Python that imports it instead of the real one."""
    (folder / "lm_eval" / "tasks").mkdir(parents=True)
    (folder / "lm_eval" / "__init__.py").write_text("")
    (folder / "lm_eval" / "tasks" / "__init__.py").write_text("")
    (folder / "lm_eval" / "tasks" / "manager.py").write_text(FAKE_MANAGER)
    (folder / "lm_eval" / "evaluator.py").write_text(FAKE_EVALUATOR)
    (folder / f"lm_eval-{version}.dist-info").mkdir()
    (folder / f"lm_eval-{version}.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: lm_eval\nVersion: {version}\n"
    )
    return {**os.environ, "PYTHONPATH": f"{folder}{os.pathsep}{REPO}"}


PROBE = (
    "import lm_eval.evaluator as e, lm_eval.tasks.manager as m; "
    "print(m.TaskManager().include_path, hasattr(e.evaluate, '_lm_eval_stereo'))"
)


def test_through_lm_eval_a_changed_signature_costs_that_hook_only(tmp_path):
    """In a fresh interpreter with the start-up hook, a supported lm_eval (0.4.14) whose ``TaskManager.__init__``
    changed: one warning line names it and what is lost; ``evaluate``, unchanged, is hooked."""
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=fake_lm_eval(tmp_path, "0.4.14"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", "True"]
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("lm-eval-stereo:0: PluginHookWarning: ")
    assert "lm_eval.tasks.manager.TaskManager.__init__ is left as lm_eval has it (its parameters are (self, verbosity, "
    assert "found without --include_path" in proc.stderr


def test_through_lm_eval_an_unsupported_version_gets_no_hook_and_one_line(tmp_path):
    """The same lm_eval as 0.4.11: nothing of it changed, one line."""
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=fake_lm_eval(tmp_path, "0.4.11"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", "False"]
    assert proc.stderr.count("\n") == 1 and proc.stderr.count("PluginHookWarning") == 1
    assert "lm_eval 0.4.11 is not supported" in proc.stderr and "pip install 'lm-eval>=0.4.13,<0.5'" in proc.stderr
    assert "none of the plugin's changes to lm_eval is installed" in proc.stderr


def test_shape_names_parameters_without_defaults():
    def function(self, a, /, b=1, *args, c, d=2, **kwargs):
        return a

    assert shape(function) == "self, a, /, b, *args, c, d, **kwargs"
    assert shape(staticmethod(lambda x, *, y: x)) == "x, *, y"
    assert shape(property(lambda self: 1)) == "self"
