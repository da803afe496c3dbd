"""``max_gen_toks`` for the GEST MT tasks from the length of real translations of the GEST sentences.

``python -m bench.mt_length [--tokenizer NAME_OR_PATH ...] [--quantile 99.9] [--factor 1.5]``

Reads every upstream MT output of the data (``data/translations/<system>/<lang>/translations.csv``, column ``to``) for
the languages of ``gest_mt_<lang>``, keeps what the task keeps (the first non-empty line), and counts its tokens. The
default tokenizer is a byte-level BPE with 32,000 entries (the vocabulary size of Llama 2 / Mistral) trained here,
leave-one-system-out: the outputs of each MT system are counted with a tokenizer trained on the other systems' outputs
only, so no sentence is measured with a vocabulary fitted to it. ``--tokenizer`` adds any Hugging Face tokenizer (a
local folder such as the tiny test model's). Result: ``ceil(factor x quantile)`` of all counts, per tokenizer.
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from lm_eval_stereo.core import registry, sources
from lm_eval_stereo.tasks.gest.data import LANGUAGES

VOCAB_SIZE = 32_000


def translations() -> dict[str, dict[str, list[str]]]:
    """system -> language -> first non-empty line of every MT output, for the ``gest_mt`` languages."""
    out: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for path in sorted(registry.get_source("gest").files):
        parts = path.split("/")
        if parts[:2] != ["data", "translations"] or parts[3] not in LANGUAGES:
            continue
        with sources.fetch("gest", path).open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        lines = [next((x.strip() for x in row["to"].splitlines() if x.strip()), "") for row in rows]
        out[parts[2]][parts[3]] = lines
    return dict(out)


def train_bpe(texts: list[str]) -> Callable[[str], int]:
    """A byte-level BPE (GPT-2 style pre-tokenisation) of ``VOCAB_SIZE`` entries trained on ``texts``; token counter."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return lambda text: len(tokenizer.encode(text).ids)


def hf_counter(name: str) -> Callable[[str], int]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name)
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def measure(
    data: dict[str, dict[str, list[str]]], counter_for: Callable[[str], Callable[[str], int]]
) -> dict[str, dict[str, np.ndarray]]:
    """system -> language -> token counts, counting each system with ``counter_for(system)``."""
    out = {}
    for system, by_language in data.items():
        count = counter_for(system)
        out[system] = {lang: np.array([count(text) for text in lines]) for lang, lines in by_language.items()}
    return out


def report(name: str, counts: dict[str, dict[str, np.ndarray]], quantile: float, factor: float) -> int:
    """Print the per-language quantiles and return ``ceil(factor x quantile)`` over every count."""
    every = np.concatenate([c for by_language in counts.values() for c in by_language.values()])
    value = math.ceil(factor * float(np.percentile(every, quantile)))
    print(f"\n## {name}\n\n| language | outputs | median | p99 | p{quantile:g} | max |\n|---|---:|---:|---:|---:|---:|")
    for lang in LANGUAGES:
        per = [by_language[lang] for by_language in counts.values() if lang in by_language]
        if per:
            c = np.concatenate(per)
            q = np.percentile(c, [50, 99, quantile])
            print(f"| {lang} | {len(c)} | {q[0]:.0f} | {q[1]:.0f} | {q[2]:.1f} | {c.max()} |")
    q = float(np.percentile(every, quantile))
    print(f"| all | {len(every)} | {np.median(every):.0f} | {np.percentile(every, 99):.0f} | {q:.1f} | {every.max()} |")
    print(f"\nmax_gen_toks = ceil({factor:g} x {q:.1f}) = **{value}**")
    return value


def main(argv: list[str] | None = None) -> dict[str, int]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", action="append", default=[], help="also count with this HF tokenizer")
    parser.add_argument("--quantile", type=float, default=99.9)
    parser.add_argument("--factor", type=float, default=1.5)
    args = parser.parse_args(argv)
    data = translations()
    systems = ", ".join(f"{s} ({', '.join(sorted(d))})" for s, d in sorted(data.items()))
    print(f"MT outputs of the GEST sentences: {systems}")

    def held_out(system: str) -> Callable[[str], int]:
        return train_bpe([t for other, d in data.items() if other != system for lines in d.values() for t in lines])

    name = f"byte-level BPE, {VOCAB_SIZE} entries, trained leave-one-system-out on the other systems' outputs"
    values = {name: report(name, measure(data, held_out), args.quantile, args.factor)}
    for tokenizer in args.tokenizer:
        counter = hf_counter(tokenizer)
        values[tokenizer] = report(tokenizer, measure(data, lambda _, c=counter: c), args.quantile, args.factor)
    return values


if __name__ == "__main__":
    main()
