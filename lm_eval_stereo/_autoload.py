"""Fail-soft start-up hook for lm-evaluation-harness 0.4.13, which has no plugin mechanism.

``lm_eval_stereo_autoload.pth`` (installed into site-packages) imports this module at interpreter start-up. It only
installs an import hook: nothing of lm_eval, and none of the hooks, is imported until the program itself imports it.
When one of the lm_eval modules named in :data:`HOOKS` has been executed, its hooks are installed: each wraps one
target of lm_eval (:func:`lm_eval_stereo.hooks.wrap`) with a function of :mod:`lm_eval_stereo.hooks` (one module per
lm_eval module the plugin changes, each saying what lm_eval 0.4.13 lacks there), or adds one name to its model
registry.

:data:`HOOKS` is the plugin's one list of what it changes in lm_eval: each row names the lm_eval module, the target,
the parameters it was written for, the change, what the plugin's tasks lose without it, and whom it changes (its
scope: lm_eval's own tasks get exactly what stock lm_eval gives, but for no credential on a console or in a file,
files inside ``--output_path``, a cache never reused across backends, and one line where lm_eval would end in a
trace). ``docs/ARCHITECTURE.md``'s table "What the plugin changes in lm_eval" is generated from it
(``scripts/hooks_table.py``). Nothing outside :mod:`lm_eval_stereo.hooks` writes onto lm_eval's objects.

Ready for lm_eval's next release: outside the supported versions (:data:`SUPPORTED_LM_EVAL`) no hook is installed and
one line says so; a target that is missing or whose parameters differ from those its hook was written for
(:func:`lm_eval_stereo.core.signatures.shape`) is left as it is and one line names it and what is lost; lm_eval
itself keeps working. ``LM_EVAL_STEREO_AUTOLOAD=0`` disables the hook; ``lm-eval-stereo`` (or ``lm_eval
--include_path "$(lm-eval-stereo tasks-path)"``) still runs the plugin's tasks.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

from lm_eval_stereo.core.signatures import PluginHookWarning

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms at every interpreter start-up

if TYPE_CHECKING:  # this module runs at every interpreter start-up: import only what it needs at once
    from typing import Any

__all__ = ["HOOKS", "PluginHookWarning", "activate", "enabled", "install"]

AUTOLOAD_ENV = "LM_EVAL_STEREO_AUTOLOAD"
#: the lm_eval versions the hooks were written and tested for (pyproject.toml declares the same range): low <= v < high
SUPPORTED_LM_EVAL = ((0, 4, 13), (0, 5, 0))
#: what to do about an lm_eval outside :data:`SUPPORTED_LM_EVAL`
SUPPORTED_ADVICE = "pip install 'lm-eval>=0.4.13,<0.5'"


class Hook:
    """One change to lm_eval (a row of :data:`HOOKS`)."""

    __slots__ = ("module", "target", "signature", "change", "loses", "scope")

    def __init__(self, module: str, target: str, signature: str, change: str, loses: str, scope: str) -> None:
        #: the lm_eval module whose import installs it
        self.module = module
        #: what it changes: a dotted path from ``lm_eval`` (``...model_registry[name]``: a name it adds)
        self.target = target
        #: the parameters of the target it was written for (:func:`lm_eval_stereo.core.signatures.shape`)
        self.signature = signature
        #: ``hooks_module:function`` under :mod:`lm_eval_stereo.hooks`: the wrapper factory
        #: (:func:`lm_eval_stereo.hooks.wrap`), or for a registered name the function that registers it
        self.change = change
        #: what the plugin's tasks lose without it
        self.loses = loses
        #: whom it changes
        self.scope = scope


#: every change the plugin makes to lm_eval, by the lm_eval module whose import installs it
HOOKS: tuple[Hook, ...] = (
    Hook(
        "lm_eval.tasks.manager",
        "lm_eval.tasks.manager.TaskManager.__init__",
        "self, verbosity, include_path, include_defaults, metadata",
        "tasks:task_manager_init",
        "found without --include_path (lm_eval has no entry point for a plugin's tasks)",
        "every TaskManager: the plugin's task folder added to its index; lm_eval's tasks indexed as before",
    ),
    Hook(
        "lm_eval.api.model",
        "lm_eval.api.model.CachingLM.__init__",
        "self, lm, cache_db",
        "answer_cache:caching_init_wrapper",
        "a --use_cache file read as data before lm_eval unpickles it, held to one backend and model, without "
        "unanswered requests",
        "every --use_cache run: a cache is never reused for another backend or model (one of the three changes to "
        "lm_eval's own tasks)",
    ),
    Hook(
        "lm_eval.evaluator",
        "lm_eval.evaluator.evaluate",
        "lm, task_dict, limit, samples, cache_requests, rewrite_requests_cache, bootstrap_iters, write_out, "
        "log_samples, system_instruction, apply_chat_template, fewshot_as_multiturn, verbosity, "
        "confirm_run_unsafe_code",
        "evaluator:evaluate_wrapper",
        "the plugin's view of the backend (stop strings cut, seed + k per sampled repeat, truncation marks, failed "
        "requests unanswered, served answers checked), the checks before the first request, their unanswered, "
        "cut_answers and requests_resent counts",
        "runs with the plugin's tasks: their requests go to the plugin's view of the backend, lm_eval's tasks' to the "
        "backend as given; a run without them on lm_eval's backends is lm_eval's (lm passed untouched); the plugin's "
        "own backends count for every task; every run: its backend recorded for the vLLM engine's shutdown",
    ),
    Hook(
        "lm_eval.evaluator",
        "lm_eval.evaluator.simple_evaluate",
        "model, model_args, tasks, num_fewshot, batch_size, max_batch_size, device, use_cache, cache_requests, "
        "rewrite_requests_cache, delete_requests_cache, limit, samples, bootstrap_iters, check_integrity, write_out, "
        "log_samples, evaluation_tracker, system_instruction, apply_chat_template, fewshot_as_multiturn, gen_kwargs, "
        "task_manager, verbosity, predict_only, random_seed, numpy_random_seed, torch_random_seed, "
        "fewshot_random_seed, confirm_run_unsafe_code, metadata",
        "evaluator:simple_evaluate_wrapper",
        "model arguments told from task options (a backend's argument refused as an unknown option), credentials "
        "kept out of the results, the vLLM engine shut down (some finished runs abort at exit, status 134)",
        "every run: credentials redacted from the results and log records, the vLLM engines it started shut down, "
        "a model that cannot load ends in one line instead of a trace; the model-argument keys are read by the "
        "plugin's tasks only",
    ),
    Hook(
        "lm_eval.evaluator_utils",
        "lm_eval.evaluator_utils.stderr_for_metric",
        "metric, bootstrap_iters",
        "console:stderr_wrapper",
        "their seeded bootstrap standard errors in <metric>_stderr ('N/A' instead)",
        "the plugin's aggregations only (those with a bootstrap_stderr); lm_eval's answered by lm_eval",
    ),
    Hook(
        "lm_eval.utils",
        "lm_eval.utils.make_table",
        "result_dict, column, sort_results",
        "console:table_wrapper",
        "a readable console table (dozens of rows per task, 960-cell texts)",
        "the plugin's tasks' and groups' rows only; lm_eval's rows printed as lm_eval prints them",
    ),
    Hook(
        "lm_eval._cli.harness",
        "lm_eval._cli.harness.HarnessCLI.execute",
        "self, args",
        "cli:execute_wrapper",
        "one line for a missing optional extra, an invalid task option or a data problem (a trace instead); "
        "credentials kept out of lm_eval's log records",
        "every lm_eval command: credentials replaced in log records; the plugin's own errors and lm_eval's missing "
        "API packages end in one line instead of a trace",
    ),
    Hook(
        "lm_eval._cli.harness",
        "lm_eval._cli.harness.HarnessCLI.parse_args",
        "self",
        "cli:parse_args_wrapper",
        "credentials of the command line kept out of lm_eval's warnings while it parses it",
        "every lm_eval command: the credentials of its command line replaced in the log records of its parsing (an "
        "argument given twice: lm_eval's warning prints both values)",
    ),
    Hook(
        "lm_eval._cli.run",
        "lm_eval._cli.run.print",
        "*args, sep, end, file, flush",
        "cli:print_wrapper",
        "credentials of --model_args kept out of lm_eval run's summary line",
        "every lm_eval run: the credentials of the run replaced in what it prints",
    ),
    Hook(
        "lm_eval.loggers.evaluation_tracker",
        "lm_eval.loggers.evaluation_tracker.sanitize_model_name",
        "model_name",
        "evaluation_tracker:model_folder_wrapper",
        "a model named .. (or only dots) writes one folder above --output_path",
        "every run: a name of dots only becomes underscores (files stay inside --output_path); other names as "
        "lm_eval writes them",
    ),
    Hook(
        "lm_eval.loggers.evaluation_tracker",
        "lm_eval.loggers.evaluation_tracker.EvaluationTracker.save_results_samples",
        "self, task_name, samples",
        "evaluation_tracker:samples_file_wrapper",
        "a task name with a path separator writes its samples outside --output_path; samples written whole (a full "
        "disk cuts them after a few items, exit status 0)",
        "every run: a / or \\ in a task's name becomes __ in its samples file's name; other names as lm_eval writes "
        "them; the file written whole or not at all, a failed write one line naming it (exit status 2)",
    ),
    Hook(
        "lm_eval.loggers.evaluation_tracker",
        "lm_eval.loggers.evaluation_tracker.EvaluationTracker.save_results_aggregated",
        "self, results, samples",
        "evaluation_tracker:results_file_wrapper",
        "a results file written whole (a full disk leaves half of one, an --output_path turned read-only none, "
        "exit status 0)",
        "every run: the file written whole or not at all, a failed write one line naming it and the reason (exit "
        "status 2, after the table)",
    ),
    *(
        Hook(
            "lm_eval.models",
            f"lm_eval.api.registry.model_registry[{name}]",
            "*aliases, target",
            "registry:register",
            f"--model {name} ({what})",
            "adds the name (lm_eval's extension point); changes none of lm_eval's",
        )
        for name, what in (
            ("hf-mlm", "the masked-LM backend, which the masked-LM tasks need"),
            ("hf-prefix", "the prefix-sharing causal backend"),
            ("replay", "the recorded-answers backend"),
            ("vllm-prefix", "the vLLM backend whose log-likelihood requests read the prefix cache"),
            ("local-completions-prefix", "the served completions backend that reads a vLLM server's prefix cache"),
        )
    ),
)

#: the lm_eval modules whose import runs a hook: ``lm_eval`` itself (the version check) and those of :data:`HOOKS`
TRIGGERS = frozenset({"lm_eval", *(hook.module for hook in HOOKS)})

#: None until lm_eval's version is read: then whether it is supported
_supported: bool | None = None
#: the targets whose hook has warned (each warns once)
_warned: set[str] = set()


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def supported() -> bool:
    """Whether the installed lm_eval is in :data:`SUPPORTED_LM_EVAL`; the first time it is not, one line says so."""
    global _supported
    if _supported is None:
        from importlib.metadata import PackageNotFoundError, version

        from lm_eval_stereo.core.signatures import warn_line

        try:
            found = version("lm_eval")
        except PackageNotFoundError:
            found = "?"
        low, high = SUPPORTED_LM_EVAL
        _supported = found != "?" and low <= _version_tuple(found) < high
        if not _supported:
            warn_line(
                f"lm_eval {found} is not supported (lm-eval-stereo needs lm_eval >= 0.4.13, < 0.5): none of the "
                f"plugin's changes to lm_eval is installed, and its tasks and models are missing from this run. "
                f"Install a supported version: {SUPPORTED_ADVICE}"
            )
    return _supported


def _warn(hook: Hook, problem: str) -> None:
    """One line, once per hook: ``hook`` is not installed, why, and what the plugin's tasks lose."""
    if hook.target in _warned:
        return
    _warned.add(hook.target)
    from lm_eval_stereo.core.signatures import warn_line

    warn_line(f"{hook.target} is left as lm_eval has it ({problem}): the plugin's tasks lose {hook.loses}")


def _owner(target: str) -> tuple[Any, str]:
    """The object that holds ``target``'s last name, and that name: the longest imported module the dotted path
    starts with, then attribute by attribute (``registry[name]``: the registry and the name)."""
    path, _, key = target.partition("[")
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:end]))
        if module is not None:
            break
    else:
        raise LookupError(f"{target}: no module of it is imported")
    owner: Any = module
    rest = parts[end:] if key else parts[end:-1]
    for name in rest:
        owner = getattr(owner, name)
    return owner, key.rstrip("]") if key else parts[-1]


def _install(hook: Hook) -> None:
    """Install ``hook`` where its target has the parameters it was written for; else one line (:func:`_warn`)."""
    import importlib

    from lm_eval_stereo.core.signatures import shape
    from lm_eval_stereo.hooks import original_of, wrap

    try:
        owner, name = _owner(hook.target)
        registering = hook.target.endswith("]")
        has = shape(owner.register if registering else original_of(owner, name))
    except (LookupError, AttributeError, KeyError, TypeError, ValueError) as exc:
        _warn(hook, f"not found: {type(exc).__name__}: {exc}")
        return
    if has != hook.signature:
        _warn(hook, f"its parameters are ({has}), the plugin was written for ({hook.signature})")
        return
    hooks_module, _, function = hook.change.partition(":")
    try:
        change = getattr(importlib.import_module(f"lm_eval_stereo.hooks.{hooks_module}"), function)
        if registering:
            change(owner, name)
        else:
            wrap(owner, name, change)
    except Exception as exc:  # noqa: BLE001 - fail soft: lm_eval must keep working
        _warn(hook, f"{type(exc).__name__}: {exc}")


def _run_hooks(name: str) -> None:
    """Install the hooks of the lm_eval module ``name`` (just executed), where lm_eval's version is supported."""
    if not supported():
        return
    for hook in HOOKS:
        if hook.module == name:
            _install(hook)


class _HookedLoader:
    """Runs the hooks right after the real loader executed the module (the import protocol needs no base class)."""

    def __init__(self, loader: Any, name: str) -> None:
        self._loader, self._name = loader, name

    def create_module(self, spec: Any) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _run_hooks(self._name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._loader, attr)


class _PostImportFinder:
    """Finds nothing itself; wraps the real loader of the lm_eval modules in :data:`TRIGGERS`."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in TRIGGERS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _HookedLoader(spec.loader, fullname)
                return spec
        return None


def _finder_installed() -> bool:
    return any(isinstance(finder, _PostImportFinder) for finder in sys.meta_path)


def activate() -> None:
    """Apply every hook now (used by the ``lm-eval-stereo`` console script, whatever the environment says). A hooked
    module that cannot be imported here (an optional backend's) gets its hooks when it is imported later, if ever:
    the import hook is installed for it."""
    import importlib

    for name in sorted(TRIGGERS, key=len):
        try:
            importlib.import_module(name)
        except ImportError:
            if not _finder_installed():
                sys.meta_path.insert(0, _PostImportFinder())
            continue
        _run_hooks(name)


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
        from lm_eval_stereo.core.signatures import warn_line

        warn_line(f"{exc}; the lm-eval-stereo hook stays on")
        return True


def install() -> None:
    """Install the import hook unless disabled by ``LM_EVAL_STEREO_AUTOLOAD=0``."""
    if not enabled() or _finder_installed():
        return
    for name in sorted(TRIGGERS, key=len):
        if name in sys.modules:
            _run_hooks(name)
    sys.meta_path.insert(0, _PostImportFinder())


install()
