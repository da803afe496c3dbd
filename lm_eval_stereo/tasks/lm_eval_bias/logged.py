"""The items of lm_eval's own bias tasks, from the lines lm_eval logs with ``--log_samples``: per document its metric
values as ``process_results`` returned them (what lm_eval's aggregations read), keyed so that translations share
a key, and what the reference figures read besides.

- EsBBQ/CaBBQ: the two languages are parallel, row for row, except where a template generated more rows in one of
  them (CaBBQ's PhysicalAppearance template 20: 144 rows, EsBBQ's 120) or labels some rows otherwise (template 32). Their ``instance_id`` counts rows, so it
  drifts after such a template; a row is keyed instead by what it is: category, template, version, flipped,
  question polarity, context condition, question type, label, and its rank among the rows of that description in
  the file's order. Rows of both languages with one key are translations; the rest are counted as unshared.
- BBQ: category and ``example_id``. CrowS-Pairs: the document's index (the pairs have no id of their own).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

#: the fields of an EsBBQ/CaBBQ row that say what it is (with its rank among the rows alike: its key)
ROW_FIELDS = ("category", "template_id", "version", "flipped", "question_polarity", "context_condition",
              "question_type", "label")  # fmt: skip


def _plain(value: Any) -> Any:
    """A logged value as lm_eval's aggregation reads it: numpy booleans lm_eval logged as text back to booleans."""
    if isinstance(value, list):
        return tuple(_plain(entry) for entry in value)
    return {"True": True, "False": False}.get(value, value) if isinstance(value, str) else value


def _values(sample: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _plain(sample[name]) for name in sample.get("metrics") or () if name in sample}


def _log_likelihoods(sample: Mapping[str, Any]) -> list[float]:
    return [
        float(json.loads(entry[0]) if isinstance(entry[0], str) else entry[0]) for entry in sample["filtered_resps"]
    ]


def bsc_items(samples: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """EsBBQ/CaBBQ items by the key translations share (see the module docstring)."""
    seen: Counter[tuple[str, ...]] = Counter()
    items = {}
    for sample in sorted(samples, key=lambda sample: sample["doc_id"]):
        doc = sample["doc"]
        description = tuple(str(doc.get(field, "")) for field in ROW_FIELDS)
        key = "/".join((*description, f"{seen[description]:05d}"))
        seen[description] += 1
        items[key] = {"key": key, "doc_id": sample["doc_id"], "values": _values(sample), "category": doc["category"]}
    return items


def bbq_items(samples: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """BBQ items by category and example id."""
    items = {}
    for sample in samples:
        doc = sample["doc"]
        key = f"{doc['category']}/{int(doc['example_id']):06d}"
        items[key] = {"key": key, "doc_id": sample["doc_id"], "values": _values(sample), "category": doc["category"]}
    return items


def crows_pairs_items(samples: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """CrowS-Pairs items by document index, with both sentences' log-likelihoods and the pair's direction."""
    items = {}
    for sample in samples:
        key = f"{int(sample['doc_id']):06d}"
        doc = sample["doc"]
        items[key] = {
            "key": key, "doc_id": sample["doc_id"], "values": _values(sample), "lls": _log_likelihoods(sample),
            "direction": doc.get("stereo_antistereo"), "bias_type": doc.get("bias_type"),
        }  # fmt: skip
    return items


def items(task: str, samples: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The items of lm_eval's task ``task`` from its logged samples, by key."""
    if task.startswith(("esbbq", "cabbq")):
        return bsc_items(samples)
    if task.startswith("crows_pairs"):
        return crows_pairs_items(samples)
    return bbq_items(samples)


def language(task: str) -> tuple[str, str] | None:
    """EsBBQ's and CaBBQ's tasks are translations of each other (``esbbq_age``: Spanish, ``cabbq_age``: Catalan);
    the family is the task name without its language's prefix. None for the others."""
    for prefix, code in (("esbbq", "es"), ("cabbq", "ca")):
        if task.startswith(prefix):
            return code, "lm_eval_bias.esbbq_cabbq/" + task.removeprefix(prefix)
    return None
