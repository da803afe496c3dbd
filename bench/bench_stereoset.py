"""End-to-end ``stereoset_multi`` through lm_eval against a bare batched forward pass over the same token sequences.

The model (about 26M parameters, seeded random weights) is loaded once and shared: the end-to-end time is
``lm_eval.simple_evaluate`` on the loaded model (task building, dataset conversion with the token counts,
tokenisation, batching, log-softmax, metric aggregation with bootstrap CIs); the bare time is ``model(input_ids)``
over exactly the token sequences the harness feeds the model (its own ``_encode_pair``), sorted longest-first,
padded, in batches of the same size, under ``torch.inference_mode``. Both run in this process, one after the other.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import torch

from lm_eval_stereo import tasks_path
from lm_eval_stereo.tasks.stereoset_multi.data import LANGUAGES
from lm_eval_stereo.testing.tiny_models import build_causal_lm

BATCH_SIZE = 32
TARGET_RATIO = 1.3


def request_parts(lang: str, limit: int) -> list[tuple[str, list[str]]]:
    """(context, continuations) of the first ``limit`` documents, rendered by the task's own YAML templates."""
    from lm_eval.tasks import TaskManager

    name = f"stereoset_multi_{lang}"
    task = TaskManager(include_path=str(tasks_path()), include_defaults=False).load([name])["tasks"][name]
    docs = list(task.test_docs())[:limit]
    return [(task.doc_to_text(doc), task.doc_to_choice(doc)) for doc in docs]


def token_sequences(lm, limit: int) -> list[list[int]]:
    """The input sequences HFLM forwards for the first ``limit`` documents of every language."""
    sequences = []
    for lang in LANGUAGES:
        for context, continuations in request_parts(lang, limit):
            for continuation in continuations:
                if context:
                    context_enc, continuation_enc = lm._encode_pair(context, continuation)
                else:
                    context_enc, continuation_enc = [lm.prefix_token_id], lm.tok_encode(continuation)
                sequences.append((context_enc + continuation_enc)[-(lm.max_length + 1) :][:-1])
    return sequences


def bare_forward(model: torch.nn.Module, sequences: list[list[int]], batch_size: int, pad_id: int) -> float:
    ordered = sorted(sequences, key=len, reverse=True)
    start = time.perf_counter()
    with torch.inference_mode():
        for first in range(0, len(ordered), batch_size):
            batch = ordered[first : first + batch_size]
            width = len(batch[0])
            ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
            for row, sequence in enumerate(batch):
                ids[row, : len(sequence)] = torch.tensor(sequence)
            model(ids)
    return time.perf_counter() - start


def run(quick: bool = False) -> dict:
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    limit = 40 if quick else 200
    with tempfile.TemporaryDirectory() as tmp:
        path = build_causal_lm(Path(tmp) / "model", seed=0, shape="bench")
        lm = HFLM(pretrained=str(path), device="cpu", batch_size=BATCH_SIZE, dtype="float32")
        params = sum(p.numel() for p in lm.model.parameters())
        sequences = token_sequences(lm, limit)
        manager = TaskManager(include_defaults=False, metadata={"pretrained": str(path)})
        start = time.perf_counter()
        results = lm_eval.simple_evaluate(
            model=lm,
            tasks=["stereoset_multi"],
            limit=limit,
            task_manager=manager,
            bootstrap_iters=0,
        )
        end_to_end = time.perf_counter() - start
        bare = bare_forward(lm.model, sequences, BATCH_SIZE, lm.tokenizer.pad_token_id or 0)
    docs = limit * len(LANGUAGES)
    ratio = end_to_end / bare
    icat = results["results"]["stereoset_multi"]["icat,none"]
    normalization = results["results"]["stereoset_multi_en"]["normalization,none"]
    markdown = (
        "## stereoset_multi: lm_eval end to end vs bare forward\n\n"
        f"Random GPT-2-style model, {params / 1e6:.1f}M parameters, CPU, batch size {BATCH_SIZE}, "
        f"{limit} documents per language × {len(LANGUAGES)} languages = {docs} documents, "
        f"{len(sequences)} scored sequences, normalisation {normalization}.\n\n"
        "| what | wall time (s) | documents/s |\n|---|---:|---:|\n"
        f"| lm_eval `simple_evaluate` (loaded model) | {end_to_end:.2f} | {docs / end_to_end:.1f} |\n"
        f"| bare batched forward, same sequences | {bare:.2f} | {docs / bare:.1f} |\n\n"
        f"Ratio end-to-end / bare: **{ratio:.2f}×** (target ≤ {TARGET_RATIO}×: "
        f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}). Group ICAT of the random model: {icat:.2f}.\n"
    )
    return {
        "markdown": markdown,
        "json": {
            "parameters": params,
            "batch_size": BATCH_SIZE,
            "documents": docs,
            "sequences": len(sequences),
            "end_to_end_s": end_to_end,
            "bare_forward_s": bare,
            "ratio": ratio,
            "target_ratio": TARGET_RATIO,
            "documents_per_s_end_to_end": docs / end_to_end,
            "documents_per_s_bare": docs / bare,
        },
    }
