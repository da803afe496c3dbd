"""Harness glue of the MBBQ tasks.

- ``mbbq_<lang>`` / ``mbbq_control_<lang>`` (:class:`MbbqChoiceTask`): one document per MBBQ item, one
  log-likelihood request per answer in the data's order (``ans0``–``ans2``, after the context and question); the
  prediction is the answer with the highest summed log-likelihood (``mbbq_length_norm``: per character of the answer;
  ties: the first).
- ``mbbq_gen_<lang>`` / ``mbbq_gen_control_<lang>`` (:class:`MbbqGenerationTask`): MBBQ's protocol, one document per
  item and prompt (its five prompts), greedy generation of up to 100 tokens, the reference's answer detection
  (:mod:`~lm_eval_stereo.tasks.mbbq.detection`).

Every document keeps the upstream fields (``--log_samples`` logs them), and each item records what it was scored from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.core.metrics import MetricSet
from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.tasks import bbq_family
from lm_eval_stereo.tasks.mbbq import detection
from lm_eval_stereo.tasks.mbbq.data import choice_prompt, load_docs
from lm_eval_stereo.tasks.mbbq.metrics import BIAS_METRICS, CONTROL_METRICS
from lm_eval_stereo.tasks.mbbq.options import OPTIONS


def _dataset(docs: list[dict[str, Any]]) -> dict[str, datasets.Dataset]:
    return {"test": datasets.Dataset.from_list(docs)}


def choice_dataset(lang: str, control: bool = False, **_: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` of the log-likelihood tasks: the items of one language's bias or control set."""
    docs = load_docs(lang, bool(control))
    for doc in docs:
        doc["query"] = choice_prompt(doc)
    return _dataset(docs)


def generation_dataset(
    lang: str, control: bool = False, mbbq_detection_file: str | None = None, **_: Any
) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` of the generative tasks: every item under each of MBBQ's five prompts (item-major)."""
    templates = detection.language_tables(mbbq_detection_file, lang).prompts_of(lang)
    docs = []
    for doc in load_docs(lang, bool(control)):
        for prompt_id, template in enumerate(templates):
            docs.append({**doc, "prompt_id": prompt_id, "prompt": detection.prompt_text(template, doc)})
    return _dataset(docs)


def choose(loglikelihoods: Sequence[float], answers: Sequence[str], length_norm: bool = False) -> int:
    """The answer with the highest summed log-likelihood (``length_norm``: per character of the answer text); ties:
    the first."""
    scores = list(loglikelihoods)
    if length_norm:
        scores = [value / max(1, len(answer)) for value, answer in zip(loglikelihoods, answers)]
    return scores.index(max(scores))


def rival_answers(loglikelihoods: Sequence[float], answers: Sequence[str], length_norm: bool = False) -> list[int]:
    """The answers another backend could pick instead of :func:`choose`'s (near ties,
    :func:`lm_eval_stereo.core.near_ties.rivals`): one request each, per character of the answer with
    ``length_norm``."""
    if length_norm:
        scores = [value / max(1, len(answer)) for value, answer in zip(loglikelihoods, answers)]
        bounds = [near_ties.bound(1, max(1, len(answer))) for answer in answers]
    else:
        scores, bounds = list(loglikelihoods), [near_ties.bound()] * len(answers)
    return near_ties.rivals(scores, bounds)


class _MbbqTask(SummaryTask):
    OPTIONS = OPTIONS

    def metric_set(self) -> MetricSet:
        control = bool((self.config.dataset_kwargs or {}).get("control"))
        return CONTROL_METRICS if control else BIAS_METRICS

    def record(self, doc: Mapping[str, Any], key: str, predictions: Sequence[int | None]) -> dict[str, Any]:
        """The document's item: its answer counts and what they were computed from."""
        biased = int(doc["biased_loc"])
        counts = bbq_family.answer_counts(
            predictions,
            label=int(doc["label"]),
            unknown=int(doc["unknown_loc"]),
            biased=None if biased < 0 else biased,
            exclude_undetermined=not self.options["mbbq_keep_undetermined"],
        )
        return {
            "key": key,
            "item": doc["key"],
            "category": doc["category"],
            "ambiguous": doc["context_condition"] == "ambig",
            "label": int(doc["label"]),
            "unknown_loc": int(doc["unknown_loc"]),
            "biased_loc": biased,
            "predictions": list(predictions),
            **counts,
        }


class MbbqChoiceTask(_MbbqTask):
    """``mbbq_<lang>`` / ``mbbq_control_<lang>``: the answer with the highest log-likelihood; a near tie's
    alternatives are the items of the rival answers (:func:`rival_answers`)."""

    COMPARES_LOGLIKELIHOODS = True

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        loglikelihoods = [float(loglikelihood) for loglikelihood, _ in results]
        if not all(math.isfinite(value) for value in loglikelihoods):  # never pick an answer from NaN: count it
            return self.record(doc, doc["key"], []) | {"loglikelihoods": loglikelihoods, "unscored": 1}
        answers = [doc["ans0"], doc["ans1"], doc["ans2"]]
        length_norm = self.options["mbbq_length_norm"]
        item = self.record(doc, doc["key"], [choose(loglikelihoods, answers, length_norm)])
        alternatives = [
            near_ties.changes(item, self.record(doc, doc["key"], [rival]))
            for rival in rival_answers(loglikelihoods, answers, length_norm)
        ]
        return item | {"loglikelihoods": loglikelihoods} | near_ties.marked(alternatives)


class MbbqGenerationTask(_MbbqTask):
    """``mbbq_gen_<lang>`` / ``mbbq_gen_control_<lang>``: MBBQ's prompts, generation and answer detection."""

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        output = results[0][0] if isinstance(results[0], list) else results[0]
        tables = detection.language_tables(self.options["mbbq_detection_file"], doc["lang"])
        options = [doc["ans0"], doc["ans1"], doc["ans2"]]
        detected = detection.detect_answer(tables, options, str(output), int(doc["unknown_loc"]), doc["lang"])
        key = f"{doc['key']}/p{int(doc['prompt_id'])}"
        item = self.record(doc, key, [detection.prediction(detected)])
        return item | {"prompt_id": int(doc["prompt_id"]), "output": output, "detected": detected}
