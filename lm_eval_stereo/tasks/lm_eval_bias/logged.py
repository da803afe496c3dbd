"""The items of lm_eval's own bias tasks, from the lines lm_eval logs with ``--log_samples``: per document its metric
values as ``process_results`` returned them (what lm_eval's aggregations read), keyed so that translations share
a key, and what the reference figures read besides.

- EsBBQ/CaBBQ: the two languages are parallel, row for row, except where a template generated more rows in one of
  them (CaBBQ's PhysicalAppearance template 20: 144 rows, EsBBQ's 120) or labels some rows otherwise (template 32). Their ``instance_id`` counts rows, so it
  drifts after such a template; a row is keyed instead by what it is: category, template, version, flipped,
  question polarity, context condition, question type, label, and its rank among the rows of that description in
  the file's order. Rows of both languages with one key are translations; the rest are counted as unshared.
- BBQ: category and ``example_id``. CrowS-Pairs: the document's index (the pairs have no id of their own).

Each item of a task that judges by comparing log-likelihoods (CrowS-Pairs; BBQ, EsBBQ and CaBBQ multiple choice) marks
its near ties (:mod:`lm_eval_stereo.core.near_ties`): a CrowS-Pairs pair whose two sentences' log-likelihoods lie
within the backends' agreement (its alternative: ``pct_stereotype`` the other way, the two log-likelihoods swapped), a
multiple-choice document with an answer within reach of lm_eval's argmax (each alternative: the values lm_eval's own
``process_results`` gives for that answer, where they differ).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.tasks.lm_eval_bias.lm_eval_functions import LmEvalChanged, process_results, quiet
from lm_eval_stereo.tasks.lm_eval_bias.metrics import task_yaml

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


def _as_logged(value: Any) -> Any:
    """A value ``process_results`` returned as lm_eval logs it and :func:`_plain` reads it back (numpy scalars as
    numbers)."""
    return _plain(
        json.loads(json.dumps(value, default=lambda found: found.item() if hasattr(found, "item") else str(found)))
    )


def choice_near_ties(sample: Mapping[str, Any], values: Mapping[str, Any], yaml: str) -> dict[str, Any]:
    """The near ties of a multiple-choice document (see the module docstring): its options' log-likelihoods, one
    request each, against lm_eval's argmax; each rival's values from lm_eval's ``process_results`` of ``yaml`` with the
    rival the likeliest. Empty where the installed lm_eval has no such function (its numbers stand alone)."""
    lls = _log_likelihoods(sample)
    try:
        process = process_results(yaml)
    except LmEvalChanged:
        return {}
    alternatives = []
    for rival in near_ties.rivals(lls, [near_ties.bound()] * len(lls)):
        raised = [(value, False) for value in lls]
        raised[rival] = (max(lls) + 1.0, False)
        with quiet():
            computed = process(sample["doc"], raised)
        changed = {name: _as_logged(computed[name]) for name in values if name in computed}
        if {**values, **changed} != dict(values):
            alternatives.append({"values": {**values, **changed}})
    return near_ties.marked(alternatives)


def crows_pairs_near_ties(values: Mapping[str, Any], lls: Sequence[float]) -> dict[str, Any]:
    """A CrowS-Pairs pair's near tie (see the module docstring)."""
    more, less = lls
    if not near_ties.near_tie(more, less):
        return near_ties.marked([])
    flipped = {**values, "pct_stereotype": 1.0 - float(values["pct_stereotype"])}
    return near_ties.marked([{"values": flipped, "lls": [less, more]}])


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
        values, lls = _values(sample), _log_likelihoods(sample)
        items[key] = {
            "key": key, "doc_id": sample["doc_id"], "values": values, "lls": lls,
            "direction": doc.get("stereo_antistereo"), "bias_type": doc.get("bias_type"),
            **crows_pairs_near_ties(values, lls),
        }  # fmt: skip
    return items


def items(task: str, samples: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The items of lm_eval's task ``task`` from its logged samples, by key; a multiple-choice task's with their near
    ties (:func:`choice_near_ties`; a generation task's answers are texts, judged by no log-likelihood)."""
    if task.startswith("crows_pairs"):
        return crows_pairs_items(samples)
    found = bsc_items(samples) if task.startswith(("esbbq", "cabbq")) else bbq_items(samples)
    yaml = task_yaml(task)
    if yaml.endswith("bbq_generate.yaml"):
        return found
    by_doc = {sample["doc_id"]: sample for sample in samples}
    return {key: item | choice_near_ties(by_doc[item["doc_id"]], item["values"], yaml) for key, item in found.items()}


def language(task: str) -> tuple[str, str] | None:
    """EsBBQ's and CaBBQ's tasks are translations of each other (``esbbq_age``: Spanish, ``cabbq_age``: Catalan);
    the family is the task name without its language's prefix. None for the others."""
    for prefix, code in (("esbbq", "es"), ("cabbq", "ca")):
        if task.startswith(prefix):
            return code, "lm_eval_bias.esbbq_cabbq/" + task.removeprefix(prefix)
    return None
