"""Masked-scoring throughput of ``hf-mlm`` against a reference-style loop (``make bench``).

Both compute the pseudo-log-likelihood (Salazar et al. 2020, Eq. 2) of the same sentences with the same seeded random
models: a bert-base-like one (WordPiece vocab ~30k) and an mBERT/XLM-R-like one (vocab 120k), both of width 768 and
reduced depth. The reference loop scores one sentence at a time, puts all its masked copies in one batch and takes a
full-vocabulary softmax at every position (as the StereoSet/GEST reference code does); ``hf-mlm`` packs the copies of
all sentences into length-sorted batches and projects only the masked positions. Figures are scored tokens per second.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import torch

from lm_eval_stereo.testing.tiny_models import CORPUS, build_bert, build_xlmr

MODELS = {
    "bert-base-like (vocab ~30k)": (build_bert, "bench"),
    "XLM-R-like (vocab 120k)": (build_xlmr, "bench_large_vocab"),
}


def sentences(quick: bool) -> list[str]:
    """The corpus' sentences (about 30), twice unless ``quick``."""
    parts = [s.strip() + "." for line in CORPUS for s in line.split(".") if s.strip()]
    return parts if quick else parts * 2


def reference_pll(model, tokenizer, text: str) -> float:
    """One sentence: every masked copy in one batch, softmax over the whole vocabulary at every position."""
    ids = tokenizer(text, return_tensors="pt")["input_ids"][0]
    positions = range(1, len(ids) - 1)
    batch = ids.repeat(len(positions), 1)
    for row, p in enumerate(positions):
        batch[row, p] = tokenizer.mask_token_id
    with torch.no_grad():
        out = model(input_ids=batch)
    logits = out.logits if getattr(out, "logits", None) is not None else out.prediction_logits
    logp = torch.log_softmax(logits.float(), dim=-1)
    return float(sum(logp[row, p, ids[p]] for row, p in enumerate(positions)))


def measure(name: str, directory: Path, texts: list[str]) -> dict:
    from lm_eval.api.instance import Instance
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from lm_eval_stereo.models.masked_lm import HFMaskedLM

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForMaskedLM.from_pretrained(directory).eval()
    n_tokens = sum(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts)
    start = time.perf_counter()
    expected = [reference_pll(model, tokenizer, t) for t in texts]
    reference_s = time.perf_counter() - start
    lm = HFMaskedLM(pretrained=str(directory), device="cpu", batch_size=64)
    requests = [Instance("loglikelihood_rolling", {}, (t,), i) for i, t in enumerate(texts)]
    start = time.perf_counter()
    got = lm.loglikelihood_rolling(requests)
    ours_s = time.perf_counter() - start
    max_diff = max(abs(a - b) for a, b in zip(got, expected, strict=True))
    return {
        "model": name,
        "vocab_size": len(tokenizer),
        "sentences": len(texts),
        "scored_tokens": n_tokens,
        "reference_tokens_per_s": n_tokens / reference_s,
        "hf_mlm_tokens_per_s": n_tokens / ours_s,
        "speedup": reference_s / ours_s,
        "max_abs_diff": max_diff,
        "same_numbers": max_diff <= 1e-5 * max(1, max(len(tokenizer(t)["input_ids"]) for t in texts)),
    }


def run(quick: bool = False) -> dict:
    """Build both models, time both implementations on the same sentences, check they agree."""
    torch.manual_seed(0)
    texts = sentences(quick)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (builder, shape) in MODELS.items():
            directory = builder(Path(tmp) / shape, seed=0, shape=shape)
            rows.append(measure(name, directory, texts))
    lines = [
        "## Masked-LM scoring (PLL) — hf-mlm vs reference-style loop",
        "",
        f"CPU, {torch.get_num_threads()} threads; width 768, 2 layers; scored tokens per second (higher is better).",
        "",
        "| model | vocab | sentences | scored tokens | reference tok/s | hf-mlm tok/s | speed-up | max |Δ| | same numbers |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['vocab_size']} | {r['sentences']} | {r['scored_tokens']} | "
            f"{r['reference_tokens_per_s']:.1f} | {r['hf_mlm_tokens_per_s']:.1f} | {r['speedup']:.2f}x | "
            f"{r['max_abs_diff']:.2e} | {r['same_numbers']} |"
        )
    return {"markdown": "\n".join(lines) + "\n", "json": {"masked_scoring": rows}}


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
