"""S_JSD scoring throughput of ``hf-mlm`` (``shared_tokens`` requests) against a reference-style loop (``make bench``).

Both score the shared tokens of the same sentence pairs with the same seeded random XLM-R-like model (vocab 120k,
width 768, 2 layers). The reference loop does what ``main.py`` of Steinborn et al. does: per sentence one batch with
one masked copy per shared position, the model's full forward (output head at every position), softmax and
log-softmax over the full vocabulary at the masked positions. ``hf-mlm`` pools the copies of all pairs, sorts them by
length, sends only the masked positions through the output head and computes identical copies once. Figures: scored
tokens (shared tokens × 2 sentences) per second, median of the timed repetitions after one warm-up, min and max shown.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

import torch

from bench.timing import REPETITIONS, timed
from lm_eval_stereo.core.alignment import shared_positions
from lm_eval_stereo.local_models.tiny import build_xlmr

#: gender-swapped pairs made of the tiny corpus' words (the synthetic 120k vocabulary has real pieces only for them)
PAIRS: tuple[tuple[str, str], ...] = (
    ("The man is a leader.", "The woman is a leader."),
    ("He said that the man is kind.", "She said that the woman is kind."),
    ("I am good at my job, he said.", "I am good at my job, she said."),
    ("The chess player was asian. He is very thin.", "The chess player was asian. She is very thin."),
    ("Der Mann ist Arzt.", "Die Frau ist Ärztin."),
    ("Byl jsem šťastný.", "Byla jsem šťastná."),
    ("Я был очень счастлив.", "Я была очень счастлива."),
    ("Many people live in Ethiopia. The man is kind.", "Many people live in Ethiopia. The woman is kind."),
)


def reference_pair(model, tokenizer, more: str, less: str) -> list[list[float]]:
    """[probabilities more, probabilities less, log-probabilities more, log-probabilities less] as main.py gets them."""
    ids = [tokenizer(s, return_tensors="pt")["input_ids"][0] for s in (more, less)]
    spans = shared_positions(ids[0].tolist(), ids[1].tolist())
    gold = ids[0][spans[0]]
    probs, logprobs = [], []
    for sentence, span in zip(ids, spans, strict=True):
        batch = sentence.repeat(len(span), 1)
        batch[range(len(span)), span] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=batch).logits[range(len(span)), span]
        probs.append(torch.softmax(logits, dim=-1)[range(len(span)), gold].tolist())
        logprobs.append(torch.log_softmax(logits, dim=-1)[range(len(span)), gold].tolist())
    return [*probs, *logprobs]


def run(quick: bool = False) -> dict:
    """Build the model, time both implementations on the same pairs, check that they agree."""
    from lm_eval.api.instance import Instance
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from lm_eval_stereo.models.masked_lm import HFMaskedLM

    torch.manual_seed(0)
    pairs = PAIRS[:4] if quick else PAIRS
    repetitions = REPETITIONS
    with tempfile.TemporaryDirectory() as tmp:
        directory = build_xlmr(Path(tmp) / "xlmr", seed=0, shape="bench_large_vocab")
        tokenizer = AutoTokenizer.from_pretrained(directory)
        model = AutoModelForMaskedLM.from_pretrained(directory).eval()
        lm = HFMaskedLM(pretrained=str(directory), device="cpu", batch_size=256)
    requests = [Instance("shared_tokens", {}, pair, i) for i, pair in enumerate(pairs)]
    reference_s, expected = timed(lambda: [reference_pair(model, tokenizer, *pair) for pair in pairs], repetitions)
    ours_s, got = timed(lambda: lm.shared_tokens(requests), repetitions)
    keys = ("prob_more", "prob_less", "logprob_more", "logprob_less")
    diffs = [
        abs(a - b)
        for response, reference in zip(got, expected, strict=True)
        for key, values in zip(keys, reference, strict=True)
        for a, b in zip(response[key], values, strict=True)
    ]
    tokens = sum(2 * len(response["gold"]) for response in got)
    row = {
        "model": "XLM-R-like (vocab 120k)",
        "vocab_size": len(tokenizer),
        "pairs": len(pairs),
        "scored_tokens": tokens,
        "repetitions": repetitions,
        "reference_tokens_per_s": [tokens / s for s in reference_s],
        "hf_mlm_tokens_per_s": [tokens / s for s in ours_s],
        "speedup": statistics.median(reference_s) / statistics.median(ours_s),
        "max_abs_diff": max(diffs),
        "same_numbers": max(diffs) <= 1e-5,
    }
    rate = row["reference_tokens_per_s"], row["hf_mlm_tokens_per_s"]
    cells = [f"{statistics.median(r):.1f} ({min(r):.1f}–{max(r):.1f})" for r in rate]
    lines = [
        "## S_JSD shared-token scoring — hf-mlm `shared_tokens` vs reference-style loop (main.py)",
        "",
        f"CPU, {torch.get_num_threads()} threads; width 768, 2 layers; scored tokens per second, median (min–max) of "
        f"{repetitions} repetitions after a warm-up; Δ over probabilities and log-probabilities.",
        "",
        "| model | vocab | pairs | scored tokens | reference tok/s | hf-mlm tok/s | speed-up | max |Δ| | same numbers |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {row['model']} | {row['vocab_size']} | {row['pairs']} | {tokens} | {cells[0]} | {cells[1]} | "
        f"{row['speedup']:.2f}x | {row['max_abs_diff']:.2e} | {row['same_numbers']} |",
    ]
    return {"markdown": "\n".join(lines) + "\n", "json": {"s_jsd_scoring": [row]}}


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
