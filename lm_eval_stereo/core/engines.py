"""vLLM engines a run started, shut down when the run ends, while the interpreter is whole.

lm_eval 0.4.13's ``simple_evaluate(model="vllm", ...)`` starts an in-process vLLM engine and never shuts it down. Left
to vLLM's ``weakref.finalize`` at exit, the engine client (its output thread, the thread that monitors the engine core
process, and that process) is shut down only as the interpreter finalizes; a daemon thread that needs the GIL back
once finalization has begun is ended by CPython with ``pthread_exit``, and where that unwinding crosses C++ frames the
process ends in ``std::terminate``: ``terminate called without an active exception``, SIGABRT, exit status 134, after
a finished run. It depends on timing, hence an abort in some runs only.

A backend is :func:`record`\\ ed into the innermost open :func:`shut_down_engines_started_within` block: by lm_eval's
``evaluate`` (:mod:`lm_eval_stereo.hooks.evaluator`), and by the plugin's own ``vllm-prefix`` as it starts. lm_eval's
``simple_evaluate`` opens a block where it builds the model itself (a ``--model`` name, not a model object), so an
engine a run started ends with the run, whether the run came from ``lm_eval``, ``lm-eval-stereo`` or a Python caller;
a caller's own ``VLLM(...)`` passed as ``model=`` is left to the caller's block (``bench/gpu.py`` opens one).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from typing import Any

#: the backends recorded in this process and not shut down yet (weak: one that is gone needs no shutdown)
_ENGINES: weakref.WeakSet = weakref.WeakSet()
#: the backends recorded inside each open :func:`shut_down_engines_started_within` block, innermost last (held: a
#: backend ``simple_evaluate`` started is dropped when it returns, and vLLM's own finalizers would then shut it down
#: half, its client's output thread left running)
_BLOCKS: list[list[Any]] = []
#: vLLM's engine-client daemon threads (its output thread; the monitor of the engine core processes), which end once
#: the engine is shut down
CLIENT_THREADS = ("EngineCoreOutputQueueThread", "MPClientEngineMonitor")
#: seconds to wait for each of them
CLIENT_THREAD_TIMEOUT = 30.0


def engine_core(backend: Any) -> Any:
    """The vLLM engine core of an lm_eval ``vllm`` backend (``backend.model.llm_engine.engine_core``), else None."""
    llm = getattr(backend, "__dict__", {}).get("model")
    return getattr(getattr(llm, "llm_engine", None), "engine_core", None)


def record(backend: Any) -> None:
    """Record ``backend`` for the innermost open block, where it runs a vLLM engine and is not recorded yet."""
    if not _BLOCKS or engine_core(backend) is None or any(backend is held for held in _BLOCKS[-1]):
        return
    _ENGINES.add(backend)
    _BLOCKS[-1].append(backend)


def _shut_down(backends: list[Any]) -> int:
    """Shut down the engine of each of ``backends`` (vLLM's ``engine_core.shutdown()``: the engine core and its workers
    stopped, the shutdown signal sent to the client's output thread) and, when no other engine of this process is
    left running, wait for the client's threads (:data:`CLIENT_THREADS`) to end; how many engines were shut down."""
    done = 0
    for backend in backends:
        core = engine_core(backend)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()
            done += 1
        _ENGINES.discard(backend)
    if done and not _ENGINES:  # the threads are named alike: a running engine's would never end
        for thread in threading.enumerate():
            if thread.name in CLIENT_THREADS and thread is not threading.current_thread():
                thread.join(CLIENT_THREAD_TIMEOUT)
    return done


@contextlib.contextmanager
def shut_down_engines_started_within() -> Iterator[None]:
    """Every vLLM engine :func:`record`\\ ed inside the ``with`` block is shut down when the block ends, however it
    ends, while the interpreter is whole."""
    started: list[Any] = []
    _BLOCKS.append(started)
    try:
        yield
    finally:
        _BLOCKS.remove(started)
        _shut_down(started)
