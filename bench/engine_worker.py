"""One process of :mod:`bench.bench_engines` that holds one or more setups' models and runs their rows on command
(``python -m bench.engine_worker SETUPS MODEL``, with the vLLM venv's interpreter for the in-process vLLM setups, the
dev venv's for the others).

SETUPS (JSON): a list of ``{"name": LABEL, "model": NAME, ...}``: NAME ``hf`` or ``hf-prefix`` (batch size
:data:`HF_BATCH_SIZE`; in one process the two share the weights), ``vllm`` or ``vllm-prefix`` (``batch_size auto``,
``max_model_len`` :data:`MAX_MODEL_LEN`; ``"order": "by length"``: the ``vllm-prefix`` engine of the same process sent
in lm_eval's order, longest request first, instead of the sorted token sequences), or ``local-completions`` and
``local-completions-prefix`` with ``"url"`` and ``"concurrency"``. The models are built once, before the first command
(not timed); then it prints ``{"ready": true}``.

Each command on stdin (one JSON line: ``{"setup": LABEL, "row": ROW, "tasks": [...], "limit": N}``) runs
``lm_eval.simple_evaluate`` once; an in-process vLLM engine's prefix cache is emptied first (a server's is emptied by
the caller). The answer, one JSON line: the seconds end to end and of the log-likelihood phase (the model's
``loglikelihood`` calls), the prompt tokens computed and read from a cache where this process can count them
(``vllm-prefix``: its own counts; ``hf-prefix``: its packed rows; ``hf`` and ``vllm``: every request's tokens; served:
null, the caller reads the server's ``/metrics``), every request's log-likelihood, the float metrics, the documents
``hf`` flags for a token boundary, and the re-sent requests. Answers go to the process's original stdout; everything
else printed (vLLM's logs included) goes to stderr, so the caller reads answers only. stdin closed: every engine is
shut down and the process ends.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from typing import Any

#: the engines' window (the vLLM tier's); requests are far shorter
MAX_MODEL_LEN = 1024
HF_BATCH_SIZE = 16
#: a request's value in the answers: ``task|doc_id|n``
KEY = "{task}|{doc}|{n}"


def build(setups: list[dict], model: str) -> dict[str, Any]:
    """Label -> lm_eval model: one per distinct model and server (``order`` shares its ``vllm-prefix`` engine)."""
    from lm_eval.api.registry import get_model

    built: dict[tuple, Any] = {}
    for setup in sorted(setups, key=lambda s: s["model"] != "hf"):  # hf first: hf-prefix shares its weights
        key = (setup["model"], setup.get("url"), setup.get("concurrency"))
        if key in built:
            continue
        name = setup["model"]
        if name == "hf":
            built[key] = get_model(name)(pretrained=model, dtype="float32", device="cpu", batch_size=HF_BATCH_SIZE)
        elif name == "hf-prefix":
            hf = built.get(("hf", None, None))
            weights = {"pretrained": hf.model, "tokenizer": hf.tokenizer} if hf else {"pretrained": model}
            built[key] = get_model(name)(**weights, dtype="float32", device="cpu", batch_size=HF_BATCH_SIZE)
        elif "url" in setup:
            built[key] = get_model(name)(model=model, base_url=setup["url"], tokenizer=model,
                                         tokenizer_backend="huggingface", num_concurrent=setup["concurrency"],
                                         max_length=MAX_MODEL_LEN)  # fmt: skip
        else:
            built[key] = get_model(name)(pretrained=model, dtype="float32", max_model_len=MAX_MODEL_LEN,
                                         enforce_eager=True, batch_size="auto")  # fmt: skip
    return {s["name"]: built[(s["model"], s.get("url"), s.get("concurrency"))] for s in setups}


def by_length(inputs: list[list[int]]) -> list[int]:
    """lm_eval's own order of log-likelihood requests: longest first."""
    return sorted(range(len(inputs)), key=lambda i: (-len(inputs[i]), inputs[i]))


def tokens_of(setup: dict, lm: Any, requests: list, counted_before: dict) -> list[int] | None:
    """[prompt tokens computed, read from a cache] by one run (see the module docstring); None for a served setup."""
    if "url" in setup:
        return None
    if setup["model"] == "vllm-prefix":
        sent = lm.prompt_tokens["sent"] - counted_before.get("sent", 0)
        cached = lm.prompt_tokens["cached"] - counted_before.get("cached", 0)
        return [sent - cached, cached]
    if setup["model"] == "hf-prefix":
        return [sum(len(row) for row in lm.pack(lm.token_requests(requests))), 0]
    return [sum(len(context) + len(continuation) for _, context, continuation in requests), 0]


def boundary_flagged(samples: dict) -> list[str]:
    """``task|doc_id`` of the documents flagged for a token boundary (:func:`bench.bench_scoring.boundary_flagged`):
    there ``hf-prefix`` scores the reference's tokens, so their numbers differ from ``hf``'s by design."""
    from bench.bench_scoring import boundary_flagged as flagged_documents

    return sorted(f"{task}|{doc}" for task, doc in flagged_documents({"samples": samples}))


class Timed:
    """The time an lm_eval model spends in ``loglikelihood`` and the token requests its ``_loglikelihood_tokens``
    receives, counted where the run calls them: on the model itself, or on the plugin's view of it
    (:func:`lm_eval_stereo.models.view.view_of`: an object of a subclass sharing the model's ``__dict__``, to which
    lm_eval's router sends the plugin's tasks' requests). The two methods are wrapped on both classes (the wrappers find
    the model's :class:`Timed` by its ``__dict__``), not set on the instance: an instance attribute would be shared by
    the view and bypass its methods. Nested calls (a method calling its parent's) are counted once."""

    #: ``id`` of a model's ``__dict__`` (shared by its view) -> its Timed
    of_state: dict[int, Timed] = {}

    def __init__(self, lm: Any) -> None:
        from lm_eval_stereo.models.view import view_of

        self.seconds = 0.0
        self.requests: list = []
        self.inside: set[str] = set()
        Timed.of_state[id(lm.__dict__)] = self
        for cls in (type(view_of(lm)), type(lm)):  # the view's class made (and checked) before its parent is wrapped
            for name, wrapper in (("loglikelihood", timed), ("_loglikelihood_tokens", recording)):
                if "bench_wrapped" not in getattr(cls.__dict__.get(name), "__dict__", {}):
                    setattr(cls, name, wrapper(getattr(cls, name)))

    def clear(self) -> None:
        self.seconds, self.requests = 0.0, []


def outermost(name: str, method: Any, around: Any) -> Any:
    """``method`` wrapped so that ``around(timing, call, requests)`` runs for the outermost call on a model with a
    :class:`Timed` (``name`` tells nested calls apart); any other call goes straight through."""

    @functools.wraps(method)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        timing = Timed.of_state.get(id(self.__dict__))
        if timing is None or name in timing.inside:
            return method(self, *args, **kwargs)
        timing.inside.add(name)
        try:
            requests = args[0] if args else kwargs.get("requests")
            return around(timing, lambda: method(self, *args, **kwargs), requests)
        finally:
            timing.inside.discard(name)

    wrapped.bench_wrapped = True
    return wrapped


def timed(method: Any) -> Any:
    def around(timing: Timed, call: Any, requests: list) -> Any:
        start = time.perf_counter()
        try:
            return call()
        finally:
            timing.seconds += time.perf_counter() - start

    return outermost("loglikelihood", method, around)


def recording(method: Any) -> Any:
    def around(timing: Timed, call: Any, requests: list) -> Any:
        timing.requests.extend(requests)
        return call()

    return outermost("_loglikelihood_tokens", method, around)


def run_once(setup: dict, lm: Any, timing: Timed, command: dict, manager: Any) -> dict:
    """One ``simple_evaluate`` of ``command``'s row with ``setup``'s model (see the module docstring)."""
    import lm_eval

    if setup["model"] == "vllm-prefix":
        lm.dispatch_order = by_length if setup.get("order") == "by length" else type(lm).dispatch_order
    if setup["model"].startswith("vllm"):
        lm.model.reset_prefix_cache()
    counted = dict(getattr(lm, "prompt_tokens", None) or {})
    timing.clear()
    start = time.perf_counter()
    results = lm_eval.simple_evaluate(model=lm, tasks=command["tasks"], limit=command["limit"], task_manager=manager,
                                      bootstrap_iters=0, log_samples=True)  # fmt: skip
    seconds = time.perf_counter() - start
    values = {
        KEY.format(task=task, doc=sample["doc_id"], n=n): float(response[0][0])
        for task, samples in results["samples"].items()
        for sample in samples
        for n, response in enumerate(sample["resps"])
    }
    metrics = {task: {k: v for k, v in m.items() if isinstance(v, float)} for task, m in results["results"].items()}
    resent = sum(
        value for m in results["results"].values() for k, value in m.items() if k.startswith("requests_resent")
    )
    return {"seconds": seconds, "ll_seconds": timing.seconds, "tokens": tokens_of(setup, lm, timing.requests, counted),
            "values": values, "metrics": metrics, "flagged": boundary_flagged(results["samples"]),
            "groups": results.get("group_subtasks", {}),
            "resent": int(resent)}  # fmt: skip


def serve(setups: list[dict], model: str, answers: Any) -> None:
    """Build the models, then answer the commands on stdin until it closes."""
    from lm_eval.tasks import TaskManager

    def answer(message: dict) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    models = build(setups, model)
    timings = {id(lm): Timed(lm) for lm in models.values()}
    manager = TaskManager(include_defaults=False, metadata={"pretrained": model})
    by_name = {setup["name"]: setup for setup in setups}
    answer({"ready": True})
    for line in sys.stdin:
        command = json.loads(line)
        lm = models[command["setup"]]
        answer(run_once(by_name[command["setup"]], lm, timings[id(lm)], command, manager))


def main(setups: list[dict], model: str) -> None:
    """:func:`serve`, every vLLM engine it starts shut down when it ends (:mod:`lm_eval_stereo.core.engines`)."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # everything else printed, by this process and the engines it starts, goes to the log
    sys.stdout = sys.stderr
    from lm_eval_stereo.core.engines import shut_down_engines_started_within

    with shut_down_engines_started_within():
        serve(setups, model, answers)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]), sys.argv[2])
