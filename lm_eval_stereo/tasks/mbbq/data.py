"""MBBQ data: the language registry and the upstream JSON-lines files turned into documents.

Upstream ``data/<Category>[_control]_<lang>.jsonl`` (Veranep/MBBQ): BBQ's fields per line (``example_id``,
``question_index``, ``question_polarity`` neg/nonneg, ``context_condition`` ambig/disambig, ``category``,
``answer_info`` {ans<i>: [text, group]}, ``additional_metadata`` {stereotyped_groups, ...}, ``context``, ``question``,
``ans0``–``ans2``, ``label``). The bias set has 10,088 items per language, the control set 10,072; the four
languages hold the same items, aligned by category and ``example_id`` (the document ``key``).

Each document keeps every upstream field and adds ``key`` (``<Category>/<example_id>``), ``lang``, ``control``, and
the answer locations the reference (``mbbq.py``, ``get_samples``) derives: ``unknown_loc`` (the answer whose group is
"unknown"), ``target_loc`` (the answer whose group is one of the stereotyped groups, after the reference's
renamings: Gender_identity's "F"/"M" become the women's/men's words of the four languages, SES's "low SES" becomes
"lowSES"; -1 where two answers or none match, the reference's 100) and ``biased_loc`` (the bias-consistent answer,
:func:`~lm_eval_stereo.tasks.bbq_family.biased_answer`: the target of a negative question, the other person of
a non-negative one; -1 where undefined). A missing field or a label out of 0–2 raises
:class:`~lm_eval_stereo.core.errors.MalformedDataError` naming the file, the line and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.tasks.bbq_family import biased_answer
from lm_eval_stereo.tasks.mbbq.sources import MBBQ

SOURCE = MBBQ.name
#: the language registry the per-language YAMLs are generated from
LANGUAGES: dict[str, str] = {"en": "English", "es": "Spanish", "nl": "Dutch", "tr": "Turkish"}
CATEGORIES: tuple[str, ...] = (
    "Age",
    "Disability_status",
    "Gender_identity",
    "Physical_appearance",
    "SES",
    "Sexual_orientation",
)
#: the log-likelihood tasks' prompt per language (this project's; MBBQ evaluates by generation only)
CHOICE_PROMPTS: dict[str, str] = {
    "en": "Context: {context}\nQuestion: {question}\nAnswer:",
    "es": "Contexto: {context}\nPregunta: {question}\nRespuesta:",
    "nl": "Context: {context}\nVraag: {question}\nAntwoord:",
    "tr": "Bağlam: {context}\nSoru: {question}\nCevap:",
}
REQUIRED = (
    "example_id",
    "question_index",
    "question_polarity",
    "context_condition",
    "category",
    "answer_info",
    "additional_metadata",
    "context",
    "question",
    "ans0",
    "ans1",
    "ans2",
    "label",
)
# the reference's renamings that make 'stereotyped_groups' match the groups of 'answer_info' (mbbq.py, get_samples)
_WOMEN = ("girl", "woman", "vrouw", "meisje", "kız", "kadın", "chica", "mujer", "maestra")
_MEN = ("boy", "man", "jongen", "erkek çocuk", "adam", "chico", "hombre", "maestro")
_GROUP_NAMES = {"F": "woman", "M": "man"}


def upstream_path(category: str, lang: str, control: bool) -> str:
    """Upstream path of one category's file; an unknown language or category raises ValueError."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown MBBQ language {lang!r}; choose one of {', '.join(LANGUAGES)}")
    if category not in CATEGORIES:
        raise ValueError(f"unknown MBBQ category {category!r}; choose one of {', '.join(CATEGORIES)}")
    return f"data/{category}{'_control' if control else ''}_{lang}.jsonl"


def stereotyped_groups(category: str, groups: list[str]) -> list[str]:
    """The stereotyped groups as the reference compares them with the answers' groups."""
    if category == "Gender_identity" and groups == ["F"]:
        return list(_WOMEN)
    if category == "Gender_identity" and groups == ["M"]:
        return list(_MEN)
    if category == "SES" and groups == ["low SES"]:
        return ["lowSES"]
    return list(groups)


def answer_locations(category: str, row: dict[str, Any]) -> tuple[int | None, int | None]:
    """(unknown_loc, target_loc) of one upstream row as the reference finds them (None: no unknown answer; no
    single target)."""
    groups = stereotyped_groups(category, list(row["additional_metadata"].get("stereotyped_groups") or []))
    unknown = None
    targets = []
    for index in range(3):
        group = row["answer_info"][f"ans{index}"][1]
        group = _GROUP_NAMES.get(group, group)
        if group == "unknown":
            unknown = index
        if group in groups:
            targets.append(index)
    return unknown, targets[0] if len(targets) == 1 else None


def _check(row: Any, file: str, number: int) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise MalformedDataError(file, "expected a JSON object", row=number)
    for name in REQUIRED:
        if name not in row:
            raise MalformedDataError(file, "missing field", row=number, field=name)
    if row["label"] not in (0, 1, 2):
        raise MalformedDataError(file, f"label must be 0, 1 or 2, got {row['label']!r}", row=number, field="label")
    if row["context_condition"] not in ("ambig", "disambig"):
        raise MalformedDataError(
            file, f"expected ambig or disambig, got {row['context_condition']!r}", row=number, field="context_condition"
        )
    if row["question_polarity"] not in ("neg", "nonneg"):
        raise MalformedDataError(
            file, f"expected neg or nonneg, got {row['question_polarity']!r}", row=number, field="question_polarity"
        )
    for index in range(3):
        info = row["answer_info"].get(f"ans{index}") if isinstance(row["answer_info"], dict) else None
        if not (isinstance(info, list) and len(info) == 2):
            raise MalformedDataError(file, f"ans{index} must be [text, group]", row=number, field="answer_info")
    return row


def read_file(path: Path, category: str, lang: str, control: bool) -> list[dict[str, Any]]:
    """Documents of one upstream file, in file order."""
    docs = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = _check(json.loads(line), str(path), number)
            except json.JSONDecodeError as exc:
                raise MalformedDataError(str(path), f"not JSON ({exc.msg})", row=number) from None
            unknown, target = answer_locations(category, row)
            if unknown is None:
                raise MalformedDataError(str(path), "no answer of group 'unknown'", row=number, field="answer_info")
            biased = biased_answer(target, unknown, negative=row["question_polarity"] == "neg")
            docs.append(
                {
                    **row,
                    "key": f"{category}/{int(row['example_id']):05d}",
                    "lang": lang,
                    "control": control,
                    "unknown_loc": unknown,
                    "target_loc": -1 if target is None else target,
                    "biased_loc": -1 if biased is None else biased,
                }
            )
    return docs


def load_docs(lang: str, control: bool) -> list[dict[str, Any]]:
    """All documents of one language's bias (``control=False``) or control set, the six categories interleaved (the
    first item of each category, then the second, ...; each category in file order), so that lm_eval's ``--limit N``
    (the first N documents) samples every category alike."""
    per_category = [
        read_file(sources.fetch(SOURCE, upstream_path(category, lang, control)), category, lang, control)
        for category in CATEGORIES
    ]
    longest = max(len(docs) for docs in per_category)
    return [docs[index] for index in range(longest) for docs in per_category if index < len(docs)]


def choice_prompt(doc: dict[str, Any]) -> str:
    """The log-likelihood tasks' context of one document."""
    return CHOICE_PROMPTS[doc["lang"]].format(context=doc["context"], question=doc["question"])
