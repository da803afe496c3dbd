"""A Python caller of ``lm_eval.simple_evaluate(model="vllm", ...)``, as a user's script would call it: ``python
vllm_python_caller.py MODEL_ARGS RUNS`` runs ``gest_en`` on its first document RUNS times in a row, each with an engine
of its own, and prints one line per run, :data:`MARK` and JSON: the run's metrics and the engine-client threads of
vLLM still alive after ``simple_evaluate`` returned (:mod:`lm_eval_stereo.core.engines` shuts the engine down and joins
them when the run ends; vLLM logs to stdout too)."""

from __future__ import annotations

import json
import sys
import threading

import lm_eval

#: vLLM's engine-client threads (see :data:`lm_eval_stereo.core.engines.CLIENT_THREADS`, not imported: this is a caller)
CLIENT_THREADS = ("EngineCoreOutputQueueThread", "MPClientEngineMonitor")
#: the start of each run's line
MARK = "vllm-python-caller: "


def main(model_args: str, runs: int) -> None:
    for _ in range(runs):
        results = lm_eval.simple_evaluate(
            model="vllm", model_args=model_args, tasks=["gest_en"], limit=1, bootstrap_iters=0
        )
        alive = sorted(thread.name for thread in threading.enumerate() if thread.name in CLIENT_THREADS)
        print(MARK + json.dumps({"threads": alive, "metrics": results["results"]["gest_en"]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
