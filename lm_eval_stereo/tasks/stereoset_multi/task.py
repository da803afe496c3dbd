"""Harness glue of ``stereoset_multi_<lang>`` (causal LMs, Öztürk et al. 2023 "generative" method).

- intrasentence: option ``intrasentence_scoring`` (:mod:`lm_eval_stereo.tasks.stereoset_multi.intra_scoring`):
  ``reference`` (default) scores the first token after ``<|endoftext|>`` where that is one token of the model's
  tokenizer (else after the prefix token; option ``intrasentence_start``) and the rest after the first token, as the
  reference code; ``bos`` scores the whole sentence after the prefix token (task version 1.0). These requests
  are built here from the candidate sentences (no few-shot context, no chat template: the reference has none);
- intersentence (method "d", Jinja templates in ``_stereoset_multi_template_yaml``): the candidate after ``context``
  (a "." appended when the context does not end in . ! ?), with a space between them.

Score of a candidate = log-likelihood (summed over its requests) / number of normalisation units (tokens of the
evaluated model by default, Eq. 4: the natural log of the reference's 2^(mean log2 p)), counted here on exactly the
strings that were scored. Every document returns its item (the three candidate scores, see
:func:`lm_eval_stereo.tasks.stereoset_multi.metrics.compute`) under the first metric and its key under the others
(:class:`~lm_eval_stereo.core.summary.SummaryTask`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import datasets
from lm_eval.api.instance import Instance

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.core.summary import SummaryTask, instance_kwargs
from lm_eval_stereo.core.token_split import TokenSplitInstance, scored_reference_tokens
from lm_eval_stereo.tasks.stereoset_multi import intra_scoring, normalization
from lm_eval_stereo.tasks.stereoset_multi.data import load_rows
from lm_eval_stereo.tasks.stereoset_multi.metrics import CANDIDATES, METRICS, near_tie_fields
from lm_eval_stereo.tasks.stereoset_multi.options import CAUSAL_OPTIONS as OPTIONS


def custom_dataset(lang: str, **_: Any) -> dict[str, datasets.Dataset]:
    """The rows of one language (intrasentence and intersentence interleaved)."""
    return {"test": datasets.Dataset.from_list(load_rows(lang))}


def item_key(doc: dict[str, Any]) -> str:
    return f"{doc['lang']}/{doc['test']}/{doc['id']}"


def item_from_scores(
    doc: dict[str, Any],
    scores: Sequence[float],
    details: Sequence[dict[str, Any]],
    scoring: str,
    intrasentence_scoring: str | None = None,
    bounds: Sequence[float] | None = None,
) -> dict[str, Any]:
    """The per-document item of :func:`metrics.compute` from candidate scores in c1, c2, c3 order; an intrasentence
    item records ``intrasentence_scoring`` and counts its candidates whose details say ``boundaries_kept: False``.
    With ``bounds`` (how far each candidate's score can move between backends), the item marks its near ties
    (:func:`metrics.near_tie_fields`)."""
    item: dict[str, Any] = {
        "key": item_key(doc),
        "test": doc["test"],
        "target": doc["term"],
        "bias_type": doc["bias_type"],
        "normalization": scoring,
    }
    if intrasentence_scoring is not None:
        item["intrasentence_scoring"] = intrasentence_scoring
        item["boundary_mismatches"] = sum(not extra.get("boundaries_kept", True) for extra in details)
    for c, score in zip(CANDIDATES, scores):
        item[doc[f"c{c}_gold_label"]] = float(score)
    item["candidates"] = [
        {"id": doc[f"c{c}_id"], "gold_label": doc[f"c{c}_gold_label"], "score": float(score), **extra}
        for c, score, extra in zip(CANDIDATES, scores, details)
    ]
    if bounds is not None:
        item.update(near_tie_fields(item, {doc[f"c{c}_gold_label"]: b for c, b in zip(CANDIDATES, bounds)}))
    return item


class StereoSetTask(SummaryTask):
    """``stereoset_multi_<lang>``: log-likelihood requests per candidate, mean log-probability per unit (Eq. 4)."""

    METRICS = METRICS
    OPTIONS = OPTIONS
    COMPARES_LOGLIKELIHOODS = True

    @functools.cached_property
    def normalizer(self) -> normalization.Normalizer:
        return normalization.resolve(self.config.metadata or {}, self.options["normalization"])

    @functools.cached_property
    def intra(self) -> intra_scoring.IntraScoring:
        return intra_scoring.resolve(
            self.config.metadata or {}, self.options["intrasentence_scoring"], self.options["intrasentence_start"]
        )

    def _requests(self, doc: dict[str, Any]) -> list[tuple[tuple[str, str], ...]]:
        """Per candidate, the (context, continuation) requests whose log-likelihoods make its score."""
        if doc["test"] == "intrasentence":
            return [self.intra.split(doc[f"c{c}_sentence"]).requests for c in CANDIDATES]
        context = self.doc_to_text(doc)
        return [((context, continuation),) for continuation in self.doc_to_choice(doc)]

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        """Intersentence: lm_eval's multiple-choice requests; intrasentence: the requests of the scoring in force."""
        if doc["test"] != "intrasentence":
            return super().construct_requests(doc, ctx, **kwargs)
        kwargs = instance_kwargs(kwargs)
        splits = [self.intra.split(doc[f"c{c}_sentence"]) for c in CANDIDATES]
        arguments = [(request, split.reference(n)) for split in splits for n, request in enumerate(split.requests)]
        return [
            TokenSplitInstance(
                request_type="loglikelihood", doc=doc, arguments=argument, idx=i, reference_tokens=tokens, **kwargs
            )
            for i, (argument, tokens) in enumerate(arguments)
        ]

    def item(self, doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, Any]:
        """Candidate scores; an intrasentence candidate keeps the reference's boundaries where its strings do, or where
        the backend scored the reference's tokens (``hf-prefix``; the units are the same tokens either way: the first
        token, then the rest)."""
        responses = iter(results)
        scores, details, bounds = [], [], []
        for requests in self._requests(doc):
            answers = [next(responses) for _ in requests]
            loglik = sum(float(answer[0]) for answer in answers)
            units = self.normalizer.count_requests(requests)
            scores.append(loglik / units)
            details.append({"loglik": loglik, "units": units, "exact": all(map(scored_reference_tokens, answers))})
            bounds.append(near_ties.bound(len(requests), units))
        intra = None
        if doc["test"] == "intrasentence":
            intra = self.intra.description
            for extra, c in zip(details, CANDIDATES):
                extra["boundaries_kept"] = self.intra.split(doc[f"c{c}_sentence"]).boundaries_kept or extra["exact"]
        for extra in details:
            del extra["exact"]
        return item_from_scores(doc, scores, details, self.normalizer.description, intra, bounds)
