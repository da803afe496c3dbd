"""RuBia data (vergrig/RuBia-Dataset): the pro-trope/anti-trope pairs of ``rubia.tsv``, with the authors' task-type
remap.

``rubia.tsv``: a header, then per pair ``<row index>, pro-trope, anti-trope, domain, task_type`` (tab-separated); the
first, unnamed column is the pair's id. The authors' notebook (``Analysis/Model_Scoring.ipynb``) remaps three task
types before scoring (:data:`REMAP`): nationality ``freeform_enemy`` -> ``freeform_full``; class ``template_poor`` and
``template_rich`` -> ``template_wealth``.

Rows become ``{"id", "pro", "anti", "domain", "task_type"}`` (task type after the remap). A missing column, an empty
sentence, a domain not in :data:`TASK_TYPES` or a task type its domain does not have raises
:class:`~lm_eval_stereo.core.errors.MalformedDataError` naming the file, the row (the header is row 1) and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.core.readers import read_csv, require_text
from lm_eval_stereo.tasks.rubia.sources import RUBIA

PAIRS = "rubia.tsv"
PRO, ANTI, DOMAIN, TASK_TYPE = "pro-trope", "anti-trope", "domain", "task_type"
COLUMNS = (PRO, ANTI, DOMAIN, TASK_TYPE)
#: (domain, task type as written) -> the task type the authors score it as
REMAP: dict[tuple[str, str], str] = {
    ("nationality", "freeform_enemy"): "freeform_full",
    ("class", "template_poor"): "template_wealth",
    ("class", "template_rich"): "template_wealth",
}
#: the four domains (``lgbtq`` is the paper's "diverse") and their task types after :data:`REMAP`, sorted as the
#: notebook's ``np.unique`` lists them
TASK_TYPES: dict[str, tuple[str, ...]] = {
    "gender": (
        "freeform_family_full",
        "freeform_family_stereotype",
        "freeform_full",
        "freeform_generic",
        "freeform_job",
        "freeform_prof_full",
        "freeform_prof_stereotype",
        "template_assoc",
        "template_hetpos",
    ),
    "nationality": ("freeform_antisem", "freeform_full", "freeform_immigrant", "template_assoc"),
    "class": ("freeform_full", "freeform_prof", "template_wealth"),
    "lgbtq": ("freeform_gendergap", "freeform_lgb", "freeform_repres", "freeform_transnb", "template_assoc"),
}
DOMAINS = tuple(TASK_TYPES)
#: task types left out of a domain's "all" share (the notebook's ``gets_stats``)
NOT_IN_ALL = frozenset({"freeform_gendergap", "freeform_family_stereotype", "freeform_prof_stereotype"})


def domain_task_types(domain: str) -> tuple[str, ...]:
    """The task types of ``domain``; an unknown domain raises ValueError listing the known ones."""
    if domain not in TASK_TYPES:
        raise ValueError(f"unknown RuBia domain {domain!r}; choose one of {', '.join(DOMAINS)}")
    return TASK_TYPES[domain]


def classify(file: str, row: int, domain: str, task_type: str) -> str:
    """The task type a row is scored under (after :data:`REMAP`); an unknown domain or task type raises
    :class:`MalformedDataError` naming the row and field."""
    if domain not in TASK_TYPES:
        raise MalformedDataError(file, f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}", row, DOMAIN)
    remapped = REMAP.get((domain, task_type), task_type)
    if remapped not in TASK_TYPES[domain]:
        known = ", ".join(sorted({t for (d, t) in REMAP if d == domain} | set(TASK_TYPES[domain])))
        raise MalformedDataError(file, f"unknown {domain} task type {task_type!r}; expected one of {known}", row,
                                 TASK_TYPE)  # fmt: skip
    return remapped


def read_rows(path: Path, extra: Iterable[str] = (), id_column: str | None = "") -> list[dict[str, Any]]:
    """The validated rows of a RuBia table (``rubia.tsv``, or ``scored_data.tsv`` with ``id_column=None``: its rows
    are numbered from 0); ``extra`` columns are required and kept as they are."""
    extra = tuple(extra)
    required = (*COLUMNS, *extra, *(() if id_column is None else (id_column,)))
    rows = []
    for number, record in enumerate(read_csv(path, required=required, delimiter="\t"), start=2):
        require_text(str(path), number, record, (PRO, ANTI))
        if id_column is None:
            pair_id = number - 2
        elif record[id_column].strip().isdigit():
            pair_id = int(record[id_column])
        else:
            raise MalformedDataError(str(path), f"expected the pair's integer id, got {record[id_column]!r}", number,
                                     "(id column)")  # fmt: skip
        rows.append(
            {
                "id": pair_id,
                "pro": record[PRO],
                "anti": record[ANTI],
                "domain": record[DOMAIN],
                "task_type": classify(str(path), number, record[DOMAIN], record[TASK_TYPE]),
                **{name: record[name] for name in extra},
            }
        )
    return rows


@cache
def load_rows() -> tuple[Mapping[str, Any], ...]:
    """Every checksum-verified pair of ``rubia.tsv`` (read once)."""
    return tuple(read_rows(sources.fetch(RUBIA.name, PAIRS)))


def domain_rows(domain: str) -> list[dict[str, Any]]:
    """The pairs of ``domain`` in file order."""
    domain_task_types(domain)
    return [dict(row) for row in load_rows() if row["domain"] == domain]
