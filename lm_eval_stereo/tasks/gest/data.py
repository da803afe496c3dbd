"""GEST data (kinit-sk/gest): the English samples, the published per-sample scores and the Slavic minimal pairs.

- ``data/gest.csv`` (version 1.0) and ``data/gest_1.1.csv`` (1.1, 244 typo fixes; the default): columns
  ``sentence, stereotype``; rows become ``{"id", "sentence", "stereotype", "version"}`` (``id`` = 0-based row index,
  the line order of the published prediction files).
- ``data/predictions/**.txt``: one float per line.
- pairs files (upstream ``data/gender_variants.csv``): columns ``language, stereotype, male, female`` (others kept),
  annotated with the reference filters of ``_slavic_mlm.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import DataUnavailableError, MalformedDataError
from lm_eval_stereo.core.readers import read_csv, require_text
from lm_eval_stereo.tasks.gest.sources import GEST

SOURCE = GEST.name
VERSIONS: dict[str, str] = {"1.0": "data/gest.csv", "1.1": "data/gest_1.1.csv"}
DEFAULT_VERSION = "1.1"
PAIRS_PATH = "data/gender_variants.csv"
PAIR_COLUMNS = ("language", "stereotype", "male", "female")
#: the Slavic languages of the paper (reference ``utils.all_languages``), with their English names
LANGUAGES: dict[str, str] = {
    "be": "Belarusian",
    "ru": "Russian",
    "uk": "Ukrainian",
    "hr": "Croatian",
    "sl": "Slovene",
    "sr": "Serbian",
    "cs": "Czech",
    "pl": "Polish",
    "sk": "Slovak",
}
#: why a pair is left out, in the order the filters are checked
EXCLUSIONS = ("first_letter", "tokenization", "duplicate")


def language_name(code: str) -> str:
    """English name of a language code of the paper's Slavic experiments; unknown codes raise ValueError."""
    try:
        return LANGUAGES[code]
    except KeyError:
        raise ValueError(f"unknown GEST language code {code!r}; choose one of {', '.join(LANGUAGES)}") from None


def _stereotype(file: str, row_number: int, value: str) -> int:
    try:
        stereotype = int(value)
    except (TypeError, ValueError):
        stereotype = 0
    if not 1 <= stereotype <= 16:
        raise MalformedDataError(file, f"stereotype must be an integer 1..16, got {value!r}", row_number, "stereotype")
    return stereotype


def load_gest(version: str = DEFAULT_VERSION, path: Path | None = None) -> list[dict[str, Any]]:
    """The GEST samples of ``version`` (from ``path`` when given, else the checksum-verified upstream file)."""
    version = str(version)
    if version not in VERSIONS:
        raise ValueError(f"unknown GEST version {version!r}; choose one of {', '.join(VERSIONS)}")
    path = Path(path) if path is not None else sources.fetch(SOURCE, VERSIONS[version])
    rows = read_csv(path, required=["sentence", "stereotype"])
    samples = []
    for index, row in enumerate(rows):
        row_number = index + 2
        require_text(str(path), row_number, row, ["sentence"])
        samples.append(
            {
                "id": index,
                "sentence": row["sentence"],
                "stereotype": _stereotype(str(path), row_number, row["stereotype"]),
                "version": version,
            }
        )
    return samples


def read_scores(path: Path) -> list[float]:
    """A published prediction file: one float per line (blank lines are not allowed)."""
    scores = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        try:
            scores.append(float(line))
        except ValueError:
            raise MalformedDataError(str(path), f"expected a number, got {line!r}", row=number) from None
    return scores


def pairs_path(pairs_file: str | Path | None) -> Path:
    """The user's pairs file, or the upstream ``data/gender_variants.csv`` (absent from the offline mirror)."""
    if pairs_file:
        path = Path(pairs_file).expanduser()
        if not path.is_file():
            raise DataUnavailableError(f"pairs_file {str(path)!r} does not exist")
        return path
    try:
        return sources.fetch(SOURCE, PAIRS_PATH)
    except DataUnavailableError as exc:
        raise DataUnavailableError(
            f"the GEST pairs file {PAIRS_PATH} is not available ({exc}). Point the task at a CSV with columns "
            f'{", ".join(PAIR_COLUMNS)}: --metadata \'{{"pairs_file": "/path/to/pairs.csv"}}\''
        ) from None


def load_pairs(path: Path) -> list[dict[str, Any]]:
    """Rows of a pairs file with validated ``language``, ``stereotype`` (int 1..16), ``male`` and ``female``."""
    rows = read_csv(path, required=PAIR_COLUMNS)
    pairs = []
    for index, row in enumerate(rows):
        row_number = index + 2
        require_text(str(path), row_number, row, PAIR_COLUMNS)
        pairs.append({**row, "row": row_number, "stereotype": _stereotype(str(path), row_number, row["stereotype"])})
    return pairs


def first_letter_check(male: str, female: str) -> bool:
    """The first differing whitespace-separated words start with the same letter (False when no word differs)."""
    for male_word, female_word in zip(male.split(), female.split()):
        if male_word != female_word:
            return male_word[0] == female_word[0]
    return False


def tokenization_check(male_tokens: Sequence[str], female_tokens: Sequence[str]) -> bool:
    """Both sentences have the same number of tokens and exactly one position differs."""
    differing = sum(m != f for m, f in zip(male_tokens, female_tokens))
    return len(male_tokens) == len(female_tokens) and differing == 1


def annotate_pairs(
    pairs: Sequence[dict[str, Any]], tokenize: Callable[[str], Sequence[str]] | None
) -> list[dict[str, Any]]:
    """Each pair with ``excluded``: "" (kept) or the first failing filter of :data:`EXCLUSIONS`.

    Filters of the reference: same first letter of the differing word; equal token count with exactly one differing
    token (skipped when ``tokenize`` is None); later duplicates of a (male, female) pair over the whole file.
    """
    seen: set[tuple[str, str]] = set()
    annotated = []
    for pair in pairs:
        key = (pair["male"], pair["female"])
        if not first_letter_check(*key):
            reason = "first_letter"
        elif tokenize is not None and not tokenization_check(tokenize(key[0]), tokenize(key[1])):
            reason = "tokenization"
        elif key in seen:
            reason = "duplicate"
        else:
            reason = ""
        seen.add(key)
        annotated.append({**pair, "excluded": reason})
    return annotated
