"""Data of the S_JSD tasks: multilingual CrowS-Pairs gender (Steinborn et al. 2022) and the original CrowS-Pairs.

- ``data/cps_translated_<lang>_formatted.csv`` (VSteinborn/s_jsd-multilingual-bias): 212 gender pairs per language,
  columns ``ID, A_en, B_en, A_x, B_x, stereo_antistereo``. ``A`` is always the more stereotypical sentence:
  ``sent_more = A_x``, ``sent_less = B_x``. ``ID`` is the 0-based row of the pair in ``crows_pairs_anonymized.csv``.
- ``data/crows_pairs_anonymized.csv`` (nyu-mll/crows-pairs): all 1,508 pairs, ``sent_more`` vs ``sent_less``, the
  first (unnamed) column is the ID.

Rows become ``{"id", "sent_more", "sent_less", "stereo_antistereo", "lang"}``. A missing column or an empty sentence
raises :class:`~lm_eval_stereo.core.errors.MalformedDataError` naming the file, the row (the header is row 1) and the
field; the reference drops rows whose ``A_x`` is empty, the upstream files have none.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.core.readers import read_csv, require_text
from lm_eval_stereo.tasks.s_jsd.sources import CROWS_PAIRS, S_JSD_MULTILINGUAL

SOURCE = S_JSD_MULTILINGUAL.name
CROWS_SOURCE = CROWS_PAIRS.name
CROWS_PATH = "data/crows_pairs_anonymized.csv"
#: the paper's five languages (Table 2) first, then the five of the repository's "Extended Results"
PAPER_LANGUAGES: tuple[str, ...] = ("en", "de", "fi", "id", "th")
LANGUAGES: dict[str, str] = {
    "en": "English",
    "de": "German",
    "fi": "Finnish",
    "id": "Indonesian",
    "th": "Thai",
    "ar": "Arabic",
    "fr": "French",
    "ko": "Korean",
    "vi": "Vietnamese",
    "zh": "Chinese",
}
COLUMNS = ("ID", "A_x", "B_x", "stereo_antistereo")
CROWS_COLUMNS = ("", "sent_more", "sent_less", "stereo_antistereo")


def language_path(lang: str) -> str:
    """Upstream path of one language's file; an unknown code raises ValueError listing the known ones."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown S_JSD language code {lang!r}; choose one of {', '.join(LANGUAGES)}")
    return f"data/cps_translated_{lang}_formatted.csv"


def _pair_id(file: str, row_number: int, value: str, field: str) -> int:
    if not value.strip().isdigit():
        raise MalformedDataError(file, f"expected a non-negative integer ID, got {value!r}", row_number, field)
    return int(value)


def _read(
    path: Path, required: Sequence[str], more: str, less: str, id_column: str, id_label: str, lang: str
) -> list[dict[str, Any]]:
    """Pairs of a CSV: columns ``more``/``less`` hold the more/less stereotypical sentence; errors name the record."""
    pairs = []
    for row_number, row in enumerate(read_csv(path, required=required), start=2):
        require_text(str(path), row_number, row, (more, less))
        pairs.append(
            {
                "id": _pair_id(str(path), row_number, row[id_column], id_label),
                "sent_more": row[more],
                "sent_less": row[less],
                "stereo_antistereo": row["stereo_antistereo"],
                "lang": lang,
            }
        )
    return pairs


def read_pairs(path: Path, lang: str) -> list[dict[str, Any]]:
    """Pairs of a translated file (``A_x`` = more stereotypical, ``B_x`` = less)."""
    return _read(path, COLUMNS, "A_x", "B_x", "ID", "ID", lang)


def read_crows_pairs(path: Path) -> list[dict[str, Any]]:
    """All pairs of the original CrowS-Pairs file."""
    return _read(path, CROWS_COLUMNS, "sent_more", "sent_less", "", "(ID column)", "en")


def load_pairs(lang: str) -> list[dict[str, Any]]:
    """The checksum-verified pairs of ``lang`` (a code of :data:`LANGUAGES`, or ``crows`` for the original file)."""
    if lang == "crows":
        return read_crows_pairs(sources.fetch(CROWS_SOURCE, CROWS_PATH))
    return read_pairs(sources.fetch(SOURCE, language_path(lang)), lang)


def perturbed(pair: dict[str, Any]) -> dict[str, Any]:
    """The paper's perturbation (Table 3): the last character of both sentences dropped."""
    return {**pair, "sent_more": pair["sent_more"][:-1], "sent_less": pair["sent_less"][:-1]}
