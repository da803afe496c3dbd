"""Run the log-likelihood suite on a real model, one ``lm_eval`` call per task, timing each: docs/REAL_MODELS.md.

    python scripts/run_real_models.py --model smollm2 --backend hf-prefix --limit 500 --out .cache/real-runs

Each task's results and samples land in ``OUT/<model>/<backend>/`` and its wall time (the whole ``lm_eval`` call:
start-up, model loading, scoring, aggregation) in ``OUT/timings.json``; ``--apply_chat_template`` (with
``--tasks``) runs generative tasks with the model's chat template. A task already timed is skipped, and
``--use_cache`` keeps every scored request, so an interrupted run resumes where it stopped. Runs with ``nice`` so that
interactive work on the machine keeps priority.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def loglikelihood_tasks() -> list[str]:
    """Every task a causal LM scores by log-likelihood (the masked-LM, seq2seq and generative variants are other
    tasks), per registered benchmark in registration order, from its task YAMLs (``readme_tables.catalogue``)."""
    from readme_tables import catalogue

    import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
    from lm_eval_stereo import tasks_path
    from lm_eval_stereo.core import registry

    return [
        task
        for bench in registry.benchmarks()
        if bench.lm_eval_tasks is None
        for task in catalogue(tasks_path() / bench.name).causal_loglikelihood()
    ]


def run_task(
    task: str,
    model_dir: Path,
    backend: str,
    limit: int | None,
    out: Path,
    batch_size: str,
    chat_template: bool,
    include_path: str | None = None,
) -> float:
    """Run one task through ``lm_eval`` and return its wall time in seconds."""
    command = [
        "nice", "-n", "10", sys.executable, "-m", "lm_eval",
        "--model", backend,
        "--model_args", f"pretrained={model_dir},dtype=float32",
        "--device", "cpu", "--batch_size", batch_size,
        "--tasks", task,
        "--output_path", str(out),
        "--log_samples",
        "--use_cache", str(out / "cache" / task),
    ]  # fmt: skip
    if limit:
        command += ["--limit", str(limit)]
    if chat_template:
        command.append("--apply_chat_template")
    if include_path:
        command += ["--include_path", include_path]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    elapsed = time.perf_counter() - start
    (out / "logs").mkdir(parents=True, exist_ok=True)
    (out / "logs" / f"{task}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode:
        raise SystemExit(f"{task} failed (exit {proc.returncode}); see {out / 'logs' / f'{task}.log'}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a folder written by `lm-eval-stereo real-model`")
    parser.add_argument("--name", required=True, help="the model's name in OUT (smollm2, gemma3)")
    parser.add_argument("--backend", choices=("hf", "hf-prefix"), default="hf-prefix")
    parser.add_argument("--limit", type=int, default=500, help="documents per task (0: all)")
    parser.add_argument("--tasks", help="comma-separated (default: every causal log-likelihood task)")
    parser.add_argument("--batch_size", default="16")
    parser.add_argument(
        "--apply_chat_template", action="store_true", help="lm_eval's --apply_chat_template (the generative tasks)"
    )
    parser.add_argument("--out", default=".cache/real-runs")
    parser.add_argument(
        "--include_path",
        help="lm_eval's --include_path (lm_eval's own tasks on the offline mirror: "
        "python -m lm_eval_stereo.tasks.lm_eval_bias.offline_tasks FOLDER)",
    )
    args = parser.parse_args(argv)
    out = Path(args.out) / args.name / args.backend
    out.mkdir(parents=True, exist_ok=True)
    timings_file = Path(args.out) / "timings.json"
    timings = json.loads(timings_file.read_text(encoding="utf-8")) if timings_file.exists() else {}
    for task in args.tasks.split(",") if args.tasks else loglikelihood_tasks():
        key = f"{args.name}/{args.backend}/{task}"
        if key in timings:
            continue
        seconds = run_task(
            task,
            Path(args.model),
            args.backend,
            args.limit or None,
            out,
            args.batch_size,
            args.apply_chat_template,
            args.include_path,
        )
        timings = json.loads(timings_file.read_text(encoding="utf-8")) if timings_file.exists() else {}
        timings[key] = {"seconds": round(seconds, 1), "limit": args.limit or None, "batch_size": args.batch_size}
        timings_file.write_text(json.dumps(timings, indent=1, sort_keys=True), encoding="utf-8")
        print(f"{key}: {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
