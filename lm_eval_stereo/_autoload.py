"""Fail-soft start-up hook for lm-evaluation-harness 0.4.13, which has no plugin mechanism.

``lm_eval_stereo_autoload.pth`` (installed into site-packages) imports this module at interpreter start-up. It only
installs an import hook: nothing of lm_eval, and none of the hooks, is imported until the program itself imports it.
When one of the lm_eval modules named in :data:`_HOOKS` has been executed, the hooks for it are imported from
:mod:`lm_eval_stereo.hooks` (one module per lm_eval module the plugin changes, each saying what lm_eval 0.4.13 lacks
there and why the change is needed) and installed: the plugin's task folder for every ``TaskManager``, its models in
lm_eval's registry, the served-model, vLLM, ``hf`` and ``--use_cache`` fixes, the console table, the ``lm_eval``
command line's checks.

This table is the plugin's one list of what it changes in lm_eval; nothing outside :mod:`lm_eval_stereo.hooks` writes
onto lm_eval's objects.

If lm_eval's internals change, the hook does nothing and warns once how to use the plugin instead
(``--include_path "$(lm-eval-stereo tasks-path)"``); lm_eval itself keeps working. ``LM_EVAL_STEREO_AUTOLOAD=0``
disables the hook.
"""

from __future__ import annotations

import os
import sys
import warnings
from types import ModuleType

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms at every interpreter start-up

if TYPE_CHECKING:  # this module runs at every interpreter start-up: import only what it needs at once
    from typing import Any

AUTOLOAD_ENV = "LM_EVAL_STEREO_AUTOLOAD"

_warned = False


class PluginHookWarning(RuntimeWarning):
    """The plugin could not hook into this lm_eval version."""


def _warn_once(what: str, exc: BaseException) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    try:
        from importlib.metadata import version

        lm_eval_version = version("lm_eval")
    except Exception:  # noqa: BLE001 - the version is only decoration for the message
        lm_eval_version = "?"
    from lm_eval_stereo.hooks.version import UnsupportedLmEval

    advice = (
        "Install a supported version: pip install 'lm-eval>=0.4.13,<0.5'."
        if isinstance(exc, UnsupportedLmEval)
        else 'Use `lm-eval-stereo` instead of `lm_eval`, or `lm_eval --include_path "$(lm-eval-stereo tasks-path)" ...`.'
    )
    warnings.warn(
        f"lm-eval-stereo could not {what} with lm_eval {lm_eval_version} ({type(exc).__name__}: {exc}); "
        f"its tasks and models are missing from this run. {advice}",
        PluginHookWarning,
        stacklevel=2,
    )


#: the hooks, by the lm_eval module each one changes: ``(what it does, "module:function")`` under
#: :mod:`lm_eval_stereo.hooks`, each installed right after lm_eval has executed that module
_HOOKS: dict[str, tuple[tuple[str, str], ...]] = {
    "lm_eval.evaluator_utils": (("report its bootstrap standard errors", "console:install_stderr"),),
    "lm_eval.utils": (("compact the console table of the plugin's tasks", "console:install_table"),),
    "lm_eval": (("start", "version:install"),),
    "lm_eval.models.huggingface": (("explain models the hf backend cannot score", "huggingface:install"),),
    "lm_eval.api.model": (
        ("give models a clear error for masked-LM requests", "language_model:install"),
        ("keep one backend's answers in --use_cache", "answer_cache:install"),
    ),
    "lm_eval.models.api_models": (("count unanswered requests of served models", "api_models:install"),),
    "lm_eval.models.openai_completions": (("send requests servers accept", "api_models:install_openai_completions"),),
    "lm_eval.evaluator": (("check a served model before the run", "evaluator:install"),),
    "lm_eval.loggers.evaluation_tracker": (("keep its files inside --output_path", "evaluation_tracker:install"),),
    "lm_eval.models.vllm_causallms": (("start, seed and shut down vLLM engines", "vllm:install"),),
    "lm_eval.tasks.manager": (("register its tasks", "tasks:install"),),
    "lm_eval.models": (("register its models", "registry:install"),),
    "lm_eval._cli.harness": (("translate --tasks list", "cli:install"),),
    "lm_eval._cli.run": (("keep credentials out of its summary line", "cli:install_run"),),
}


def _run_hook(name: str, module: ModuleType) -> None:
    import importlib

    for what, target in _HOOKS[name]:
        hooks_module, _, function = target.partition(":")
        try:
            hook = getattr(importlib.import_module(f"lm_eval_stereo.hooks.{hooks_module}"), function)
            hook(module)
        except Exception as exc:  # noqa: BLE001 - fail soft, lm_eval must keep working
            _warn_once(what, exc)


class _HookedLoader:
    """Runs a hook right after the real loader executed the module (the import protocol needs no base class)."""

    def __init__(self, loader: Any, name: str) -> None:
        self._loader, self._name = loader, name

    def create_module(self, spec: Any) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _run_hook(self._name, module)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._loader, attr)


class _PostImportFinder:
    """Finds nothing itself; wraps the real loader of the hooked lm_eval modules."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _HOOKS:
            return None
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _HookedLoader(spec.loader, fullname)
                    return spec
        except Exception as exc:  # noqa: BLE001
            _warn_once("hook into the import of " + fullname, exc)
        return None


def activate() -> None:
    """Apply every hook now (used by the ``lm-eval-stereo`` console script, whatever the environment says). A hooked
    module that cannot be imported here (an optional backend's: ``lm_eval.models.vllm_causallms`` without vLLM) gets
    its hook when it is imported later, if ever: the import hook is installed for it."""
    import importlib

    for name in _HOOKS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            if not any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
                sys.meta_path.insert(0, _PostImportFinder())
            continue
        _run_hook(name, module)


def enabled() -> bool:
    """False when ``LM_EVAL_STEREO_AUTOLOAD`` is a false value (:func:`lm_eval_stereo.core.values.flag`: 0, false, no,
    off). Unset, empty, or neither true nor false (then with a warning), the hook stays on: this runs at every
    interpreter start-up, where an error would stop every program."""
    setting = os.environ.get(AUTOLOAD_ENV, "").strip()
    if not setting:
        return True
    from lm_eval_stereo.core.errors import OptionError
    from lm_eval_stereo.core.values import flag

    try:
        return flag(setting, AUTOLOAD_ENV)
    except OptionError as exc:
        warnings.warn(f"{exc}; the lm-eval-stereo hook stays on", PluginHookWarning, stacklevel=2)
        return True


def install() -> None:
    """Install the import hook unless disabled by ``LM_EVAL_STEREO_AUTOLOAD=0``."""
    if not enabled():
        return
    if any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
        return
    for name in _HOOKS:
        if name in sys.modules:
            _run_hook(name, sys.modules[name])
    sys.meta_path.insert(0, _PostImportFinder())


install()
