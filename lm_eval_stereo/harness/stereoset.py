"""Task glue for ``stereoset_multi_*`` (causal LMs, Öztürk et al. 2023 "generative" method).

- intrasentence: the whole candidate sentence, conditioned on the model's BOS/end-of-text token only;
- intersentence (method "d"): the candidate after ``context`` (a "." is appended when the context does not end in
  . ! ?), with a space between them;
- score = log-likelihood / number of normalisation units (tokens of the evaluated model by default, Eq. 4).

Every document returns its item (the three candidate scores, see :func:`lm_eval_stereo.metrics.stereoset.compute`)
under the first metric, ``lms``, and its key under the others (:class:`~lm_eval_stereo.harness.shared_summary.SharedSummary`),
so the per-candidate scores are logged once per document in ``--log_samples``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets

from lm_eval_stereo.datasets.stereoset import CANDIDATES, load_rows
from lm_eval_stereo.harness import normalization
from lm_eval_stereo.harness.shared_summary import SharedSummary
from lm_eval_stereo.metrics import stereoset

SENTENCE_END = (".", "!", "?")


def intersentence_context(context: str) -> str:
    """Method "d": the context with a full stop appended when it does not end a sentence."""
    context = context.rstrip()
    return context if context.endswith(SENTENCE_END) else context + "."


def request_parts(row: dict[str, Any]) -> tuple[str, list[str]]:
    """(context, continuations in c1..c3 order) of the loglikelihood requests for one row."""
    if row["test"] == "intrasentence":
        return "", [row[f"c{c}_sentence"] for c in CANDIDATES]
    return intersentence_context(row["context"]), [" " + row[f"c{c}_sentence"].strip() for c in CANDIDATES]


def custom_dataset(lang: str, **metadata: Any) -> dict[str, datasets.Dataset]:
    """The rows of one language with each candidate's normalisation count for the evaluated model."""
    normalizer = normalization.resolve(metadata)
    rows = load_rows(lang)
    for row in rows:
        context, continuations = request_parts(row)
        row["normalization"] = normalizer.description
        for c, continuation in zip(CANDIDATES, continuations):
            row[f"c{c}_units"] = normalizer.count(context, continuation)
    return {"test": datasets.Dataset.from_list(rows)}


def doc_to_text(doc: dict[str, Any]) -> str:
    return request_parts(doc)[0]


def doc_to_choice(doc: dict[str, Any]) -> list[str]:
    return request_parts(doc)[1]


def item_key(doc: dict[str, Any]) -> str:
    return f"{doc['lang']}/{doc['test']}/{doc['id']}"


def item_from_scores(doc: dict[str, Any], scores: Sequence[float], details: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The per-document item of :func:`stereoset.compute` from candidate scores in c1, c2, c3 order."""
    item: dict[str, Any] = {
        "key": item_key(doc),
        "test": doc["test"],
        "target": doc["term"],
        "bias_type": doc["bias_type"],
        "normalization": doc.get("normalization", ""),
    }
    for c, score in zip(CANDIDATES, scores):
        item[doc[f"c{c}_gold_label"]] = float(score)
    item["candidates"] = [
        {"id": doc[f"c{c}_id"], "gold_label": doc[f"c{c}_gold_label"], "score": float(score), **extra}
        for c, score, extra in zip(CANDIDATES, scores, details)
    ]
    return item


def per_doc_values(item: dict[str, Any]) -> dict[str, Any]:
    """The full item under the first metric (``lms``), the item's key under all the others."""
    return SUMMARY.per_doc_values(item)


def process_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, Any]:
    """Mean log-probability per unit of each candidate (Eq. 4) → the document's item."""
    logliks = [float(result[0]) for result in results]
    units = [int(doc[f"c{c}_units"]) for c in CANDIDATES]
    scores = [loglik / n for loglik, n in zip(logliks, units)]
    details = [{"loglik": loglik, "units": n} for loglik, n in zip(logliks, units)]
    return per_doc_values(item_from_scores(doc, scores, details))


def _flatten(items: list[dict[str, Any]]) -> dict[str, Any]:
    result = stereoset.compute(items)
    flat: dict[str, Any] = {key: result[key] for key in stereoset.SUMMARY_KEYS}
    for name, (low, high) in stereoset.confidence_intervals(items).items():
        flat[f"{name}_ci_low"], flat[f"{name}_ci_high"] = low, high
    prefixes = {"intrasentence": "intra", "intersentence": "inter"}
    for test, prefix in prefixes.items():
        summary = result["by_test"].get(test, {})
        for key in TEST_KEYS:
            flat[f"{prefix}_{key}"] = summary.get(key, 0 if key == "count" else float("nan"))
    for bias in stereoset.BIAS_TYPES:
        summary = result["by_bias_type"].get(bias, {})
        for key in ("ss", "icat"):
            flat[f"{key}_{bias}"] = summary.get(key, float("nan"))
    flat["normalization"] = "; ".join(sorted({str(item.get("normalization", "")) for item in items}))
    return flat


TEST_KEYS = ("lms", "ss", "icat", "lms_term_avg", "ss_term_avg", "icat_macro", "icat_micro", "count")
METRICS: tuple[str, ...] = tuple(
    [
        *stereoset.SUMMARY_KEYS,
        *(f"{name}_ci_{side}" for name in ("lms", "ss", "icat") for side in ("low", "high")),
        *(f"{prefix}_{key}" for prefix in ("intra", "inter") for key in TEST_KEYS),
        *(f"{key}_{bias}" for bias in stereoset.BIAS_TYPES for key in ("ss", "icat")),
        "normalization",
    ]
)

SUMMARY = SharedSummary("stereoset_multi", METRICS, _flatten)
globals().update(SUMMARY.aggregations())
