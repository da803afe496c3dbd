"""The authors' published numbers: every item's perplexity per model (``scored_data.tsv``) and the per-domain and
per-task-type scores (``Analysis/statistics.tsv``), read into the plugin's items and names.

``scored_data.tsv`` holds the pairs (already remapped, :data:`~lm_eval_stereo.tasks.rubia.data.REMAP`) and per model
``ppl-pro-<model>`` / ``ppl-anti-<model>``; it has 2,239 rows, 18 more gender rows than ``rubia.tsv`` (pairs the final
release dropped), and the published scores are computed over all of them. ``statistics.tsv`` is written with decimal
commas and percentages rounded to one decimal (``round(share * 100, 1)``), and names some things otherwise than the
notebook does: the domain ``diverse`` (``lgbtq``), its task types ``freeform_1`` .. ``freeform_4`` (the four freeform
task types of ``lgbtq`` in sorted order, :data:`STATISTICS_TASK_TYPES`) and the models (:data:`STATISTICS_MODELS`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.core.readers import read_csv
from lm_eval_stereo.tasks.rubia.data import TASK_TYPES, read_rows
from lm_eval_stereo.tasks.rubia.sources import RUBIA

SCORED = "scored_data.tsv"
STATISTICS = "Analysis/statistics.tsv"
#: the models of ``scored_data.tsv`` (its column suffixes), in its column order
SCORED_MODELS = (
    "ruGPT-large",
    "ruGPT-base",
    "XGLM",
    "mGPT",
    "ruT5-base",
    "ruT5-large",
    "mT5-large",
    "rubert-base",
    "twhin-bert",
    "ruRoberta-large",
    "ruBert-large",
    "xlm-roberta-large",
    "aiDungeon",
)
#: ``statistics.tsv`` column -> ``scored_data.tsv`` model (the notebook's "ruGPT-base" is
#: ai-forever/rugpt3medium_based_on_gpt2); ruT5, mT5 and aiDungeon have no published column
STATISTICS_MODELS = {
    "XGLM": "XGLM",
    "mGPT": "mGPT",
    "ruBERT-large": "ruBert-large",
    "ruGPT-medium": "ruGPT-base",
    "ruGPT-large": "ruGPT-large",
    "ruRoBERTa-large": "ruRoberta-large",
    "ruBERT-base": "rubert-base",
    "TwHIN-BERT": "twhin-bert",
    "xlm-roberta-large": "xlm-roberta-large",
}
STATISTICS_DOMAINS = {"diverse": "lgbtq"}
STATISTICS_TASK_TYPES = {
    ("lgbtq", f"freeform_{i}"): name for i, name in enumerate(TASK_TYPES["lgbtq"][:4], start=1)
}  # fmt: skip


def _number(file: str, row: int, field: str, value: str) -> float:
    try:
        return float(value.replace(",", "."))
    except ValueError:
        raise MalformedDataError(file, f"expected a number, got {value!r}", row, field) from None


def scored_items(model: str, path: Path | None = None) -> list[dict[str, Any]]:
    """The published items of ``model`` (one of :data:`SCORED_MODELS`): the rows (``id`` = row number from 0) with the
    authors' perplexities ``ppl_pro``, ``ppl_anti``."""
    if model not in SCORED_MODELS:
        raise ValueError(f"unknown RuBia model {model!r}; choose one of {', '.join(SCORED_MODELS)}")
    path = path or sources.fetch(RUBIA.name, SCORED)
    columns = (f"ppl-pro-{model}", f"ppl-anti-{model}")
    items = []
    for number, row in enumerate(read_rows(path, columns, id_column=None), start=2):
        pro, anti = (_number(str(path), number, column, row.pop(column)) for column in columns)
        items.append({**row, "ppl_pro": pro, "ppl_anti": anti})
    return items


def statistics(path: Path | None = None) -> dict[tuple[str, str, str], float]:
    """The published percentages: ``(scored_data model, domain, task type or "all") -> percent``."""
    path = path or sources.fetch(RUBIA.name, STATISTICS)
    published = {}
    for number, row in enumerate(read_csv(path, required=("Domain", "Subdomain", *STATISTICS_MODELS),
                                          delimiter="\t"), start=2):  # fmt: skip
        domain = STATISTICS_DOMAINS.get(row["Domain"], row["Domain"])
        if domain not in TASK_TYPES:
            raise MalformedDataError(str(path), f"unknown domain {row['Domain']!r}", number, "Domain")
        task_type = STATISTICS_TASK_TYPES.get((domain, row["Subdomain"]), row["Subdomain"])
        if task_type != "all" and task_type not in TASK_TYPES[domain]:
            raise MalformedDataError(str(path), f"unknown {domain} task type {row['Subdomain']!r}", number,
                                     "Subdomain")  # fmt: skip
        for column, model in STATISTICS_MODELS.items():
            published[model, domain, task_type] = _number(str(path), number, column, row[column])
    return published
