"""``lm_eval.evaluator``: where a run meets its backend. lm_eval 0.4.13 has no extension point between a task's
requests and the backend that answers them, and its own backends cannot be re-registered: ``evaluate`` is where the
plugin's tasks get the plugin's view of the run's backend, and nothing else does.

``evaluate`` (:func:`evaluate_wrapper`), in a run that holds the plugin's tasks (tasks of its task class,
:func:`lm_eval_stereo.models.router.is_plugin_task`); a run without any on one of lm_eval's backends is lm_eval's,
``lm`` passed on untouched:

- before the first request, the checks the plugin's tasks need, each ending the run in one line where lm_eval would
  fail later, deep inside, or never: an encoder-only model loaded by ``hf`` as a causal LM (scored with its
  bidirectional attention, a transformers log warning the only sign; :func:`check_causal`); a served model no server
  answers for, or that cannot score the plugin's log-likelihood tasks
  (:func:`lm_eval_stereo.models.served_checks.check_served_run`);
- lm_eval's ``evaluate`` is handed a :class:`~lm_eval_stereo.models.router.PluginRouter` in place of ``lm``: the
  plugin's tasks' requests go to the plugin's view of the backend (:mod:`lm_eval_stereo.models.view`), lm_eval's
  tasks' requests to the backend as given;
- after it, the plugin's per-task counts lm_eval has no field for are written into the plugin's tasks' results:
  ``unanswered`` and ``cut_answers`` (:mod:`lm_eval_stereo.core.unanswered`), ``requests_resent``
  (:mod:`lm_eval_stereo.core.prefix_cache`); on a backend of the plugin's own (``replay``, ``vllm-prefix``,
  ``local-completions-prefix``: no stock lm_eval runs them), into every task's, whose requests are all the plugin's.

In every run, the backend is recorded for the shutdown of the vLLM engines the run started
(:mod:`lm_eval_stereo.core.engines`), the credentials it sends in its requests' headers are hidden from every log line,
and a ``base_url`` whose credentials lm_eval cannot send (user info with ``num_concurrent`` above 1) stops the run in
one line before its first request (:mod:`lm_eval_stereo.core.served_credentials`).

``simple_evaluate`` (:func:`simple_evaluate_wrapper`), in every run:

- ``--model_args api_key=...`` (or ``auth_token``, ``token``, ``header``, a ``base_url`` with ``user:key@`` or a key in
  its query), and a token inside ``--metadata`` (a judge's ``judge_model_args``), would reach ``config.model_args``,
  every ``configs.<task>.metadata`` of the results file, every samples line, the console table and every report made
  from them: they are redacted (:mod:`lm_eval_stereo.core.credentials`: the model arguments by name, then every text
  of the results and samples by value), and while it runs they are replaced in every log record (its own
  "Initializing ... with arguments" line among them), with the key the backend sends in its requests' headers
  (``evaluate``: :mod:`lm_eval_stereo.core.served_credentials`). No credential reaches a file or a console: one of the
  changes the plugin makes to lm_eval's own tasks too;
- lm_eval merges the model arguments into every task's metadata, where no task can tell them from ``--metadata``
  options: the keys the caller passed are held while it builds the tasks (:mod:`lm_eval_stereo.core.model_arguments`),
  so every one of them is accepted as a model argument by the plugin's tasks (lm_eval's tasks do not read them);
- ``simple_evaluate(model="vllm", ...)`` starts a vLLM engine and never shuts it down: left to vLLM's exit handlers,
  some finished runs abort (exit status 134, :mod:`lm_eval_stereo.core.engines` says why). Every engine it started
  is shut down when it returns or raises;
- a model lm_eval's backends cannot load ends in one line instead of a trace: a vLLM engine that cannot start (a
  model or ``--model_args`` vLLM rejects, an engine core that dies while loading: vLLM's traceback through three
  processes), a model type transformers cannot load as a causal LM (transformers' "Unrecognized configuration class",
  with no word of what to do).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections import Counter
from typing import Any

from lm_eval_stereo.core import engines, model_arguments, served_credentials
from lm_eval_stereo.core.credentials import (
    hidden,
    hidden_secrets,
    redact_deep,
    redact_mapping,
    redact_model_args,
    secrets_of,
)
from lm_eval_stereo.core.errors import fail
from lm_eval_stereo.core.model_types import ENCODER_MODEL_TYPES, MASKED_LM_HINT
from lm_eval_stereo.core.prefix_cache import add_resent_counts, reset_resent_counts
from lm_eval_stereo.core.unanswered import COUNTS_ATTRIBUTE, add_unanswered_counts, counting_model


def _tasks(task_dict: Any) -> dict[str, Any]:
    """The tasks of ``evaluate``'s ``task_dict`` by name (lm_eval's ``TaskDict``: its ``tasks``)."""
    return dict(task_dict.get("tasks", {})) if isinstance(task_dict, dict) and "tasks" in task_dict else {}


def check_causal(backend: Any) -> None:
    """Stop in one line when ``backend`` is lm_eval's ``hf`` holding an encoder-only model (BERT, XLM-R) loaded as a
    causal LM: transformers loads it without ``is_decoder=True``, and it would be scored with its bidirectional
    attention."""
    config = getattr(backend.__dict__.get("_model"), "config", None)
    causal = getattr(getattr(backend, "AUTO_MODEL_CLASS", None), "__name__", "") == "AutoModelForCausalLM"
    if causal and getattr(config, "model_type", None) in ENCODER_MODEL_TYPES and not config.is_decoder:
        fail(f"{config.name_or_path or 'the model'} is an encoder-only {config.model_type} model: {MASKED_LM_HINT}")


def evaluate_wrapper(original: Any) -> Any:
    """lm_eval's ``evaluate`` whose plugin tasks are checked, routed to the plugin's view of the backend and counted
    (see the module docstring); a run without them is lm_eval's."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def evaluate(*args: Any, **kwargs: Any) -> Any:
        from lm_eval_stereo.models.router import PluginRouter, backend_of, is_plugin_task
        from lm_eval_stereo.models.served_checks import check_served_run
        from lm_eval_stereo.models.view import is_plugin_backend

        bound = signature.bind(*args, **kwargs)
        lm = bound.arguments["lm"]
        backend = backend_of(lm)
        engines.record(backend)
        stop = served_credentials.before_first_request(backend)
        if stop is not None:
            fail(stop)
        tasks = _tasks(bound.arguments["task_dict"])
        ours = {name: task for name, task in tasks.items() if is_plugin_task(task)}
        own = is_plugin_backend(backend)  # the plugin's own backend: every task's requests are the plugin's
        if not ours and not own:
            return original(*bound.args, **bound.kwargs)
        if ours:
            check_causal(backend)
            check_served_run(lm, ours)
            bound.arguments["lm"] = PluginRouter(lm, frozenset(ours))
        model = counting_model(lm)
        if model is not None:
            model.__dict__[COUNTS_ATTRIBUTE] = Counter()
        reset_resent_counts(lm)
        results = original(*bound.args, **bound.kwargs)
        counted = tasks if own else ours
        add_unanswered_counts(lm, counted, results)
        add_resent_counts(lm, counted, results)
        return results

    return evaluate


def _raised_starting_vllm(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while lm_eval's ``VLLM.__init__`` (or a subclass's) ran: a frame of its traceback
    is an ``__init__`` of a ``VLLM`` backend."""
    import sys

    module = sys.modules.get("lm_eval.models.vllm_causallms")
    backend = getattr(module, "VLLM", None)
    trace = exc.__traceback__
    while backend is not None and trace is not None:
        frame = trace.tb_frame
        if frame.f_code.co_name == "__init__" and isinstance(frame.f_locals.get("self"), backend):
            return True
        trace = trace.tb_next
    return False


def _reason(exc: BaseException) -> str:
    """The innermost cause of ``exc`` in one line (vLLM wraps the engine core's error in ``RuntimeError``)."""
    while exc.__cause__ is not None and exc.__cause__ is not exc:
        exc = exc.__cause__
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _model_not_loaded(exc: Exception, model: str, model_args: Any) -> None:
    """One line (exit status 2) where ``exc`` is a model ``--model model`` could not load: a vLLM engine that could
    not start, a model type transformers cannot load as a causal LM; nothing otherwise."""
    from lm_eval_stereo.core.values import parse_model_args

    pretrained = parse_model_args(model_args).get("pretrained", "?")
    if _raised_starting_vllm(exc):
        fail(f"--model {model}: the vLLM engine could not start for pretrained={pretrained} ({_reason(exc)})")
    if isinstance(exc, ValueError) and "Unrecognized configuration class" in str(exc):
        fail(f"--model {model}: pretrained={pretrained}: {str(exc).splitlines()[0]}; {MASKED_LM_HINT}")


def _record_built_model(exc: BaseException) -> None:
    """Record the model ``simple_evaluate`` built (its local ``lm``, in its frame of ``exc``'s traceback) for the
    engines' shutdown, where the run ended before ``evaluate`` recorded it (a task that could not be built)."""
    trace = exc.__traceback__
    while trace is not None:
        frame = trace.tb_frame
        if frame.f_code.co_name == "simple_evaluate" and "lm" in frame.f_locals:
            from lm_eval_stereo.models.router import backend_of

            engines.record(backend_of(frame.f_locals["lm"]))
            return
        trace = trace.tb_next


def simple_evaluate_wrapper(original: Any) -> Any:
    """lm_eval's ``simple_evaluate`` whose results and log records carry no credentials, whose tasks know which keys
    of their metadata are model arguments, whose vLLM engines are shut down when it returns, and whose model that
    cannot load ends in one line (see the module docstring)."""
    signature = inspect.signature(original)
    default_model = signature.parameters["model"].default

    @functools.wraps(original)
    def simple_evaluate(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        model, given = bound.arguments.get("model", default_model), bound.arguments.get("model_args")
        # a model object (``model=lm``) was built from arguments this call never sees (a caller's TaskManager
        # metadata may carry them): they stay unknown, and only near misses of an option are refused; its engine is
        # its caller's to shut down
        built_here = isinstance(model, str)
        held = model_arguments.passing(given) if built_here else contextlib.nullcontext()
        started = engines.shut_down_engines_started_within() if built_here else contextlib.nullcontext()
        run_secrets = secrets_of(given) | secrets_of(bound.arguments.get("metadata") or {})
        with held, hidden(run_secrets), started:
            try:
                results = original(*bound.args, **bound.kwargs)
            except BaseException as exc:
                if built_here:
                    _record_built_model(exc)
                    if isinstance(exc, Exception) and not isinstance(exc, ImportError):
                        _model_not_loaded(exc, model, given)
                raise
            results = redact_deep(results, hidden_secrets())
        if not isinstance(results, dict):
            return results
        config = results.get("config")
        if isinstance(config, dict) and config.get("model_args"):
            config["model_args"] = redact_model_args(config["model_args"])
        for task_config in (results.get("configs") or {}).values():
            if isinstance(task_config, dict) and isinstance(task_config.get("metadata"), dict):
                task_config["metadata"] = redact_mapping(task_config["metadata"])
        return results

    return simple_evaluate
