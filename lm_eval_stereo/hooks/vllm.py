"""``lm_eval.models.vllm_causallms``: lm_eval 0.4.13's in-process ``vllm`` backend (``VLLM``) shows an engine that
cannot start as vLLM's traceback through three processes, gives every repeat of a sampled request the same seed, and
leaves its engine to vLLM's exit handlers, where some finished runs abort. These changes make it run the plugin's
protocols as the other backends run them (installed by :func:`install` when lm_eval imports the backend):

- start (:func:`init_wrapper`): an engine that cannot start (a model or ``--model_args`` vLLM rejects, an engine core
  that dies while loading) ends the run with one line naming ``--model vllm``, the model and vLLM's own reason,
  exit status 2, instead of vLLM's traceback through three processes;
- sampling (:func:`seeding_wrapper`): the k-th identical sampled request of a run (a task's ``repeats``: one prompt
  sent k times) carries ``seed + k`` (``seed``: the backend's ``--model_args seed=``, lm_eval's default 1234), as
  :mod:`lm_eval_stereo.hooks.api_models` seeds the served ones: the samples do not depend on how vLLM schedules the
  batch, and a repeated run gives the same texts;
- truncation (:func:`lm_eval_stereo.core.window.window_wrapper`): a log-likelihood request longer than
  ``max_model_len - 1`` tokens (vLLM generates one) is scored on its context cut from the left and marked, one whose
  continuation alone is that long is not scored (lm_eval: a raw ``AttributeError`` from ``_parse_logprobs``), both
  counted per task as ``truncated`` and shown as the report's caveat;
- shutdown (:func:`shut_down_engines_started_within`): when lm_eval's ``simple_evaluate`` returns (or raises), every
  engine the run started is shut down, and the engine client's daemon threads joined, while the interpreter is
  whole. Left to vLLM's
  ``weakref.finalize`` at exit, the engine client (its output thread, the thread that monitors the engine core
  process, and that process) is shut down only as the interpreter finalizes; a daemon thread that needs the
  GIL back once finalization has begun is ended by CPython with ``pthread_exit``, and where that unwinding crosses
  C++ frames the process ends in ``std::terminate``: ``terminate called without an active exception``, SIGABRT,
  exit status 134, after a finished run. It depends on timing, hence an abort in some runs only.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from lm_eval_stereo.core import window
from lm_eval_stereo.hooks import RepeatSeeds, fail, wrap

#: the backends started in this process and not shut down yet (weak: one that is gone needs no shutdown)
_ENGINES: weakref.WeakSet = weakref.WeakSet()
#: the backends started inside each open :func:`shut_down_engines_started_within` block, innermost last (held: a
#: backend ``simple_evaluate`` started is dropped when it returns, and vLLM's own finalizers would then shut it down
#: half, its client's output thread left running)
_BLOCKS: list[list[Any]] = []
#: vLLM's engine-client daemon threads (its output thread; the monitor of the engine core processes), which end once
#: the engine is shut down
CLIENT_THREADS = ("EngineCoreOutputQueueThread", "MPClientEngineMonitor")
#: seconds to wait for each of them
CLIENT_THREAD_TIMEOUT = 30.0
#: lm_eval's default ``seed`` of the vllm backend (``VLLM.__init__``)
DEFAULT_SEED = 1234


def _reason(exc: BaseException) -> str:
    """The innermost cause of ``exc`` in one line (vLLM wraps the engine core's error in ``RuntimeError``)."""
    while exc.__cause__ is not None and exc.__cause__ is not exc:
        exc = exc.__cause__
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def init_wrapper(original: Any) -> Any:
    """``VLLM.__init__`` that records the backend for :func:`shut_down_engines_started_within` and names an engine
    that cannot start in one line."""

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            original(self, *args, **kwargs)
        except (ImportError, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - any failure to start is named in one line, not a traceback
            model = kwargs.get("pretrained", args[0] if args else "?")
            fail(f"--model vllm: the vLLM engine could not start for pretrained={model} ({_reason(exc)})")
        self.__dict__["_lm_eval_stereo_seed"] = int(kwargs.get("seed", DEFAULT_SEED))
        _ENGINES.add(self)
        if _BLOCKS:
            _BLOCKS[-1].append(self)

    __init__._lm_eval_stereo = True  # type: ignore[attr-defined]
    return __init__


def seeded_requests(requests: list, base_seed: int) -> list:
    """``requests`` with the k-th identical sampled request (same context, same ``gen_kwargs``) carrying
    ``seed = base_seed + k`` (:class:`lm_eval_stereo.hooks.RepeatSeeds`); greedy requests and those that name a
    ``seed`` themselves are left as they are. lm_eval sends a request with ``repeats: n`` as the same ``Instance`` n
    times, so each sampled one is copied."""
    import copy

    seeds = RepeatSeeds()
    seeded = []
    for request in requests:
        context, gen_kwargs = request.args[0], request.args[1]
        if not isinstance(gen_kwargs, dict) or not gen_kwargs.get("do_sample") or "seed" in gen_kwargs:
            seeded.append(request)
            continue
        request = copy.copy(request)
        seed = seeds.next_seed(base_seed, context, gen_kwargs)
        request.arguments = (context, {**gen_kwargs, "seed": seed}, *request.args[2:])
        seeded.append(request)
    return seeded


def seeding_wrapper(original: Any) -> Any:
    """``VLLM.generate_until`` with a seed per repeat (:func:`seeded_requests`)."""

    @functools.wraps(original)
    def generate_until(self: Any, requests: list, *args: Any, **kwargs: Any) -> list:
        base = self.__dict__.get("_lm_eval_stereo_seed", DEFAULT_SEED)
        return original(self, seeded_requests(requests, base), *args, **kwargs)

    generate_until._lm_eval_stereo = True  # type: ignore[attr-defined]
    return generate_until


def _shut_down(backends: list[Any]) -> int:
    """Shut down the engine of each of ``backends`` (vLLM's ``engine_core.shutdown()``: the engine core and its workers
    stopped, the shutdown signal sent to the client's output thread) and, when no other engine of this process is
    left running, wait for the client's threads (:data:`CLIENT_THREADS`) to end; how many engines were shut down."""
    done = 0
    for backend in backends:
        llm = backend.__dict__.get("model")
        engine_core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
            done += 1
        _ENGINES.discard(backend)
    if done and not _ENGINES:  # the threads are named alike: a running engine's would never end
        for thread in threading.enumerate():
            if thread.name in CLIENT_THREADS and thread is not threading.current_thread():
                thread.join(CLIENT_THREAD_TIMEOUT)
    return done


@contextlib.contextmanager
def shut_down_engines_started_within() -> Iterator[None]:
    """Every vllm engine started inside the ``with`` block is shut down when the block ends, however it ends, while
    the interpreter is whole. lm_eval's ``simple_evaluate`` runs inside one (:mod:`lm_eval_stereo.hooks.evaluator`),
    so an engine a run started ends with the run, whether the run came from ``lm_eval``, ``lm-eval-stereo`` or a
    Python caller; an engine started before the block (a caller's own ``VLLM(...)`` passed as ``model=``) is left to
    the block it was started in (``bench/gpu.py`` starts its engines inside one)."""
    started: list[Any] = []
    _BLOCKS.append(started)
    try:
        yield
    finally:
        _BLOCKS.remove(started)
        _shut_down(started)


def install(module: ModuleType) -> None:
    """lm_eval's in-process ``vllm`` backend: an engine that cannot start named in one line, a seed per sampled
    repeat, requests longer than ``max_model_len`` counted, the backend recorded for
    :func:`shut_down_engines_started_within`."""
    wrap(module.VLLM, "__init__", init_wrapper)
    wrap(module.VLLM, "generate_until", seeding_wrapper)
    wrap(module.VLLM, "_loglikelihood_tokens", lambda original: window.window_wrapper(original, -1, "vllm"))
