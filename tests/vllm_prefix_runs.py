"""Three ``lm_eval`` runs of the same documents on one ``--model vllm-prefix`` engine (``python vllm_prefix_runs.py
OUTPUT MODEL_ARGS SAMPLES_JSON INCLUDE_PATH``, run by :mod:`test_vllm_prefix` with the vLLM venv's interpreter), each
written as lm_eval's command line writes it, under ``OUTPUT/<run>``, with the prompt tokens it sent and read from the
cache (``prompt_tokens.json``):

- ``prefix``: the prefix cache emptied first, then the requests read it (``--model vllm-prefix`` as a user runs it);
- ``warm``: again, on the cache the first run left (every request's prompt is cached but for its last token, so most
  requests are re-sent with the cache skipped);
- ``vllm``: scored by lm_eval's own ``vllm`` backend code (``VLLM._loglikelihood_tokens``, the cache skipped) on the
  same engine, the reference the other two must equal.

One engine for all three: an engine start costs more CPU than the three runs together.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(output: Path, model_args: str, samples: dict[str, list[int]], include_path: str) -> None:
    import lm_eval
    from lm_eval.api.registry import get_model
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from lm_eval_stereo.core.engines import shut_down_engines_started_within
    from lm_eval_stereo.core.values import parse_model_args

    # the engine ends with the block, before the interpreter is torn down (lm_eval_stereo.core.engines)
    with shut_down_engines_started_within():
        lm = get_model("vllm-prefix").create_from_arg_string(model_args, {"batch_size": "auto"})
        # the tasks read the model arguments as lm_eval's command line hands them over (merged into the metadata)
        manager = TaskManager(include_path=include_path, metadata=parse_model_args(model_args))
        for run in ("prefix", "warm", "vllm"):
            if run == "prefix":
                lm.model.reset_prefix_cache()
            lm.reads_prefix_cache = run != "vllm"
            before = dict(lm.prompt_tokens)
            results = lm_eval.simple_evaluate(
                model=lm, tasks=list(samples), samples=samples, log_samples=True, task_manager=manager
            )
            results["config"]["model"] = "vllm" if run == "vllm" else "vllm-prefix"
            tracker = EvaluationTracker(output_path=str(output / run))
            tracker.general_config_tracker.model_name_sanitized = "smollm2"
            logged = results.pop("samples")
            tracker.save_results_aggregated(results=results, samples=logged)
            for task in results["configs"]:
                tracker.save_results_samples(task_name=task, samples=logged[task])
            tokens = {kind: count - before.get(kind, 0) for kind, count in lm.prompt_tokens.items()}
            (output / run / "prompt_tokens.json").write_text(json.dumps(tokens))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4])
