"""One setup of :mod:`bench.bench_vllm` in a process of its own (``python -m bench.vllm_worker SETUP ROWS REPETITIONS MODEL``,
run with the vLLM venv's interpreter for the in-process vLLM setups, the dev venv's for the others): the model is
built once (not timed), then every row is run once as a warm-up and ``REPETITIONS`` times timed through
``lm_eval.simple_evaluate``; printed as one JSON line per row: the seconds end to end and of the log-likelihood phase
(the model's ``loglikelihood`` calls), the prompt tokens the model computed and read from a cache, the log-likelihood
of every request, and the metrics.

A setup (JSON): ``{"model": NAME}`` with NAME ``hf`` or ``hf-prefix`` (batch size 16), ``vllm`` or ``vllm-prefix``
(``batch_size auto``; ``"order": "by length"``: lm_eval's order, longest first, instead of the sorted token
sequences), or ``local-completions`` or ``local-completions-prefix`` with ``"url"`` and ``"concurrency"``. A vLLM cache is emptied before each run, so that no run reads what an earlier one left.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from typing import Any

MAX_MODEL_LEN = 1024


def build(setup: dict, model: str) -> Any:
    """The lm_eval model of ``setup``."""
    from lm_eval.api.registry import get_model

    name = setup["model"]
    if name in ("hf", "hf-prefix"):
        return get_model(name)(pretrained=model, dtype="float32", device="cpu", batch_size=16)
    if "url" in setup:
        return get_model(name)(model=model, base_url=setup["url"], tokenizer=model, tokenizer_backend="huggingface",
                               num_concurrent=setup["concurrency"], max_length=MAX_MODEL_LEN)  # fmt: skip
    engine = {"dtype": "float32", "max_model_len": MAX_MODEL_LEN, "enforce_eager": True, "batch_size": "auto"}
    lm = get_model(name)(pretrained=model, **engine)
    if setup.get("order") == "by length":
        lm.dispatch_order = lambda inputs: sorted(range(len(inputs)), key=lambda i: (-len(inputs[i]), inputs[i]))
    return lm


def metrics(url: str) -> dict[str, float]:
    """A vLLM server's prompt-token and prefix-cache-hit counters."""
    with urllib.request.urlopen(url.rsplit("/v1/", 1)[0] + "/metrics", timeout=30) as response:
        lines = response.read().decode().splitlines()
    wanted = {"vllm:prompt_tokens_total": "prompt", "vllm:prefix_cache_hits_total": "cached"}
    found = {"prompt": 0.0, "cached": 0.0}
    for line in lines:
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in wanted:
            found[wanted[name]] += float(line.rsplit(" ", 1)[1])
    return found


def reset_cache(setup: dict, lm: Any) -> None:
    """Empty the vLLM prefix cache of ``setup`` (a server's needs ``VLLM_SERVER_DEV_MODE=1``)."""
    if "url" in setup:
        request = urllib.request.Request(setup["url"].rsplit("/v1/", 1)[0] + "/reset_prefix_cache", method="POST")
        urllib.request.urlopen(request, timeout=30).close()
    elif setup["model"].startswith("vllm"):
        lm.model.reset_prefix_cache()


def counters(setup: dict, lm: Any) -> dict[str, float]:
    """The cumulative prompt tokens sent (``prompt``) and read from the cache (``cached``) where they are counted."""
    if "url" in setup:
        return metrics(setup["url"])
    counted = getattr(lm, "prompt_tokens", None) or {}
    return {"prompt": float(counted.get("sent", 0)), "cached": float(counted.get("cached", 0))}


def tokens_of(setup: dict, lm: Any, requests: list, before: dict[str, float]) -> tuple[int, int]:
    """(prompt tokens computed, read from a cache) by one run: a server's or ``vllm-prefix``'s counters; hf-prefix's
    packed rows; else every request's context and continuation, forwarded whole."""
    if "url" in setup or setup["model"] == "vllm-prefix":
        after = counters(setup, lm)
        cached = int(after["cached"] - before["cached"])
        return int(after["prompt"] - before["prompt"]) - cached, cached
    if setup["model"] == "hf-prefix":
        return sum(len(row) for row in lm.pack(lm.token_requests(requests))), 0
    return sum(len(context) + len(continuation) for _, context, continuation in requests), 0


def main(setup: dict, rows: dict[str, list], repetitions: int, model: str) -> None:
    """:func:`measure`, every vLLM engine it starts shut down when it ends (:mod:`lm_eval_stereo.core.engines`)."""
    from lm_eval_stereo.core.engines import shut_down_engines_started_within

    with shut_down_engines_started_within():
        measure(setup, rows, repetitions, model)


def measure(setup: dict, rows: dict[str, list], repetitions: int, model: str) -> None:
    import lm_eval
    from lm_eval.tasks import TaskManager

    lm = build(setup, model)
    manager = TaskManager(include_defaults=False, metadata={"pretrained": model})
    phase: list[float] = []
    recorded: list = []
    scoring, tokenized = lm.loglikelihood, lm._loglikelihood_tokens

    def timed_scoring(requests: list, *args: Any, **kwargs: Any) -> list:
        start = time.perf_counter()
        try:
            return scoring(requests, *args, **kwargs)
        finally:
            phase.append(time.perf_counter() - start)

    def recording(requests: list, *args: Any, **kwargs: Any) -> list:
        recorded.extend(requests)
        return tokenized(requests, *args, **kwargs)

    lm.loglikelihood, lm._loglikelihood_tokens = timed_scoring, recording
    for row, (tasks, limit) in rows.items():
        seconds, ll_seconds, computed = [], [], []
        for repetition in range(repetitions + 1):
            reset_cache(setup, lm)
            phase.clear()
            recorded.clear()
            before = counters(setup, lm)
            start = time.perf_counter()
            results = lm_eval.simple_evaluate(model=lm, tasks=tasks, limit=limit, task_manager=manager,
                                              bootstrap_iters=0, log_samples=True)  # fmt: skip
            if repetition:
                seconds.append(time.perf_counter() - start)
                ll_seconds.append(sum(phase))
                computed.append(tokens_of(setup, lm, recorded, before))
        values = {
            f"{task}|{sample['doc_id']}|{n}": float(response[0][0])
            for task, samples in results["samples"].items()
            for sample in samples
            for n, response in enumerate(sample["resps"])
        }
        numbers = {task: {k: v for k, v in m.items() if isinstance(v, float)} for task, m in results["results"].items()}
        print(json.dumps({"row": row, "seconds": seconds, "ll_seconds": ll_seconds, "tokens": computed[-1],
                          "values": values, "metrics": numbers}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main(json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
