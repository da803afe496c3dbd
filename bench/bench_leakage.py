"""SeT scoring throughput of ``hf-mlm`` against a reference-style loop (``make bench``; stereotype leakage).

Both compute the association SeT(template with group, trait) − SeT(template with prior word, trait) of the same English
cells (one template of ``stereotype_leakage_mlm_en`` × groups × traits; the reference-style loop is slow) with the same seeded random bert-base-like model
(WordPiece vocab ~30k, width 768, 2 layers). The reference-style loop (:mod:`bench.set_reference`, also the tests'
oracle) follows ``quick_sens_v2.wordasso``: for every (group, trait) it rescores the prior-word sentence, runs one
unpadded forward pass per trait sub-token without ``no_grad``, and solves the minimal output-layer update iteratively in
numpy (``multiclass_update``, sortedness check included). ``hf-mlm`` (request ``masked_sensitivity``) scores every
distinct input once, in length-sorted batches, and uses the closed form. Figures are associations (cells) per second.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

import torch

from bench.set_reference import output_layer, reference_set
from bench.timing import REPETITIONS, cell, spread, timed
from lm_eval_stereo.local_models.tiny import build_bert

TEMPLATE = "The <group> is <mask>."
GROUPS = ("woman", "man", "immigrant", "software engineer")
TRAITS = ("powerless", "powerful", "untrustworthy", "likable", "irrational", "warm")
PRIOR = "person"


def measure(directory: Path, quick: bool) -> dict:
    from lm_eval.api.instance import Instance
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from lm_eval_stereo.models.masked_lm import HFMaskedLM
    from lm_eval_stereo.tasks.stereotype_leakage.templates import split

    groups, traits = (GROUPS[:2], TRAITS[:2]) if quick else (GROUPS, TRAITS)
    cells = [(TEMPLATE, g, trait) for g in groups for trait in traits]
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForMaskedLM.from_pretrained(directory).eval()
    weights = output_layer(model)
    reference_s, expected = timed(
        lambda: [
            reference_set(model, tokenizer, weights, t, g, trait)
            - reference_set(model, tokenizer, weights, t, PRIOR, trait)
            for t, g, trait in cells
        ]
    )
    lm = HFMaskedLM(pretrained=str(directory), device="cpu", batch_size=64)
    requests = []
    for t, g, trait in cells:
        for word in (g, PRIOR):
            left, separator, right = split(t, word, "en")
            requests.append(Instance("masked_sensitivity", {}, (left, trait, right, separator), len(requests)))
    ours_s, responses = timed(lambda: lm.masked_sensitivity(requests))
    totals = [sum(scores) for scores in responses]
    got = [totals[2 * i] - totals[2 * i + 1] for i in range(len(cells))]
    max_diff = max(abs(a - b) for a, b in zip(got, expected, strict=True))
    return {
        "cells": len(cells),
        "vocab_size": len(tokenizer),
        "repetitions": REPETITIONS,
        "reference_cells_per_s": spread([len(cells) / s for s in reference_s]),
        "hf_mlm_cells_per_s": spread([len(cells) / s for s in ours_s]),
        "speedup": statistics.median(reference_s) / statistics.median(ours_s),
        "max_abs_diff": max_diff,
        "same_numbers": max_diff <= 1e-4,
    }


def run(quick: bool = False) -> dict:
    """Build the model, time both implementations on the same cells, check they agree."""
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        r = measure(build_bert(Path(tmp) / "bench", seed=0, shape="bench"), quick)
    lines = [
        "## Stereotype leakage: SeT scoring — hf-mlm vs reference-style loop",
        "",
        f"CPU, {torch.get_num_threads()} threads; bert-base-like random model (width 768, 2 layers); associations "
        "(group − prior) per second (higher is better), median (min–max) of "
        f"{REPETITIONS} runs after a warm-up. The reference-style loop rescores the prior word for every "
        "group and runs one unbatched forward pass per sub-token without no_grad.",
        "",
        "| cells | vocab | reference cells/s | hf-mlm cells/s | speed-up | max |Δ| | same numbers |",
        "|---|---|---|---|---|---|---|",
        f"| {r['cells']} | {r['vocab_size']} | {cell(r['reference_cells_per_s'])} | {cell(r['hf_mlm_cells_per_s'])} | "
        f"{r['speedup']:.2f}x | {r['max_abs_diff']:.2e} | {r['same_numbers']} |",
    ]
    return {"markdown": "\n".join(lines) + "\n", "json": {"set_scoring": r}}


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
