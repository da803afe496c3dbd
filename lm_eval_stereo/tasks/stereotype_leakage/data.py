"""Stereotype-leakage data (AnnaSou/Stereotype_Leakage, MIT): languages, the 32 ABC traits, the 30 social groups.

Upstream files (pinned as ``stereotype-leakage`` in :mod:`.sources`):

- ``dataset/data_full_{english,russian,chinese,hindi}.json``: annotator -> group (English plural, e.g. ``"women"``)
  -> ``"left - right"`` trait pair -> slider value in [-50, 50];
- ``dataset/aggregated_data_{EN,RU,ZH,HI}.csv``: the published aggregation, 32 trait rows x 30 group columns
  (English singular names, e.g. ``"woman"``), 999 = group not rated in that language.

Names are those of the aggregated CSVs (``low status``, ``non religious``, ``egoistic``); :data:`TRAIT_ALIASES` maps
the spellings of the reference's model code (``low-status``, ``egotistic``) onto them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.tasks.stereotype_leakage.sources import STEREOTYPE_LEAKAGE

SOURCE = STEREOTYPE_LEAKAGE.name

#: language code -> (English name, upper-case code of the upstream file names)
LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("English", "EN"),
    "ru": ("Russian", "RU"),
    "zh": ("Chinese", "ZH"),
    "hi": ("Hindi", "HI"),
}

#: the 16 trait pairs of the ABC model (left, right), in the order of the aggregated CSVs
TRAIT_PAIRS: tuple[tuple[str, str], ...] = (
    ("powerless", "powerful"),
    ("low status", "high status"),
    ("dominated", "dominant"),
    ("poor", "wealthy"),
    ("unconfident", "confident"),
    ("unassertive", "competitive"),
    ("traditional", "modern"),
    ("religious", "non religious"),
    ("conservative", "liberal"),
    ("untrustworthy", "trustworthy"),
    ("dishonest", "sincere"),
    ("cold", "warm"),
    ("threatening", "benevolent"),
    ("repellent", "likable"),
    ("egoistic", "altruistic"),
    ("irrational", "rational"),
)
TRAITS: tuple[str, ...] = tuple(trait for pair in TRAIT_PAIRS for trait in pair)
#: spellings of the reference's model code -> the human tables' names
TRAIT_ALIASES: dict[str, str] = {"egotistic": "egoistic", "low-status": "low status", "high-status": "high status"}

#: the 18 groups rated in every language (paper Table 2)
SHARED_GROUPS: tuple[str, ...] = (
    "woman", "immigrant", "civil servant", "disabled person", "housewife", "single mother", "man", "gay man",
    "lesbian", "software engineer", "wealthy person", "poor person", "Asian person", "Black person", "Muslim person",
    "government official", "feminist", "veteran",
)  # fmt: skip
#: the 30 groups in the column order of the aggregated CSVs
GROUPS: tuple[str, ...] = (
    "woman", "immigrant", "civil servant", "disabled person", "muscovite", "Texan", "Shanghainese person", "housewife",
    "single mother", "man", "gay man", "lesbian", "software engineer", "wealthy person", "poor person", "Asian person",
    "Black person", "Muslim person", "government official", "feminist", "veteran", "Hui person", "migrant worker",
    "Chechenets", "VDV soldier", "Mormon person", "Puerto Rican", "Gujarati person", "Brahmin person", "Shudra person",
)  # fmt: skip
#: group names of the annotator files (English plural) -> column names; ``Bahmin people`` is the Russian file's typo
ANNOTATION_GROUPS: dict[str, str] = {
    "women": "woman", "immigrants": "immigrant", "civil servants": "civil servant", "disabled people": "disabled person",
    "Muscovites": "muscovite", "Texans": "Texan", "Shanghainese people": "Shanghainese person",
    "housewives": "housewife", "single mothers": "single mother", "men": "man", "gay men": "gay man",
    "lesbians": "lesbian", "software engineers": "software engineer", "wealthy people": "wealthy person",
    "poor people": "poor person", "Asian people": "Asian person", "Black people": "Black person",
    "Muslim people": "Muslim person", "government officials": "government official", "feminists": "feminist",
    "veterans": "veteran", "Hui people": "Hui person", "migrant workers": "migrant worker", "Chechentsy": "Chechenets",
    "VDV soldiers": "VDV soldier", "Mormon people": "Mormon person", "Puerto Ricans": "Puerto Rican",
    "Gujarati people": "Gujarati person", "Brahmin people": "Brahmin person", "Bahmin people": "Brahmin person",
    "Shudra people": "Shudra person",
}  # fmt: skip
#: trait-pair keys of the annotator files -> (left, right) names of the tables
ANNOTATION_PAIRS: dict[str, tuple[str, str]] = {f"{left} - {right}": (left, right) for left, right in TRAIT_PAIRS}
#: the upstream marker of an unrated group
UNRATED = 999


def language(code: str) -> str:
    """``code`` lower-cased if it is one of the paper's four languages, else ValueError naming them."""
    key = str(code).strip().lower()
    if key not in LANGUAGES:
        raise ValueError(f"unknown stereotype-leakage language {code!r}; choose one of {', '.join(LANGUAGES)}")
    return key


def annotations_path(lang: str) -> str:
    return f"dataset/data_full_{LANGUAGES[language(lang)][0].lower()}.json"


def aggregated_path(lang: str) -> str:
    return f"dataset/aggregated_data_{LANGUAGES[language(lang)][1]}.csv"


def canonical_trait(name: str) -> str:
    """The human tables' name of a trait spelled as in the reference's model code."""
    return TRAIT_ALIASES.get(name, name)


def load_annotations(lang: str, path: Path | None = None) -> dict[str, dict[str, dict[tuple[str, str], float]]]:
    """annotator -> group (column name) -> (left, right) -> slider value, from the raw annotator file of ``lang``."""
    path = Path(path) if path is not None else sources.fetch(SOURCE, annotations_path(lang))
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedDataError(str(path), f"not valid UTF-8 JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise MalformedDataError(str(path), "expected an object annotator -> group -> trait pair -> score")
    result: dict[str, dict[str, dict[tuple[str, str], float]]] = {}
    for annotator, groups in raw.items():
        result[annotator] = {}
        for group, pairs in groups.items():
            if group not in ANNOTATION_GROUPS:
                raise MalformedDataError(str(path), f"annotator {annotator!r}: unknown group {group!r}")
            unknown = sorted(set(pairs) - set(ANNOTATION_PAIRS))
            if unknown:
                raise MalformedDataError(
                    str(path), f"annotator {annotator!r}, group {group!r}: unknown pairs {unknown}"
                )
            result[annotator][ANNOTATION_GROUPS[group]] = {
                ANNOTATION_PAIRS[key]: float(value) for key, value in pairs.items()
            }
    return result
