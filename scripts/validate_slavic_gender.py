"""Validate the Slavic first-person gender detector on GEST's real machine-translation outputs.

``python scripts/validate_slavic_gender.py`` (a development script, not part of the wheel) prints two markdown tables:

1. yield = share of translations with a detected gender, per MT system and language, with the masculine share
   among the detected ones and the detector's speed;
2. accuracy on the hand-labelled sample in ``tests/fixtures/slavic_gender/<lang>.tsv`` (columns system, row,
   label; ``row`` is the 0-based data row of ``data/translations/<system>/<lang>/translations.csv``).

``--sample LANG`` prints the seeded sample rows that were labelled by hand (so the sample can be re-drawn).
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from pathlib import Path

from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.core.readers import read_csv
from lm_eval_stereo.core.registry import get_source
from lm_eval_stereo.core.sources import fetch
from lm_eval_stereo.tasks.gest.detector.slavic_gender import LANGUAGES, first_person_gender

SYSTEMS = ("deepl", "google_translate", "amazon_translate", "nllb_3b")
LABELLED_SYSTEMS = ("deepl", "google_translate")
SAMPLE_SIZE = 40
SAMPLE_SEED = 1234
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "slavic_gender"
LABELS = {"masculine": "masculine", "feminine": "feminine", "none": None}


def translations_path(system: str, lang: str) -> str:
    return f"data/translations/{system}/{lang}/translations.csv"


def available(system: str, lang: str) -> bool:
    """Whether GEST publishes translations of ``system`` into ``lang``."""
    return translations_path(system, lang) in get_source("gest").files


def load_translations(system: str, lang: str) -> list[str]:
    """The ``to`` column (the Slavic translation) of one MT output file, in file order."""
    rows = read_csv(fetch("gest", translations_path(system, lang)), required=["from", "to"])
    return [row["to"] for row in rows]


def sample_rows(lang: str) -> dict[str, list[int]]:
    """The seeded rows that were labelled by hand: 40 per language, split evenly over DeepL and Google."""
    systems = [s for s in LABELLED_SYSTEMS if available(s, lang)]
    size = SAMPLE_SIZE // len(systems)
    return {
        s: sorted(random.Random(f"{s}/{lang}/{SAMPLE_SEED}").sample(range(len(load_translations(s, lang))), size))
        for s in systems
    }


@dataclass(frozen=True)
class Label:
    system: str
    row: int
    label: str | None


def read_labels(lang: str, directory: Path = FIXTURES) -> list[Label]:
    """Hand labels of one language; bad rows raise :class:`MalformedDataError`."""
    file = directory / f"{lang}.tsv"
    labels = []
    for number, row in enumerate(read_csv(file, required=["system", "row", "label"], delimiter="\t"), start=2):
        if row["label"] not in LABELS:
            raise MalformedDataError(str(file), f"unknown label {row['label']!r}", row=number, field="label")
        if not row["row"].isdigit():
            raise MalformedDataError(str(file), f"row must be an integer, got {row['row']!r}", row=number, field="row")
        labels.append(Label(row["system"], int(row["row"]), LABELS[row["label"]]))
    return labels


@dataclass(frozen=True)
class Yield:
    system: str
    lang: str
    total: int
    masculine: int
    feminine: int
    seconds: float

    @property
    def detected(self) -> int:
        return self.masculine + self.feminine

    @property
    def share(self) -> float:
        return self.detected / self.total if self.total else 0.0


def measure_yield(system: str, lang: str) -> Yield:
    texts = load_translations(system, lang)
    start = time.perf_counter()
    genders = [first_person_gender(text, lang) for text in texts]
    seconds = time.perf_counter() - start
    return Yield(system, lang, len(texts), genders.count("masculine"), genders.count("feminine"), seconds)


@dataclass(frozen=True)
class Accuracy:
    lang: str
    total: int
    correct: int
    errors: list[tuple[Label, str | None]]

    @property
    def share(self) -> float:
        return self.correct / self.total if self.total else 0.0


def measure_accuracy(lang: str) -> Accuracy:
    labels = read_labels(lang)
    texts = {system: load_translations(system, lang) for system in {label.system for label in labels}}
    errors = []
    for label in labels:
        predicted = first_person_gender(texts[label.system][label.row], lang)
        if predicted != label.label:
            errors.append((label, predicted))
    return Accuracy(lang, len(labels), len(labels) - len(errors), errors)


def yield_table(results: list[Yield]) -> str:
    lines = [
        "| system | lang | translations | detected | yield | masculine share of detected | ms / 1000 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        masc = r.masculine / r.detected if r.detected else 0.0
        lines.append(
            f"| {r.system} | {r.lang} | {r.total} | {r.detected} | {100 * r.share:.1f}% | {100 * masc:.1f}% | "
            f"{1e6 * r.seconds / max(r.total, 1):.0f} |"
        )
    return "\n".join(lines)


def accuracy_table(results: list[Accuracy]) -> str:
    lines = ["| lang | labelled | correct | accuracy |", "|---|---:|---:|---:|"]
    lines += [f"| {r.lang} | {r.total} | {r.correct} | {100 * r.share:.1f}% |" for r in results]
    total, correct = sum(r.total for r in results), sum(r.correct for r in results)
    lines.append(f"| all | {total} | {correct} | {100 * correct / total:.1f}% |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", nargs="+", default=list(LANGUAGES), choices=LANGUAGES)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--sample", choices=LANGUAGES, help="print the hand-labelling sample of one language")
    parser.add_argument("--errors", action="store_true", help="list the labelled rows the detector gets wrong")
    args = parser.parse_args(argv)
    if args.sample:
        for system, rows in sample_rows(args.sample).items():
            texts = load_translations(system, args.sample)
            for row in rows:
                print(f"{system}\t{row}\t{texts[row]}")
        return
    yields = [measure_yield(s, lang) for lang in args.langs for s in args.systems if available(s, lang)]
    print(yield_table(yields), end="\n\n")
    accuracies = [measure_accuracy(lang) for lang in args.langs]
    print(accuracy_table(accuracies))
    if args.errors:
        for accuracy in accuracies:
            for label, predicted in accuracy.errors:
                text = load_translations(label.system, accuracy.lang)[label.row]
                print(f"{accuracy.lang}\t{label.system}\t{label.row}\t{label.label}\t{predicted}\t{text}")


if __name__ == "__main__":
    main()
