"""Harness glue of ``stereoset_multi_<lang>`` (causal LMs, Öztürk et al. 2023 "generative" method).

The prompt and the candidates are Jinja templates in ``_stereoset_multi_template_yaml``:

- intrasentence: the whole candidate sentence, conditioned on the model's BOS/end-of-text token only (empty context);
- intersentence (method "d"): the candidate after ``context`` (a "." appended when the context does not end in
  . ! ?), with a space between them.

Score of a candidate = log-likelihood / number of normalisation units (tokens of the evaluated model by default,
Eq. 4), counted here on exactly the strings the templates produced. Every document returns its item (the three
candidate scores, see :func:`lm_eval_stereo.tasks.stereoset_multi.metrics.compute`) under the first metric and its
key under the others (:class:`~lm_eval_stereo.core.summary.SummaryTask`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import datasets

from lm_eval_stereo.core.options import Option, choice, declare
from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.tasks.stereoset_multi import normalization
from lm_eval_stereo.tasks.stereoset_multi.data import CANDIDATES, load_rows
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS

OPTIONS = declare(
    Option(
        "normalization",
        "token",
        choice(*normalization.UNITS),
        "unit the candidate log-likelihood is divided by: token (the evaluated model's tokens, the paper), byte, none",
    ),
)


def custom_dataset(lang: str, **_: Any) -> dict[str, datasets.Dataset]:
    """The rows of one language (intrasentence and intersentence interleaved)."""
    return {"test": datasets.Dataset.from_list(load_rows(lang))}


def item_key(doc: dict[str, Any]) -> str:
    return f"{doc['lang']}/{doc['test']}/{doc['id']}"


def item_from_scores(
    doc: dict[str, Any], scores: Sequence[float], details: Sequence[dict[str, Any]], scoring: str
) -> dict[str, Any]:
    """The per-document item of :func:`metrics.compute` from candidate scores in c1, c2, c3 order."""
    item: dict[str, Any] = {
        "key": item_key(doc),
        "test": doc["test"],
        "target": doc["term"],
        "bias_type": doc["bias_type"],
        "normalization": scoring,
    }
    for c, score in zip(CANDIDATES, scores):
        item[doc[f"c{c}_gold_label"]] = float(score)
    item["candidates"] = [
        {"id": doc[f"c{c}_id"], "gold_label": doc[f"c{c}_gold_label"], "score": float(score), **extra}
        for c, score, extra in zip(CANDIDATES, scores, details)
    ]
    return item


class StereoSetTask(SummaryTask):
    """``stereoset_multi_<lang>``: three log-likelihood requests per item, mean log-probability per unit (Eq. 4)."""

    METRICS = METRICS
    OPTIONS = OPTIONS

    @functools.cached_property
    def normalizer(self) -> normalization.Normalizer:
        return normalization.resolve(self.config.metadata or {}, self.options["normalization"])

    def item(self, doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, Any]:
        context = self.doc_to_text(doc)
        units = [self.normalizer.count(context, continuation) for continuation in self.doc_to_choice(doc)]
        logliks = [float(result[0]) for result in results]
        scores = [loglik / n for loglik, n in zip(logliks, units)]
        details = [{"loglik": loglik, "units": n} for loglik, n in zip(logliks, units)]
        return item_from_scores(doc, scores, details, self.normalizer.description)
