"""Fail-soft discovery hook for lm-evaluation-harness 0.4.13, which has no plugin mechanism.

``lm_eval_stereo_autoload.pth`` (installed into site-packages) imports this module at interpreter start-up. It only
installs an import hook: nothing of lm_eval is imported until the program itself imports it. When lm_eval's
``lm_eval.tasks.manager`` is executed, ``TaskManager`` is taught to index the plugin's task folder; when
``lm_eval.models`` is executed (it registers the built-in models), the plugin's models are registered beside them;
when ``lm_eval._cli.harness`` is executed, the pre-0.4.10 listing flags (``--tasks list``, ``list_groups``,
``list_subtasks``, ``list_tags``) are translated to 0.4.13's ``lm_eval ls ...``; when ``lm_eval.api.model`` is
executed, lm_eval's base ``LM`` gets a method per masked-LM request type (:data:`MASKED_REQUEST_TYPES`) that stops a
run of a masked-LM task on a model that cannot serve it with a message naming ``--model hf-mlm``; ``lm_eval.utils``'s
console table shortens long text metrics; lm_eval's API models (``lm_eval.models.api_models``,
``openai_completions``) and its ``evaluate`` get the served-model fixes of :mod:`lm_eval_stereo.models.served`,
``--use_cache`` the checks of :mod:`lm_eval_stereo.models.answer_cache`, its ``vllm`` backend those of
:mod:`lm_eval_stereo.models.vllm_engine`. With ``LM_EVAL_STEREO_ONLY_PLUGIN_TASKS=1`` the ``TaskManager`` indexes the
plugin's tasks and ``--include_path`` only, not lm_eval's own ~14,000 task files (start-up about 10 s faster on a
2-core CPU; lm_eval's own tasks are then unknown to that run).

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
#: ``1``: index only the plugin's tasks and ``--include_path`` (``TaskManager(include_defaults=False)``)
ONLY_PLUGIN_TASKS_ENV = "LM_EVAL_STEREO_ONLY_PLUGIN_TASKS"

#: plugin model names and their lazy ``module:Class`` targets
PLUGIN_MODELS: dict[str, str] = {
    "hf-mlm": "lm_eval_stereo.models.masked_lm:HFMaskedLM",
    "hf-prefix": "lm_eval_stereo.models.hf_prefix:HFPrefixLM",
    "replay": "lm_eval_stereo.models.replay:ReplayLM",
}

_warned = False


class PluginHookWarning(RuntimeWarning):
    """The plugin could not hook into this lm_eval version."""


class UnsupportedLmEval(RuntimeError):
    """The installed lm_eval is outside the supported range."""


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


def _same_path(a: Any, b: Path) -> bool:
    from pathlib import Path

    try:
        return Path(a).resolve() == b
    except (TypeError, OSError):
        return False


def patch_task_manager(module: ModuleType) -> None:
    """Make ``module.TaskManager`` index the plugin's tasks before any user ``include_path`` (and, with
    :data:`ONLY_PLUGIN_TASKS_ENV` set to ``1``, not lm_eval's own unless the caller asks for them)."""
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
    only_plugin = os.environ.get(ONLY_PLUGIN_TASKS_ENV) == "1" and "include_defaults" in signature.parameters

    @functools.wraps(original)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        given = bound.arguments.get("include_path")
        paths = [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given]
        if not any(_same_path(p, ours) for p in paths):
            bound.arguments["include_path"] = [str(ours), *paths]
        if only_plugin and "include_defaults" not in bound.arguments:
            bound.arguments["include_defaults"] = False
        original(*bound.args, **bound.kwargs)

    __init__._lm_eval_stereo = True  # type: ignore[attr-defined]
    cls.__init__ = __init__


def register_models(module: ModuleType | None = None) -> None:
    """Register the plugin models lazily next to lm_eval's built-in ones."""
    from lm_eval.api.registry import model_registry

    for name, target in PLUGIN_MODELS.items():
        if name not in model_registry:
            model_registry.register(name, target=target)


#: the lm_eval versions this plugin's hooks were written and tested for (pyproject.toml declares the same range)
SUPPORTED_LM_EVAL = ((0, 4, 13), (0, 5, 0))


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def check_lm_eval_version(module: ModuleType) -> None:
    """Warn once, when lm_eval is imported, if its version is outside :data:`SUPPORTED_LM_EVAL` (older versions keep
    the modules the other hooks wait for elsewhere, so those would never fire and never warn)."""
    from importlib.metadata import version

    found = version("lm_eval")
    low, high = SUPPORTED_LM_EVAL
    if not low <= _version_tuple(found) < high:
        raise UnsupportedLmEval(f"lm_eval {found} is not supported (lm-eval-stereo needs lm_eval >= 0.4.13, < 0.5)")


#: request types only masked-LM backends serve (see :mod:`lm_eval_stereo.core.masked_requests`)
MASKED_REQUEST_TYPES = ("masked_span", "masked_fill", "next_sentence", "shared_tokens", "masked_sensitivity")


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


#: encoder-only model types that transformers can load as a causal LM only with ``is_decoder=True``
ENCODER_MODEL_TYPES = frozenset(
    {"bert", "camembert", "data2vec-text", "electra", "ernie", "megatron-bert", "rembert", "roberta",
     "roberta-prelayernorm", "roc_bert", "xlm-roberta", "xlm-roberta-xl", "xmod"}
)  # fmt: skip
MASKED_LM_HINT = (
    "the plugin's log-likelihood tasks need a causal (decoder) LM; masked LMs (BERT, XLM-R, ...) run the masked-LM "
    "tasks with --model hf-mlm (e.g. --tasks stereoset_multi_mlm,gest_en_mlm)"
)


def patch_hf_causal_lm(module: ModuleType) -> None:
    """Clear errors where lm_eval's ``hf`` model would fail deep inside transformers: an encoder-only model loaded as
    a causal LM, and an empty-context request on a tokenizer with neither a BOS nor an EOS token."""
    cls = module.HFLM
    original_init, original_prefix = cls.__init__, cls.prefix_token_id
    if getattr(original_init, "_lm_eval_stereo", False):
        return

    @functools.wraps(original_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            original_init(self, *args, **kwargs)
        except ValueError as exc:
            if "Unrecognized configuration class" in str(exc):
                raise ValueError(f"{exc}\n--model {type(self).__name__}: {MASKED_LM_HINT}") from exc
            raise
        model = getattr(self, "_model", None)
        config = getattr(model, "config", None)
        causal = getattr(getattr(self, "AUTO_MODEL_CLASS", None), "__name__", "") == "AutoModelForCausalLM"
        if causal and getattr(config, "model_type", None) in ENCODER_MODEL_TYPES and not config.is_decoder:
            raise ValueError(
                f"{config.name_or_path or 'the model'} is an encoder-only {config.model_type} model: {MASKED_LM_HINT}"
            )

    def prefix_token_id(self: Any) -> int:
        token = original_prefix.fget(self)
        if token is None:
            raise ValueError(
                "the tokenizer has neither a BOS nor an EOS token, which lm_eval uses as the context of empty-context "
                "log-likelihood requests (e.g. StereoSet intrasentence): pass --model_args prefix_token_id=<id>, or "
                f"use a causal LM whose tokenizer defines one ({MASKED_LM_HINT})"
            )
        return token

    __init__._lm_eval_stereo = True  # type: ignore[attr-defined]
    cls.__init__ = __init__
    cls.prefix_token_id = property(prefix_token_id)


def patch_stderr(module: ModuleType) -> None:
    """Let an aggregation carry its own standard error: lm_eval asks ``stderr_for_metric(aggregation)`` for the
    ``<metric>_stderr`` field and knows only its built-in aggregations ("N/A" otherwise). A plugin aggregation with a
    ``bootstrap_stderr`` attribute (:meth:`lm_eval_stereo.core.summary.SharedSummary.aggregation`: the seeded
    bootstrap standard error of a metric with a CI) answers for itself."""
    original = module.stderr_for_metric
    if getattr(original, "_lm_eval_stereo", False):
        return

    @functools.wraps(original)
    def stderr_for_metric(metric: Any, bootstrap_iters: int) -> Any:
        own = getattr(metric, "bootstrap_stderr", None)
        if own is not None and bootstrap_iters > 0:
            return own
        return original(metric=metric, bootstrap_iters=bootstrap_iters)

    stderr_for_metric._lm_eval_stereo = True  # type: ignore[attr-defined]
    module.stderr_for_metric = stderr_for_metric


#: a text metric longer than this is shortened in lm_eval's console table; the results file keeps it whole
TABLE_TEXT_LIMIT = 60


def short_texts(result_dict: dict, column: str) -> dict:
    """``result_dict`` with every text metric of ``column`` longer than :data:`TABLE_TEXT_LIMIT` replaced by a note
    of its length (a copy; e.g. the stereotype-leakage ``association_table``, a JSON table of 960 cells)."""
    shortened = {
        task: {
            key: f"({len(value):,} characters: see the results file)"
            if "," in key and isinstance(value, str) and len(value) > TABLE_TEXT_LIMIT
            else value
            for key, value in metrics.items()
        }
        for task, metrics in result_dict.get(column, {}).items()
    }
    return {**result_dict, column: shortened}


#: ``LM_EVAL_STEREO_TABLE=full`` prints every metric of the plugin's tasks in lm_eval's console table
FULL_TABLE_VARIABLE = "LM_EVAL_STEREO_TABLE"


def compact(result_dict: dict, column: str) -> dict:
    """``result_dict`` with the plugin's tasks and groups of ``column`` reduced to their console-table metrics
    (:func:`lm_eval_stereo.core.metrics.table_metrics`: headlines with their stderr, qualifying counts); lm_eval's own
    tasks, and everything under ``LM_EVAL_STEREO_TABLE=full``, unchanged (a copy; the results file keeps all)."""
    if os.environ.get(FULL_TABLE_VARIABLE, "").strip().lower() == "full":
        return result_dict
    from lm_eval_stereo.core.metrics import table_metrics

    reduced = {}
    for task, metrics in result_dict.get(column, {}).items():
        names = table_metrics(task)
        if names is not None:
            keep = {*names, *(f"{name}_stderr" for name in names)}
            metrics = {key: value for key, value in metrics.items() if "," not in key or key.split(",")[0] in keep}
        reduced[task] = metrics
    return {**result_dict, column: reduced}


def patch_make_table(module: ModuleType) -> None:
    """Keep lm_eval's console table readable: the plugin's tasks show their headlines and qualifying counts
    (:func:`compact`), long text metrics are shortened (:func:`short_texts`)."""
    original = module.make_table
    if getattr(original, "_lm_eval_stereo", False):
        return

    @functools.wraps(original)
    def make_table(result_dict: dict, column: str = "results", sort_results: bool = False) -> str:
        shown = short_texts(compact(result_dict, column), column)
        return original(shown, column=column, sort_results=sort_results)

    make_table._lm_eval_stereo = True  # type: ignore[attr-defined]
    module.make_table = make_table


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


def check_output_path(path: str | None) -> None:
    """Stop before any model is loaded when ``--output_path`` cannot be written (lm_eval itself only logs a warning
    after the whole run and exits 0, losing the results)."""
    if not path:
        return
    import tempfile
    from pathlib import Path

    folder = Path(path).expanduser()
    folder = folder.parent if folder.suffix == ".json" else folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise SystemExit(
            f"lm-eval-stereo: --output_path {path} is not a writable folder ({exc.strerror or exc})"
        ) from None


def check_pretrained(model_args: Any) -> None:
    """Stop in one line (exit status 2) when ``--model_args pretrained=`` names a local folder that does not exist or
    holds no model (no ``config.json``, no adapter, no ``gguf_file``), before lm_eval takes it for a hub name."""
    from pathlib import Path

    from lm_eval_stereo.core.values import parse_model_args

    model_args = parse_model_args(model_args)
    pretrained = model_args.get("pretrained")
    if pretrained is None:
        return
    path = Path(pretrained)
    local = path.exists() or pretrained.startswith((".", "/", "~")) or pretrained.count("/") > 1
    if not local or "gguf_file" in model_args:
        return
    if not path.is_dir():
        problem = "a file, not a model folder" if path.exists() else "no such folder"
    elif not ((path / "config.json").is_file() or (path / "adapter_config.json").is_file()):
        problem = "not a model folder (no config.json in it)"
    else:
        return
    sys.stderr.write(f"lm-eval-stereo: --model_args pretrained={pretrained}: {problem}\n")
    raise SystemExit(2)


def patch_cli(module: ModuleType) -> None:
    """Translate ``lm_eval --tasks list`` (removed in 0.4.13) to ``lm_eval ls tasks``; check ``--output_path``, a
    local ``pretrained=`` folder and, for a served model, lm_eval's API packages and the server's ``base_url``; a task
    whose optional extra is missing ends the run in one line naming the extra (:mod:`lm_eval_stereo.core.extras`), and
    a data problem (:class:`lm_eval_stereo.core.errors.DataError`: a malformed file named by file, row and field, data
    that cannot be had) in one line saying it, not in a traceback."""
    cls = module.HarnessCLI
    original = cls.parse_args
    if getattr(original, "_lm_eval_stereo", False):
        return
    execute = cls.execute

    @functools.wraps(execute)
    def execute_or_name_the_extra(self: Any, *args: Any, **kwargs: Any) -> Any:
        from lm_eval_stereo.core.errors import DataError
        from lm_eval_stereo.core.extras import MissingExtraError

        try:
            return execute(self, *args, **kwargs)
        except (MissingExtraError, DataError) as exc:
            sys.stderr.write(f"lm-eval-stereo: {exc}\n")
            raise SystemExit(2) from None
        finally:
            engines = sys.modules.get("lm_eval_stereo.models.vllm_engine")
            if engines is not None:  # a vllm run: its engines shut down before the interpreter is torn down
                engines.shut_down_engines()

    @functools.wraps(original)
    def parse_args(self: Any, *args: Any, **kwargs: Any) -> Any:
        translated = listing_argv(sys.argv[1:])
        if translated is not None and "ls" in self._subparsers.choices:
            sys.argv[1:] = translated
        parsed = original(self, *args, **kwargs)
        check_output_path(getattr(parsed, "output_path", None))
        check_pretrained(getattr(parsed, "model_args", None))
        from lm_eval_stereo.models import served

        served.check_api_packages(getattr(parsed, "model", None))
        served.check_server(getattr(parsed, "model", None), getattr(parsed, "model_args", None))
        return parsed

    parse_args._lm_eval_stereo = True  # type: ignore[attr-defined]
    cls.parse_args = parse_args
    cls.execute = execute_or_name_the_extra


def _wrap(owner: Any, name: str, wrapper: Any) -> None:
    """Replace ``owner.name`` by ``wrapper(owner.name)`` once (a wrapper marks what it returns ``_lm_eval_stereo``);
    the attribute is read from ``owner``'s own namespace, so a static method stays recognisable."""
    original = vars(owner)[name] if isinstance(owner, type) else getattr(owner, name)
    if not getattr(getattr(original, "__func__", original), "_lm_eval_stereo", False):
        setattr(owner, name, wrapper(original))


def patch_model_api(module: ModuleType) -> None:
    """:func:`patch_language_model`, and make ``--use_cache`` hold one backend's answers and keep only answered
    requests of served models (:func:`lm_eval_stereo.models.answer_cache.caching_init_wrapper`)."""
    from lm_eval_stereo.models import answer_cache

    patch_language_model(module)
    _wrap(module.CachingLM, "__init__", answer_cache.caching_init_wrapper)


def patch_api_models(module: ModuleType) -> None:
    """lm_eval's API models (:mod:`lm_eval_stereo.models.served`): a generation request that fails after the retries,
    or whose content is null, gives an ``Unanswered`` empty text (counted per task) instead of ending the run."""
    from lm_eval_stereo.models import served

    cls = module.TemplateAPI
    if not isinstance(module.LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER, served.Unanswered):
        module.LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER = served.placeholder(module.LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER)
    _wrap(cls, "model_call", lambda original: served.retrying(original, asynchronous=False))
    _wrap(cls, "amodel_call", lambda original: served.retrying(original, asynchronous=True))
    _wrap(cls, "generate_until", served.generate_wrapper)
    _wrap(cls, "_loglikelihood_tokens", served.scoring_wrapper)


def patch_openai_completions(module: ModuleType) -> None:
    """Every class of lm_eval's ``openai_completions`` that builds requests or reads answers: no empty ``stop``, a
    seed per repeat, the text cut at the stop strings (:mod:`lm_eval_stereo.models.served`)."""
    from lm_eval_stereo.models import served

    wrappers = {"_create_payload": served.payload_wrapper, "parse_generations": served.parse_wrapper}
    for value in list(vars(module).values()):
        if isinstance(value, type):
            for name, wrapper in wrappers.items():
                if name in vars(value):
                    _wrap(value, name, wrapper)


def patch_vllm(module: ModuleType) -> None:
    """lm_eval's in-process ``vllm`` backend (:mod:`lm_eval_stereo.models.vllm_engine`): an engine that cannot start
    named in one line, a seed per sampled repeat, the engine shut down after the run (by :func:`patch_cli`)."""
    from lm_eval_stereo.models import vllm_engine

    _wrap(module.VLLM, "__init__", vllm_engine.init_wrapper)
    _wrap(module.VLLM, "generate_until", vllm_engine.generate_wrapper)


def patch_evaluator(module: ModuleType) -> None:
    """lm_eval's ``evaluate`` checks a served model before the run and counts its unanswered requests after it;
    ``simple_evaluate`` keeps credentials out of the results (:mod:`lm_eval_stereo.models.served`)."""
    from lm_eval_stereo.models import served

    _wrap(module, "evaluate", served.evaluate_wrapper)
    _wrap(module, "simple_evaluate", served.simple_evaluate_wrapper)


_HOOKS = {
    "lm_eval.evaluator_utils": ("report its bootstrap standard errors", patch_stderr),
    "lm_eval.utils": ("compact the console table of the plugin's tasks", patch_make_table),
    "lm_eval": ("start", check_lm_eval_version),
    "lm_eval.models.huggingface": ("explain models the hf backend cannot score", patch_hf_causal_lm),
    "lm_eval.api.model": ("give models a clear error for masked-LM requests", patch_model_api),
    "lm_eval.models.api_models": ("count unanswered requests of served models", patch_api_models),
    "lm_eval.models.openai_completions": ("send requests servers accept", patch_openai_completions),
    "lm_eval.evaluator": ("check a served model before the run", patch_evaluator),
    "lm_eval.models.vllm_causallms": ("start, seed and shut down vLLM engines", patch_vllm),
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
