"""Log-likelihood scoring through vLLM, with and without its prefix cache, against ``hf`` and ``hf-prefix``
(``make bench``; needs ``make vllm-venv``).

SmolLM2-135M-Instruct (real weights), float32, CPU; the demo's log-likelihood mix (StereoSet, GEST, GerBBQ+ MC) and
``mbbq_en`` on the same documents through ``hf`` and ``hf-prefix`` (batch size 16), in-process ``vllm`` and
``vllm-prefix`` (vLLM's CPU build, ``batch_size auto``; ``vllm-prefix`` also in lm_eval's order, longest request
first, to see whether the order matters), and ``local-completions`` and ``local-completions-prefix`` against one
``vllm serve`` with the plugin's vLLM plugin (block size 32, prompt-token details; started once, not timed) at
``num_concurrent`` 1, 4 and 8. Each setup runs in a process of its own (:mod:`bench.vllm_worker`), its model built
once and not timed; per row, a warm-up, then the timed runs (median, min–max), the vLLM cache emptied before each:
the seconds end to end (``simple_evaluate``) and of the log-likelihood phase, requests per second of that phase, the
prompt tokens computed and read from the cache, the ratio of hf's log-likelihood phase to this one, the largest
difference of a request's log-likelihood from hf's and from ``vllm``'s, and whether every metric is within 1e-3 of
hf's.
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
from bench.timing import REPETITIONS, cell, spread
from lm_eval_stereo.local_models.real import SMOLLM2, materialise

REPO = Path(__file__).resolve().parents[1]
VLLM_BIN = REPO / ".cache" / "vllm-venv" / "bin"
#: row -> (tasks, --limit); --quick: QUICK_ROWS
ROWS = {"demo mix": (["stereoset_multi", "gest_en", "gerbbq_mc"], 0.005), "mbbq_en": (["mbbq_en"], 50)}
QUICK_ROWS = {"demo mix": (["stereoset_multi_en", "gest_en"], 4), "mbbq_en": (["mbbq_en"], 5)}
CONCURRENCY = (1, 4, 8)
ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
       "LM_EVAL_STEREO_ONLY_PLUGIN_TASKS": "1", "OPENAI_API_KEY": "sk-bench"}  # fmt: skip
TOLERANCE = 1e-3
#: the plugin's entry point, as ``pip install`` writes it into a distribution's metadata
ENTRY_POINT = "[vllm.general_plugins]\nlm_eval_stereo = lm_eval_stereo.vllm_plugin:register\n"
#: the bench server's flags beside the model's: the CPU's smallest block size, the cached tokens in every answer
SERVER_FLAGS = ["--dtype", "float32", "--enforce-eager", "--max-model-len", "1024", "--block-size", "32",
                "--enable-prompt-tokens-details"]  # fmt: skip


def installed_entry_point() -> bool:
    """Whether the vLLM venv's installed lm-eval-stereo declares the plugin's vLLM plugin."""
    found = VLLM_BIN.parent.glob("lib/python3*/site-packages/lm_eval_stereo-*.dist-info/entry_points.txt")
    return any("vllm.general_plugins" in path.read_text() for path in found)


def plugin_python_path(folder: Path) -> str:
    """A ``PYTHONPATH`` on which vLLM finds this tree's plugin: the tree first and, where the vLLM venv was installed
    from a tree without the entry point, a distribution's metadata in ``folder`` that declares it (vLLM finds plugins
    by entry point only)."""
    if not installed_entry_point():
        metadata = folder / "lm_eval_stereo_vllm_plugin-0.dist-info"
        metadata.mkdir(parents=True, exist_ok=True)
        (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: lm-eval-stereo-vllm-plugin\nVersion: 0\n")
        (metadata / "entry_points.txt").write_text(ENTRY_POINT)
    return f"{folder}:{REPO}"


def vllm_serve(model: Path, folder: Path) -> Served:
    """``vllm serve`` of ``model`` with the plugin, :data:`SERVER_FLAGS`, and ``/reset_prefix_cache`` (dev mode)."""

    def command(port: int) -> list[str]:
        return [str(VLLM_BIN / "vllm"), "serve", str(model), "--host", "127.0.0.1", "--port", str(port), *SERVER_FLAGS]

    env = {**os.environ, **ENV, "VLLM_SERVER_DEV_MODE": "1", "PYTHONPATH": plugin_python_path(folder)}
    return Served(command, "vllm serve", env=env)


def worker(python: Path, setup: dict, rows: dict, repetitions: int, model: Path) -> dict[str, dict]:
    """One setup's rows (:mod:`bench.vllm_worker`)."""
    command = [
        str(python),
        "-m",
        "bench.vllm_worker",
        json.dumps(setup),
        json.dumps(rows),
        str(repetitions),
        str(model),
    ]
    env = {**os.environ, **ENV, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{setup} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"row"')]
    return {line["row"]: line for line in lines}


def metrics_equal(one: dict, two: dict) -> bool:
    for task, values in one.items():
        for key, value in values.items():
            other = two.get(task, {}).get(key)
            if key.startswith("requests_resent") or other is None:
                continue
            if not (abs(value - other) <= TOLERANCE or (value != value and other != other)):
                return False
    return True


def worst(one: dict[str, float], two: dict[str, float]) -> float:
    return max(abs(one[key] - value) for key, value in two.items()) if two else float("nan")


def measure(model: Path, rows: dict, repetitions: int) -> list[dict]:
    dev, engine = Path(sys.executable), VLLM_BIN / "python"
    setups: dict[str, tuple[Path, dict]] = {
        "hf": (dev, {"model": "hf"}),
        "hf-prefix": (dev, {"model": "hf-prefix"}),
        "vllm": (engine, {"model": "vllm"}),
        "vllm-prefix": (engine, {"model": "vllm-prefix"}),
        "vllm-prefix, lm_eval's order": (engine, {"model": "vllm-prefix", "order": "by length"}),
    }
    measured = {name: worker(python, setup, rows, repetitions, model) for name, (python, setup) in setups.items()}
    with tempfile.TemporaryDirectory() as folder, vllm_serve(model, Path(folder)) as server:
        url = f"http://127.0.0.1:{server.port}/v1/completions"
        for name in ("local-completions", "local-completions-prefix"):
            for concurrent in CONCURRENCY:
                setup = {"model": name, "url": url, "concurrency": concurrent}
                measured[f"{name}, num_concurrent={concurrent}"] = worker(dev, setup, rows, repetitions, model)
    out = []
    for row in rows:
        hf, vllm = measured["hf"][row], measured["vllm"][row]
        for name, runs in measured.items():
            run = runs[row]
            requests = len(hf["values"])
            out.append({"row": row, "setup": name, "requests": requests, "seconds": spread(run["seconds"]),
                        "ll_seconds": spread(run["ll_seconds"]),
                        "requests_per_s": spread([requests / s for s in run["ll_seconds"]]),
                        "computed": run["tokens"][0], "cached": run["tokens"][1],
                        "ratio": statistics.median(hf["ll_seconds"]) / statistics.median(run["ll_seconds"]),
                        "worst_hf": worst(run["values"], hf["values"]), "worst_vllm": worst(run["values"], vllm["values"]),
                        "metrics_equal": metrics_equal(run["metrics"], hf["metrics"])})  # fmt: skip
    return out


def targets(rows: list[dict]) -> list[str]:
    """The issue's targets on mbbq_en: vllm-prefix at least 1.5x vllm in the log-likelihood phase; its computed
    tokens within 1.5x of hf-prefix's forwarded tokens."""
    by = {r["setup"]: r for r in rows if r["row"] == "mbbq_en"}
    if not {"vllm", "vllm-prefix", "hf-prefix"} <= by.keys():
        return []
    speed = by["vllm"]["ll_seconds"]["median"] / by["vllm-prefix"]["ll_seconds"]["median"]
    tokens = by["vllm-prefix"]["computed"] / max(by["hf-prefix"]["computed"], 1)
    return [
        f"- mbbq_en, log-likelihood phase: vllm-prefix {speed:.2f}x vllm (target: at least 1.5x): "
        f"{'met' if speed >= 1.5 else 'NOT met'}.",
        f"- mbbq_en, tokens computed: vllm-prefix {tokens:.2f}x hf-prefix's forwarded tokens (target: within 1.5x): "
        f"{'met' if tokens <= 1.5 else 'NOT met'}.",
    ]


def run(quick: bool = False) -> dict:
    model = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    if not (VLLM_BIN / "vllm").exists():
        text = "## vLLM\n\nNot measured: no vLLM venv (`make vllm-venv`).\n"
        return {"markdown": text, "json": {"vllm": []}}
    repetitions = 1 if quick else REPETITIONS
    chosen = QUICK_ROWS if quick else ROWS
    rows = measure(model, chosen, repetitions)
    described = "; ".join(f"{row} ({','.join(tasks)}, --limit {limit})" for row, (tasks, limit) in chosen.items())
    lines = [
        "## vLLM: log-likelihood scoring with and without the prefix cache, in process and served, vs hf and hf-prefix",
        "",
        f"SmolLM2-135M-Instruct (real weights), float32, CPU, vLLM's CPU build (`make vllm-venv`). Rows: {described}. "
        "Each setup in a process "
        f"of its own, its model built once (not timed); median (min–max) of {repetitions} runs after a warm-up, the "
        "vLLM cache emptied before each. LL: the log-likelihood phase; requests/s of that phase; computed / cached: "
        "prompt tokens forwarded and read from vLLM's prefix cache (hf: every request's tokens; hf-prefix: its packed "
        "rows); ratio: hf's LL seconds / these; worst: largest |log-likelihood - hf's| (and - vllm's) of a request; "
        "metrics: all within 1e-3 of hf's.",
        "",
        "| row | setup | requests | end to end s | LL s | requests/s | computed | cached | ratio | worst vs hf | "
        "worst vs vllm | metrics |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['row']} | {r['setup']} | {r['requests']} | {cell(r['seconds'])} | {cell(r['ll_seconds'])} | "
        f"{cell(r['requests_per_s'], 1)} | {r['computed']:,} | {r['cached']:,} | {r['ratio']:.2f}x | "
        f"{r['worst_hf']:.1e} | {r['worst_vllm']:.1e} | {'equal' if r['metrics_equal'] else 'DIFFER'} |"
        for r in rows
    ]
    lines += ["", *targets(rows)]
    return {"markdown": "\n".join(lines) + "\n", "json": {"vllm": rows}}


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
