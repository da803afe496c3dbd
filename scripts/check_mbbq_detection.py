"""Compare the plugin's MBBQ answer detection with the reference's own ``detect_answer``, off CI.

    python scripts/check_mbbq_detection.py UPSTREAM [SAMPLES ...] [--documents 300] [--outputs 25] [--seed 0]

UPSTREAM is a folder holding MBBQ's ``mbbq.py`` and ``answer_detection.py`` at the pinned commit (a checkout of
Veranep/MBBQ @ adaa401; ``answer_detection.py`` is checked against its pin). This script imports and runs that
reference code, which CI never does: the repository declares no licence, so its files are never re-hosted here, and
CI's offline mirror does not hold ``answer_detection.py`` (the tests use a hand-written file of the same layout).

For every language and set (bias, control), ``--documents`` documents drawn with ``--seed`` each get ``--outputs``
synthetic outputs: random sequences of the document's answer texts (as given, lower-cased, last word, in brackets),
letter spellings of the phrase tables, before/after/unknown phrases of the language, filler words and punctuation. The
outputs recorded in ``samples_mbbq_gen*.jsonl`` files below each SAMPLES folder (``lm_eval --log_samples`` of the
generative tasks) are compared too. Each output's answer index, as the reference's ``pd.to_numeric(errors="coerce")``
reads ``detect_answer``'s value, must equal the plugin's; the script prints the counts and the first differences and
exits 1 on any difference. Needs the data (``LM_EVAL_STEREO_DATA_DIR`` or network) and pandas.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import random
import string
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from lm_eval_stereo.tasks.mbbq import data, detection
from lm_eval_stereo.tasks.mbbq.sources import MBBQ

FILLERS = ("", " ", ".", "\n", ", ", " I think", " because", "!", ":", "(")
WORDS = ("yes", "no", "maybe", "the", "is", "Answer", "Option", "both", "none")


def reference(folder: Path) -> Any:
    """The reference's ``mbbq`` module (which imports its ``answer_detection``), imported from ``folder``."""
    detection_file = folder / "answer_detection.py"
    expected = MBBQ.files["answer_detection.py"].digest
    if hashlib.sha256(detection_file.read_bytes()).hexdigest() != expected:
        raise SystemExit(f"{detection_file} is not the pinned answer_detection.py (sha256 {expected})")
    sys.path.insert(0, str(folder))
    return importlib.import_module("mbbq")


def synthetic(doc: dict, tables: detection.Tables, rng: random.Random, count: int) -> list[str]:
    """``count`` outputs mixing the document's answers, letters (one spelling, or the three of one kind), the
    language's phrases and filler words."""
    spellings = tables.letters
    letters = [spelling for kind in spellings for spelling in kind]
    options = [doc["ans0"], doc["ans1"], doc["ans2"]]
    phrases = [phrase for kind in ("before", "after", "unknown") for phrase in tables.indicators(kind, doc["lang"])]
    outputs = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 4)):
            draw = rng.random()
            if draw < 0.3:
                option = rng.choice(options)
                parts.append(rng.choice([option, option.lower(), option.split()[-1], f"{option}.", f"({option})"]))
            elif draw < 0.5:
                parts.append(rng.choice(letters))
            elif draw < 0.55:
                kind = rng.randrange(2, len(spellings[0]))
                parts.append(", ".join(spellings[letter][kind] for letter in range(3)))
            elif draw < 0.85:
                parts.append(rng.choice(phrases))
            else:
                parts.append(rng.choice(WORDS))
            parts.append(rng.choice(FILLERS))
        lead = rng.choice(string.punctuation) if rng.random() < 0.2 else ""
        outputs.append(lead + " ".join(parts))
    return outputs


def recorded(folders: list[Path]) -> list[tuple[dict, str]]:
    """(document, output) of every logged generative MBBQ sample below ``folders``."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("samples_mbbq_gen*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                sample = json.loads(line)
                found.append((sample["doc"], sample["resps"][0][0]))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("upstream", type=Path, help="folder with the reference's mbbq.py and answer_detection.py")
    parser.add_argument("samples", nargs="*", type=Path, help="folders of lm_eval --log_samples runs to compare too")
    parser.add_argument("--documents", type=int, default=300, help="documents per language and set")
    parser.add_argument("--outputs", type=int, default=25, help="synthetic outputs per document")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import pandas as pd

    upstream = reference(args.upstream)
    tables = detection.parse_tables(args.upstream / "answer_detection.py")
    rng = random.Random(args.seed)
    pairs = [
        (doc, output)
        for lang in data.LANGUAGES
        for control in (False, True)
        for doc in rng.sample(data.load_docs(lang, control=control), args.documents)
        for output in synthetic(doc, tables, rng, args.outputs)
    ]
    logged = recorded(args.samples)
    outcomes: Counter[str] = Counter()
    differences = []
    for doc, output in [*pairs, *logged]:
        options, unknown = [doc["ans0"], doc["ans1"], doc["ans2"]], int(doc["unknown_loc"])
        value = pd.to_numeric(
            pd.Series([upstream.detect_answer(options, output, unknown, doc["lang"])], dtype=object), errors="coerce"
        ).iloc[0]
        theirs = None if pd.isna(value) else int(value)
        ours = detection.prediction(detection.detect_answer(tables, options, output, unknown, doc["lang"]))
        outcomes["undetermined" if ours is None else "unknown answer" if ours == unknown else "a person"] += 1
        if theirs != ours:
            differences.append((doc["lang"], options, output, theirs, ours))
    print(f"outputs compared: {len(pairs) + len(logged)} ({len(pairs)} synthetic, {len(logged)} logged)")
    print("the plugin's answers: " + ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items())))
    print(f"differences from the reference: {len(differences)}")
    for difference in differences[:20]:
        print("  lang {}; options {}; output {!r}: reference {}, plugin {}".format(*difference))
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
