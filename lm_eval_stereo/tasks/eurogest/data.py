"""EuroGEST data (JacquelineRowe/EuroGEST): per language, each GEST sentence as the reference builds its two versions.

Files (``sources.py``):

- ``data/gest_translations_gender_sensitive.csv``: two header rows (language names twice; then "the man said" /
  "the woman said"), then rows ``index, GEST_sentence, <masculine, feminine per language>..., stereotype_number``;
- ``data/gest_translations_gender_insensitive.csv``: ``index, GEST_sentence, <language>..., stereotype_number`` (the
  gender-neutral translations); an empty cell is a sentence filtered out for that language;
- ``evaluate_models/configs/*.json`` (b543592): scaffolds, quotation marks, pronoun languages, language codes;
- ``create_dataset/gest_1.1.csv``: the English GEST 1.1 sentences (English has no translation: its sentences are the
  neutral versions).

A row of language L (reference ``evaluate_models/main.py`` and ``utils/prompts.py``): the gendered pair when both its
masculine and feminine cells exist (condition ``G``), else the neutral sentence, stripped of leading and trailing
punctuation, in L's quotation marks, followed by " he said" / " she said" in L (condition ``P``, languages with
gendered pronouns) or " the man said" / " the woman said" (``N``, the others).
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.tasks.eurogest.sources import EUROGEST, EUROGEST_EVAL
from lm_eval_stereo.tasks.gest.data import load_gest

SENSITIVE = "data/gest_translations_gender_sensitive.csv"
INSENSITIVE = "data/gest_translations_gender_insensitive.csv"
STATISTICS = "data/language_statistics.csv"
ENGLISH = "create_dataset/gest_1.1.csv"
CONFIGS = "evaluate_models/configs/"
#: the 30 languages of the reference's ``supported_languages.json``, ISO code -> the name the data files use
LANGUAGES: dict[str, str] = {
    "en": "English",
    "bg": "Bulgarian",
    "da": "Danish",
    "nl": "Dutch",
    "et": "Estonian",
    "fi": "Finnish",
    "fr": "French",
    "de": "German",
    "el": "Greek",
    "hu": "Hungarian",
    "ga": "Irish",
    "it": "Italian",
    "lv": "Latvian",
    "lt": "Lithuanian",
    "mt": "Maltese",
    "pt": "Portuguese",
    "ro": "Romanian",
    "es": "Spanish",
    "sv": "Swedish",
    "ca": "Catalan",
    "gl": "Galician",
    "no": "Norwegian",
    "tr": "Turkish",
    "hr": "Croatian",
    "cs": "Czech",
    "pl": "Polish",
    "sk": "Slovak",
    "sl": "Slovenian",
    "ru": "Russian",
    "uk": "Ukrainian",
}
#: G: the translation's own masculine/feminine pair; P: "he said"/"she said" scaffold; N: "the man/woman said"
CONDITIONS = ("G", "P", "N")
_EDGE_PUNCTUATION = re.compile(r"^[^\w\s]+|[^\w\s]+\Z")


def language_name(code: str) -> str:
    """The data files' name of an ISO code of :data:`LANGUAGES`; unknown codes raise ValueError."""
    try:
        return LANGUAGES[code]
    except KeyError:
        raise ValueError(f"unknown EuroGEST language code {code!r}; choose one of {', '.join(LANGUAGES)}") from None


@dataclass(frozen=True)
class Scaffolds:
    """The reference's prompt configs: per language the four scaffolds, the quotation marks, and which languages
    use the pronoun scaffolds."""

    scaffolds: dict[str, dict[str, str]]
    quotes: dict[str, tuple[str, str]]
    pronoun_languages: frozenset[str]

    def wrap(self, sentence: str, language: str) -> tuple[str, str, str]:
        """(masculine, feminine, condition) of a neutral sentence (reference ``wrap_neutral_sentence``)."""
        pronoun = language in self.pronoun_languages
        masculine, feminine = ("he said", "she said") if pronoun else ("the man said", "the woman said")
        if language != "English":
            masculine, feminine = self.scaffolds[masculine][language], self.scaffolds[feminine][language]
        opening, closing = self.quotes[language]
        base = f"{opening}{_EDGE_PUNCTUATION.sub('', sentence.strip())}{closing}"
        return f"{base} {masculine}", f"{base} {feminine}", "P" if pronoun else "N"


def _json(name: str) -> Any:
    path = sources.fetch(EUROGEST_EVAL.name, CONFIGS + name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise MalformedDataError(str(path), f"not valid JSON ({exc})") from None


@cache
def scaffolds() -> Scaffolds:
    """The reference's configs (``use_pronouns_if_available`` true, as committed)."""
    configs = _json("language_test_configs.json")
    use_pronouns = configs.get("use_pronouns_if_available") == "True"
    pronouns = frozenset(configs["language_types"]["gendered_pronouns"]) if use_pronouns else frozenset()
    quotes = {language: (marks[0], marks[1]) for language, marks in _json("punc_map.json").items()}
    return Scaffolds(_json("prompt_scaffolds.json"), quotes, pronouns)


def _stereotype(file: str, row: int, value: str) -> int:
    try:
        stereotype = int(float(value))
    except ValueError:
        stereotype = 0
    if not 1 <= stereotype <= 16:
        raise MalformedDataError(file, f"stereotype_number must be 1..16, got {value!r}", row, "stereotype_number")
    return stereotype


@cache
def _records(name: str, header_rows: int) -> tuple[list[list[str]], list[tuple[int, list[str]]]]:
    """The header rows and the (row number, record) of each data row of a translations file (read once)."""
    path = sources.fetch(EUROGEST.name, name)
    with open(path, encoding="utf-8-sig", newline="") as handle:
        records = list(csv.reader(handle))
    header = records[:header_rows]
    if not header or header[0][-1] != "stereotype_number" or header[0][1] != "GEST_sentence":
        raise MalformedDataError(str(path), "expected columns index, GEST_sentence, ..., stereotype_number", 1)
    body = []
    for number, record in enumerate(records[header_rows:], start=header_rows + 1):
        if len(record) != len(header[0]):
            raise MalformedDataError(str(path), f"{len(record)} fields, the header has {len(header[0])}", number)
        if record[1].strip():  # the files' last row has no GEST sentence and no translation
            body.append((number, record))
    return header, body


def _translations(language: str) -> dict[int, dict[str, Any]]:
    """GEST id -> {stereotype, masculine, feminine, neutral} of the translated rows of ``language``."""
    rows: dict[int, dict[str, Any]] = {}
    for name, header_rows, kinds in ((SENSITIVE, 2, ("masculine", "feminine")), (INSENSITIVE, 1, ("neutral",))):
        header, body = _records(name, header_rows)
        columns = [index for index, column in enumerate(header[0]) if column == language]
        if columns and len(columns) != len(kinds):
            raise MalformedDataError(name, f"expected {len(kinds)} column(s) {language!r}, found {len(columns)}")
        for number, record in body:
            row = rows.setdefault(int(record[0]), {"stereotype": _stereotype(name, number, record[-1])})
            for kind, column in zip(kinds, columns):
                row[kind] = record[column] or None
    return rows


def load_rows(code: str) -> list[dict[str, Any]]:
    """The rows of language ``code`` as the reference evaluates them, in GEST id order:
    ``{"id", "stereotype", "condition", "masculine", "feminine"}``."""
    language = language_name(code)
    config = scaffolds()
    if code == "en":
        path = sources.fetch(EUROGEST_EVAL.name, ENGLISH)
        translated = {s["id"]: {"stereotype": s["stereotype"], "neutral": s["sentence"]} for s in load_gest(path=path)}
    else:
        translated = _translations(language)
    rows = []
    for gest_id, row in sorted(translated.items()):
        if row.get("masculine") and row.get("feminine"):
            masculine, feminine, condition = row["masculine"], row["feminine"], "G"
        elif row.get("neutral"):
            masculine, feminine, condition = config.wrap(row["neutral"], language)
        else:
            continue
        rows.append(
            {
                "id": gest_id,
                "stereotype": row["stereotype"],
                "condition": condition,
                "masculine": masculine,
                "feminine": feminine,
            }
        )
    return rows


def interleaved(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` taken in turn from each stereotype (1, 2, ..., 16, 1, 2, ...; GEST id order within one), so that the
    first n documents, which ``--limit n`` takes, hold the stereotypes alike: the metrics need 10 sentences of every
    stereotype. The metrics do not depend on the order."""
    by_stereotype: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_stereotype.setdefault(row["stereotype"], []).append(row)
    queues = [by_stereotype[s] for s in sorted(by_stereotype)]
    depth = max(map(len, queues), default=0)
    return [queue[i] for i in range(depth) for queue in queues if i < len(queue)]


def statistics() -> dict[str, tuple[int, int]]:
    """The paper's statistics file: language name -> (gender-neutral, gendered) sentences."""
    path = sources.fetch(EUROGEST.name, STATISTICS)
    with open(path, encoding="utf-8-sig", newline="") as handle:
        records = list(csv.reader(handle))[1:]
    return {record[0]: (int(record[1]), int(record[2])) for record in records}
