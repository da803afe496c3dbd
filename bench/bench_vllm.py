"""Log-likelihood scoring through vLLM against ``hf`` and ``hf-prefix`` (``make bench``; needs ``make vllm-venv``).

SmolLM2-135M-Instruct (real weights), float32, CPU; the demo's log-likelihood mix (StereoSet, GEST, GerBBQ+ MC) and
``mbbq_en`` on the same documents through: ``hf`` and ``hf-prefix`` (batch size 16), in-process ``vllm`` (vLLM's CPU
build, ``batch_size auto``) and ``local-completions`` against one ``vllm serve`` (started once, not timed) at
``num_concurrent`` 1, 4 and 8. Each setup is one ``lm_eval`` process, timed end to end (imports, engine start and
task building included: what a user waits for), median (min–max) of the repetitions after a warm-up; requests per
second over that time; ratio: hf's seconds / these seconds (above 1: faster than hf); worst: the largest difference
of a request's log-likelihood from hf's; metrics: whether every metric equals hf's within 1e-3.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_served import Served
from bench.timing import REPETITIONS, cell, spread, timed
from lm_eval_stereo.local_models.real import SMOLLM2, materialise

REPO = Path(__file__).resolve().parents[1]
VLLM_BIN = REPO / ".cache" / "vllm-venv" / "bin"
#: row -> (tasks, --limit); --quick: QUICK_ROWS
ROWS = {"demo mix": ("stereoset_multi,gest_en,gerbbq_mc", "0.005"), "mbbq_en": ("mbbq_en", "50")}
QUICK_ROWS = {"demo mix": ("stereoset_multi_en,gest_en", "4"), "mbbq_en": ("mbbq_en", "5")}
CONCURRENCY = (1, 4, 8)
MAX_MODEL_LEN = 1024
ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
       "LM_EVAL_STEREO_ONLY_PLUGIN_TASKS": "1"}  # fmt: skip
TOLERANCE = 1e-3


def lm_eval(executable: Path, args: list[str]) -> tuple[dict, dict[tuple[str, int, int], float]]:
    """One ``lm_eval`` process: its results and ``{(task, document, request): log-likelihood}``."""
    with tempfile.TemporaryDirectory() as out:
        command = [str(executable), *args, "--log_samples", "--output_path", out]
        done = subprocess.run(command, env={**os.environ, **ENV}, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        (results_file,) = Path(out).rglob("results_*.json")
        values = {}
        for samples in results_file.parent.glob("samples_*.jsonl"):
            task = samples.name[len("samples_") :].rsplit("_", 1)[0]
            for line in samples.read_text().splitlines():
                sample = json.loads(line)
                for n, response in enumerate(sample["resps"]):
                    values[task, sample["doc_id"], n] = float(response[0][0])
        return json.loads(results_file.read_text()), values


def vllm_serve(model: Path) -> Served:
    """``vllm serve`` of ``model`` (float32, eager, a window of :data:`MAX_MODEL_LEN`)."""

    def command(port: int) -> list[str]:
        command = [str(VLLM_BIN / "vllm"), "serve", str(model), "--host", "127.0.0.1", "--port", str(port)]
        return [*command, "--dtype", "float32", "--enforce-eager", "--max-model-len", str(MAX_MODEL_LEN)]

    return Served(command, "vllm serve", env={**os.environ, **ENV})


def metrics_equal(one: dict, two: dict) -> bool:
    for task, metrics in one["results"].items():
        for key, value in metrics.items():
            other = two["results"][task].get(key)
            if isinstance(value, float) and isinstance(other, float):
                if not (abs(value - other) <= TOLERANCE or (value != value and other != other)):
                    return False
    return True


def measure(model: Path, rows: dict[str, tuple[str, str]], repetitions: int) -> list[dict]:
    dev_lm_eval = Path(sys.executable).parent / "lm_eval"
    hf_args = ["--model_args", f"pretrained={model},dtype=float32", "--device", "cpu", "--batch_size", "16"]
    vllm_args = f"pretrained={model},dtype=float32,max_model_len={MAX_MODEL_LEN},enforce_eager=True"
    out = []
    with vllm_serve(model) as server:
        url = f"http://127.0.0.1:{server.port}/v1/completions"
        for row, (tasks, limit) in rows.items():
            common = ["--tasks", tasks, "--limit", limit]
            setups = {
                "hf": (dev_lm_eval, ["--model", "hf", *hf_args]),
                "hf-prefix": (dev_lm_eval, ["--model", "hf-prefix", *hf_args]),
                "vllm in process (batch_size auto)": (
                    VLLM_BIN / "lm_eval",
                    ["--model", "vllm", "--model_args", vllm_args, "--batch_size", "auto"],
                ),
            }
            for concurrent in CONCURRENCY:
                served = f"model={model},base_url={url},tokenizer={model},tokenizer_backend=huggingface"
                served += f",num_concurrent={concurrent},max_length={MAX_MODEL_LEN}"
                setups[f"vllm serve, num_concurrent={concurrent}"] = (
                    dev_lm_eval,
                    ["--model", "local-completions", "--model_args", served],
                )
            measured = {}
            for setup, (executable, args) in setups.items():
                seconds, (results, values) = timed(lambda e=executable, a=[*args, *common]: lm_eval(e, a), repetitions)
                measured[setup] = (seconds, results, values)
            hf_seconds, hf_results, hf_values = measured["hf"]
            for setup, (seconds, results, values) in measured.items():
                worst = max(abs(values[key] - value) for key, value in hf_values.items()) if values else float("nan")
                out.append({"row": row, "setup": setup, "requests": len(hf_values), "seconds": spread(seconds),
                            "requests_per_s": spread([len(hf_values) / s for s in seconds]),
                            "ratio": statistics.median(hf_seconds) / statistics.median(seconds),
                            "worst": worst, "metrics_equal": metrics_equal(results, hf_results)})  # fmt: skip
    return out


def run(quick: bool = False) -> dict:
    model = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    if not (VLLM_BIN / "vllm").exists():
        text = "## vLLM\n\nNot measured: no vLLM venv (`make vllm-venv`).\n"
        return {"markdown": text, "json": {"vllm": []}}
    repetitions = 1 if quick else REPETITIONS
    rows = measure(model, QUICK_ROWS if quick else ROWS, repetitions)
    lines = [
        "## vLLM: log-likelihood scoring in process and served vs hf and hf-prefix",
        "",
        f"SmolLM2-135M-Instruct (real weights), float32, CPU, vLLM's CPU build (`make vllm-venv`). Rows: "
        f"{'; '.join(f'{r} ({t}, --limit {n})' for r, (t, n) in (QUICK_ROWS if quick else ROWS).items())}. One "
        f"`lm_eval` process per setup, end to end, median (min–max) of {repetitions} runs after a warm-up; ratio: hf's "
        "seconds / these seconds; worst: largest |log-likelihood - hf's| of a request; metrics: all within 1e-3 of hf's.",
        "",
        "| row | setup | requests | seconds | requests/s | ratio | worst | metrics |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['row']} | {r['setup']} | {r['requests']} | {cell(r['seconds'])} | {cell(r['requests_per_s'])} | "
        f"{r['ratio']:.2f}x | {r['worst']:.1e} | {'equal' if r['metrics_equal'] else 'DIFFER'} |"
        for r in rows
    ]
    return {"markdown": "\n".join(lines) + "\n", "json": {"vllm": rows}}


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
