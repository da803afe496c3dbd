"""The test session's one in-process vLLM engine, serving ``lm_eval`` runs one after the other (run with the vLLM venv's
interpreter by :mod:`vllm_engine`: ``python vllm_engine_server.py MODEL_ARGS``).

It starts with the plugin's start-up hook off (``LM_EVAL_STEREO_AUTOLOAD=0``: nothing of lm_eval changed) and builds
``vllm-prefix`` with ``MODEL_ARGS`` (SmolLM2, float32, ``max_model_len``, eager), whose engine, a real ``vllm.LLM``,
is then the engine of every run: each run is lm_eval's own command line (``lm_eval.__main__.cli_evaluate``) in this
process, with its arguments, environment, working folder and output files. A run with the plugin (the default) has
the plugin's hooks installed first (:func:`lm_eval_stereo._autoload.activate`, once: from then on every run has
them); a run of stock lm_eval (``"plugin": false``) is refused once they are, so the session's stock runs come first
(``conftest.py`` puts their file first in the vLLM tier). Each run builds its backend (``--model vllm`` or ``--model
vllm-prefix``) as a fresh ``lm_eval`` would, except that the backend's ``vllm.LLM(...)`` is this engine
(:func:`shared_llm`) when the run asks
for the same engine: the same model and engine arguments but for ``block_size`` and ``enable_prefix_caching`` (the
engine has vllm-prefix's, which lm_eval's ``vllm`` scoring skips) and a ``max_model_len`` no larger than the engine's
(the backend's window is its own ``max_length``, which lm_eval and the plugin read; the engine takes the longer
prompts it is never sent). A run that asks for another engine gets one of its own (one that cannot start ends the run
as it would end a fresh ``lm_eval``).

The backend holds the engine through :class:`SharedEngine`, whose ``llm_engine.engine_core`` is None, so that the
plugin's shut-down of the engines a run started (when ``simple_evaluate`` returns) leaves the session's engine
running; this server shuts it down when its input ends, then exits at once.

Protocol (one JSON object per line): ``{"ready": true}`` on stdout once the engine is up (``false`` and the error if
it could not start; the server then ends); then per line on stdin a run (``argv``: lm_eval's arguments, ``cwd``,
``env``, ``stdout``, ``stderr``: file paths, ``reset_prefix_cache``: empty the prefix cache first, ``plugin``: the
plugin's hooks installed, default true), answered by
``{"status": ..., "prompt_tokens": {...}}``: the exit status a fresh ``lm_eval`` would have had, and the prompt tokens
the run's ``vllm-prefix`` backend sent and read from the cache (``sent``, ``cached``; none for ``vllm``).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Any

#: engine arguments a run may give otherwise and still share the engine (see the module docstring)
SHARED_DESPITE = ("block_size", "enable_prefix_caching")

#: the session's engine and the arguments it was started with (set by the first :func:`shared_llm` call)
_engine: dict[str, Any] = {}
#: the backends built by the current run (their prompt-token counts are its answer)
_built: list[Any] = []
#: whether the plugin's hooks are installed (they cannot be taken out again)
_plugin: dict[str, bool] = {"installed": False}
#: a run's exit status where it was refused
REFUSED = 3


class _EngineCoreHidden:
    """The engine's ``llm_engine`` without its ``engine_core``: what the plugin shuts down at the end of a run."""

    engine_core = None

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


class SharedEngine:
    """The session's ``vllm.LLM`` as one run's backend holds it: every method and attribute the engine's, but the
    engine core hidden from the plugin's shut-down (:class:`_EngineCoreHidden`)."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    @property
    def llm_engine(self) -> _EngineCoreHidden:
        return _EngineCoreHidden(self._llm.llm_engine)


def shares_the_engine(asked: dict[str, Any], started: dict[str, Any]) -> bool:
    """Whether a backend's engine arguments ``asked`` can be served by the engine ``started`` with its own."""
    others = set(asked) | set(started)
    for name in others - {*SHARED_DESPITE, "max_model_len"}:
        if asked.get(name) != started.get(name):
            return False
    asked_len, started_len = asked.get("max_model_len"), started.get("max_model_len")
    return asked_len is not None and started_len is not None and asked_len <= started_len


def shared_llm(real_llm: type) -> Any:
    """A stand-in for the ``vllm.LLM`` class in lm_eval's ``vllm`` backend module: the first call starts the engine,
    later calls that :func:`shares_the_engine` get it (:class:`SharedEngine`), the others an engine of their own."""

    def build(**kwargs: Any) -> Any:
        if not _engine:
            _engine.update(llm=real_llm(**kwargs), kwargs=kwargs)
        elif not shares_the_engine(kwargs, _engine["kwargs"]):
            return real_llm(**kwargs)
        return SharedEngine(_engine["llm"])

    return build


def record_backends(backend_class: type) -> None:
    """Every backend built from now on is recorded in :data:`_built` (its prompt-token counts)."""
    original = backend_class.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _built.append(self)
        original(self, *args, **kwargs)

    backend_class.__init__ = __init__


def start(model_args: str) -> None:
    """Build ``vllm-prefix`` with ``model_args``, which starts the session's engine (the class itself: its name is
    registered by the plugin's hooks, not installed yet)."""
    import lm_eval.models.vllm_causallms as vllm_causallms

    from lm_eval_stereo.models.vllm_prefix import VLLMPrefix

    vllm_causallms.LLM = shared_llm(vllm_causallms.LLM)
    record_backends(vllm_causallms.VLLM)
    VLLMPrefix.create_from_arg_string(model_args, {"batch_size": "auto"})
    _built.clear()


def with_the_plugin(wanted: bool) -> str:
    """Install the plugin's hooks where a run wants them and they are not yet; why a run cannot be served, or ""."""
    if wanted and not _plugin["installed"]:
        from lm_eval_stereo._autoload import activate

        activate()
        _plugin["installed"] = True
    if not wanted and _plugin["installed"]:
        return (
            "a run of stock lm_eval after the plugin's hooks were installed in this server (they cannot be taken "
            "out): the session's stock runs must come first (conftest.FIRST_ON_THE_ENGINE)"
        )
    return ""


def redirect(request: dict) -> list[int]:
    """fds 1 and 2 to the run's files (one file for both where they are the same); the saved fds."""
    saved = [os.dup(1), os.dup(2)]
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        if fd == 2 and path == request["stdout"]:
            os.dup2(1, 2)
            continue
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    return saved


def run(request: dict) -> dict:
    """One ``lm_eval`` command line on the session's engine (see the module docstring)."""
    from lm_eval.__main__ import cli_evaluate

    refused = with_the_plugin(request.get("plugin", True))
    if refused:
        with open(request["stderr"], "w", encoding="utf-8") as err:
            print(refused, file=err)
        return {"status": REFUSED, "prompt_tokens": {}}
    if request.get("reset_prefix_cache"):
        _engine["llm"].reset_prefix_cache()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = ["lm_eval", *request["argv"]]
    _built.clear()
    saved = redirect(request)
    status = 0
    try:
        cli_evaluate()
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - an uncaught exception: the traceback and status 1, as a fresh process
        import traceback

        traceback.print_exc()
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    tokens: Counter = Counter()
    for backend in _built:
        tokens.update(getattr(backend, "prompt_tokens", {}))
    _built.clear()
    return {"status": status, "prompt_tokens": dict(tokens)}


def shut_down() -> None:
    """The session's engine shut down (its engine core and the client's threads), while the interpreter is whole."""
    import threading

    llm = _engine.get("llm")
    if llm is not None:
        llm.llm_engine.engine_core.shutdown()
        for thread in threading.enumerate():
            if thread.name in ("EngineCoreOutputQueueThread", "MPClientEngineMonitor"):
                thread.join(30)


def serve(model_args: str) -> int:
    """Start the engine, serve the runs until the input ends, shut the engine down; the exit status."""
    answers = os.fdopen(os.dup(1), "w")  # the protocol's own stdout
    os.dup2(2, 1)  # what vLLM and the runs print goes to the log (each run's files while it runs)
    try:
        start(model_args)
    except BaseException as exc:  # noqa: BLE001 - the caller shows it with the server's log
        print(json.dumps({"ready": False, "error": repr(exc)}), file=answers, flush=True)
        return 1
    print(json.dumps({"ready": True}), file=answers, flush=True)
    for line in sys.stdin:
        print(json.dumps(run(json.loads(line))), file=answers, flush=True)
    shut_down()
    return 0


if __name__ == "__main__":
    status = serve(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # the engine is shut down: no need of the interpreter's finalisation of vLLM and torch
