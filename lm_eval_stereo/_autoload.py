"""Fail-soft discovery hook for lm-evaluation-harness 0.4.13, which has no plugin mechanism.

``lm_eval_stereo_autoload.pth`` (installed into site-packages) imports this module at interpreter start-up. It only
installs an import hook: nothing of lm_eval is imported until the program itself imports it. When lm_eval's
``lm_eval.tasks.manager`` is executed, ``TaskManager`` is taught to index the plugin's task folder; when
``lm_eval.models`` is executed (it registers the built-in models), the plugin's models are registered beside them;
when ``lm_eval._cli.harness`` is executed, the pre-0.4.10 listing flags (``--tasks list``, ``list_groups``,
``list_subtasks``, ``list_tags``) are translated to 0.4.13's ``lm_eval ls ...``; when ``lm_eval.api.model`` is
executed, lm_eval's base ``LM`` gets a ``masked_span`` / ``next_sentence`` / ``masked_sensitivity`` method that
stops a run of a masked-LM task on a model that cannot serve it with a message naming ``--model hf-mlm``.

This module is the plugin's one place that patches lm_eval; every patch is listed in ``_HOOKS``.

If lm_eval's internals change, the hook does nothing and warns once how to use the plugin instead
(``--include_path "$(lm-eval-stereo tasks-path)"``); lm_eval itself keeps working. ``LM_EVAL_STEREO_AUTOLOAD=0``
disables the hook.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from types import ModuleType

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms at every interpreter start-up

if TYPE_CHECKING:  # this module runs at every interpreter start-up: import only what it needs at once
    from pathlib import Path
    from typing import Any

AUTOLOAD_ENV = "LM_EVAL_STEREO_AUTOLOAD"

#: plugin model names and their lazy ``module:Class`` targets
PLUGIN_MODELS: dict[str, str] = {
    "hf-mlm": "lm_eval_stereo.models.masked_lm:HFMaskedLM",
    "replay": "lm_eval_stereo.models.replay:ReplayLM",
}

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
    warnings.warn(
        f"lm-eval-stereo could not {what} with lm_eval {lm_eval_version} ({type(exc).__name__}: {exc}); "
        "its tasks and models are missing from this run. Use `lm-eval-stereo` instead of `lm_eval`, or "
        '`lm_eval --include_path "$(lm-eval-stereo tasks-path)" ...`.',
        PluginHookWarning,
        stacklevel=2,
    )


def _same_path(a: Any, b: Path) -> bool:
    from pathlib import Path

    try:
        return Path(a).resolve() == b
    except (TypeError, OSError):
        return False


def patch_task_manager(module: ModuleType) -> None:
    """Make ``module.TaskManager`` index the plugin's tasks before any user ``include_path``."""
    import inspect

    from lm_eval_stereo import tasks_path

    cls = module.TaskManager
    original = cls.__init__
    if getattr(original, "_lm_eval_stereo", False):
        return
    signature = inspect.signature(original)
    if "include_path" not in signature.parameters:
        raise TypeError("TaskManager.__init__ has no include_path parameter")
    ours = tasks_path().resolve()

    @functools.wraps(original)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        given = bound.arguments.get("include_path")
        paths = [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given]
        if not any(_same_path(p, ours) for p in paths):
            bound.arguments["include_path"] = [str(ours), *paths]
        original(*bound.args, **bound.kwargs)

    __init__._lm_eval_stereo = True  # type: ignore[attr-defined]
    cls.__init__ = __init__


def register_models(module: ModuleType | None = None) -> None:
    """Register the plugin models lazily next to lm_eval's built-in ones."""
    from lm_eval.api.registry import model_registry

    for name, target in PLUGIN_MODELS.items():
        if name not in model_registry:
            model_registry.register(name, target=target)


#: request types only masked-LM backends serve (see :mod:`lm_eval_stereo.models.masked_requests`)
MASKED_REQUEST_TYPES = ("masked_span", "next_sentence", "masked_sensitivity")


def _unsupported_request(request_type: str) -> Any:
    def method(self: Any, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        tasks = sorted({str(req.task_name) for req in requests if getattr(req, "task_name", None)})
        raise NotImplementedError(
            f"task(s) {', '.join(tasks) or '?'} make '{request_type}' requests (masked-LM scoring), which "
            f"{type(self).__name__} cannot serve: run them with --model hf-mlm --model_args pretrained=<masked LM>"
        )

    method.__name__ = request_type
    method.__doc__ = f"Default ``{request_type}``: only masked-LM backends (``--model hf-mlm``) implement it."
    return method


def patch_language_model(module: ModuleType) -> None:
    """Give lm_eval's base ``LM`` a clear-error method for each masked-LM request type it lacks."""
    for request_type in MASKED_REQUEST_TYPES:
        if not hasattr(module.LM, request_type):
            setattr(module.LM, request_type, _unsupported_request(request_type))


LISTINGS = {"list": "tasks", "list_groups": "groups", "list_subtasks": "subtasks", "list_tags": "tags"}


def listing_argv(argv: list[str]) -> list[str] | None:
    """``ls`` arguments for a legacy ``--tasks list...`` command line (keeping ``--include_path``), else None."""
    options: dict[str, str] = {}
    words = list(argv[1:] if argv[:1] == ["run"] else argv)
    while words:
        word = words.pop(0)
        if not word.startswith("--"):
            return None
        name, _, value = word.partition("=")
        options[name] = value if value else (words.pop(0) if words else "")
    what = LISTINGS.get(options.pop("--tasks", ""))
    if what is None or set(options) - {"--include_path"}:
        return None
    return ["ls", what] + (["--include_path", options["--include_path"]] if "--include_path" in options else [])


def patch_cli(module: ModuleType) -> None:
    """Translate ``lm_eval --tasks list`` (removed in 0.4.13) to ``lm_eval ls tasks``."""
    cls = module.HarnessCLI
    original = cls.parse_args
    if getattr(original, "_lm_eval_stereo", False):
        return

    @functools.wraps(original)
    def parse_args(self: Any, *args: Any, **kwargs: Any) -> Any:
        translated = listing_argv(sys.argv[1:])
        if translated is not None and "ls" in self._subparsers.choices:
            sys.argv[1:] = translated
        return original(self, *args, **kwargs)

    parse_args._lm_eval_stereo = True  # type: ignore[attr-defined]
    cls.parse_args = parse_args


_HOOKS = {
    "lm_eval.api.model": ("give models a clear error for masked-LM requests", patch_language_model),
    "lm_eval.tasks.manager": ("register its tasks", patch_task_manager),
    "lm_eval.models": ("register its models", register_models),
    "lm_eval._cli.harness": ("translate --tasks list", patch_cli),
}


def _run_hook(name: str, module: ModuleType) -> None:
    what, hook = _HOOKS[name]
    try:
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
    """Apply every hook now (used by the ``lm-eval-stereo`` console script, whatever the environment says)."""
    import importlib

    for name in _HOOKS:
        _run_hook(name, importlib.import_module(name))


def install() -> None:
    """Install the import hook unless disabled by ``LM_EVAL_STEREO_AUTOLOAD=0``."""
    if os.environ.get(AUTOLOAD_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return
    if any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
        return
    for name in _HOOKS:
        if name in sys.modules:
            _run_hook(name, sys.modules[name])
    sys.meta_path.insert(0, _PostImportFinder())


install()
