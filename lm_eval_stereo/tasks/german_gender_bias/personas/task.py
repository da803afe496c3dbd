"""Harness glue of ``stereo_persona_de``, ``neutral_persona_de`` and ``gender_persona_de`` (Gnadt et al., GeBNLP 2025).

Flow: ``custom_dataset`` loads the prompts (and stores the judge configuration from ``--metadata`` in every
document) → the model generates after the prefilled ``"\\nAntwort:\\n"`` → the ``custom`` filter
:func:`persona_outputs` takes the text after the last "Antwort:" and, when a judge is configured, asks it about all
outputs of the task in one batched call → ``item`` classifies each generation (lexicon, judge, combined label) or
lemmatises it (GenderPersona) → the metric sets of :mod:`metrics` compute the corpus-level scores.

For GenderPersona the summary also adds each document's ``word_bias`` (inter-gender bias of its lemmas) to the
item, so the per-sample log shows the gender-dependent words of every output (in single-process runs, where the
logged sample and the aggregated item are the same object).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets

from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.tasks.german_gender_bias.answers import ANSWER_MARKER, GEN_PREFIX
from lm_eval_stereo.tasks.german_gender_bias.german_text import LEMMATIZER, content_lemmas
from lm_eval_stereo.tasks.german_gender_bias.options import CLASSIFIED_PERSONA_OPTIONS, GENDER_PERSONA_OPTIONS
from lm_eval_stereo.tasks.german_gender_bias.personas import cooccurrence
from lm_eval_stereo.tasks.german_gender_bias.personas.data import load_persona
from lm_eval_stereo.tasks.german_gender_bias.personas.gender import load_corpus, persona_gender_lexicon
from lm_eval_stereo.tasks.german_gender_bias.personas.judge import JudgeConfig, judge_outputs
from lm_eval_stereo.tasks.german_gender_bias.personas.metrics import (
    GENDER_METRICS,
    NEUTRAL_METRICS,
    STEREO_METRICS,
    combine_labels,
)


def custom_dataset(dataset: str, persona_wording: str, **metadata: Any) -> dict[str, datasets.Dataset]:
    """Documents of ``dataset`` (stereo, neutral, gender) in the given wording, with the judge configuration."""
    docs = load_persona(dataset, persona_wording)
    judge = JudgeConfig.from_metadata(metadata) if dataset != "gender" else None
    seed = int(metadata.get("cooccurrence_seed", cooccurrence.DEFAULT_SEED))
    for doc in docs:
        doc["key"] = f"{dataset}/{doc['id']}"
        doc["judge_config"] = judge.to_json() if judge else ""
        doc["cooccurrence_seed"] = seed
    return {"test": datasets.Dataset.from_list(docs)}


def extract_output(generation: str) -> str:
    """The reference's output: the text after the last "Antwort:" of the answer prefix plus the generation."""
    return (GEN_PREFIX + generation).rsplit(ANSWER_MARKER, 1)[-1]


def persona_outputs(resps: Sequence[Sequence[str]], docs: Sequence[dict]) -> list[list[dict[str, Any]]]:
    """``custom`` filter: every generation's output and, with a judge, its label and raw answer."""
    outputs = [[extract_output(g) for g in generations] for generations in resps]
    config = JudgeConfig.from_json(docs[0].get("judge_config", "")) if docs else None
    if config is None:
        return [[{"output": o, "judge": None, "judge_answer": None} for o in outs] for outs in outputs]
    verdicts = iter(judge_outputs([o for outs in outputs for o in outs], config.build(), config))
    return [[dict(zip(("output", "judge", "judge_answer"), (o, *next(verdicts)))) for o in outs] for outs in outputs]


class ClassifiedPersonaTask(SummaryTask):
    """StereoPersona / NeutralPersona: every generation's gender by the lexicon (and the judge, if configured)."""

    OPTIONS = CLASSIFIED_PERSONA_OPTIONS
    TARGET_FIELD = ""

    def item(self, doc: dict[str, Any], results: list[list[dict[str, Any]]]) -> dict[str, Any]:
        generations = results[0]
        corpus = load_corpus()
        lexicon = [persona_gender_lexicon(g["output"], corpus) for g in generations]
        judged = [g["judge"] for g in generations]
        config = JudgeConfig.from_json(doc["judge_config"])
        item: dict[str, Any] = {
            "key": doc["key"],
            self.TARGET_FIELD: doc[self.TARGET_FIELD],
            "classifier": f"lexicon+judge {config.describe()}" if config else "lexicon (no judge configured)",
            "outputs": [g["output"] for g in generations],
            "lexicon": lexicon,
            "labels": [combine_labels(lex, judge) for lex, judge in zip(lexicon, judged)],
        }
        if config:
            item["judge"] = judged
            item["judge_answers"] = [g["judge_answer"] for g in generations]
        return item


class StereoPersonaTask(ClassifiedPersonaTask):
    """``stereo_persona_de``: does the stereotype decide the persona's gender?"""

    METRICS = STEREO_METRICS
    TARGET_FIELD = "stereotype"


class NeutralPersonaTask(ClassifiedPersonaTask):
    """``neutral_persona_de``: which gender does a neutral prompt give?"""

    METRICS = NEUTRAL_METRICS
    TARGET_FIELD = "article"


class GenderPersonaTask(SummaryTask):
    """``gender_persona_de``: the content lemmas of every output, for the co-occurrence bias."""

    METRICS = GENDER_METRICS
    OPTIONS = GENDER_PERSONA_OPTIONS
    EXTRA = LEMMATIZER

    def item(self, doc: dict[str, Any], results: list[list[dict[str, Any]]]) -> dict[str, Any]:
        words = load_corpus().words
        generations = [g["output"] for g in results[0]]
        return {
            "key": doc["key"],
            "id": doc["id"],
            "gender": doc["gender"],
            "person": doc["person"],
            "seed": doc["cooccurrence_seed"],
            "outputs": generations,
            "lemmas": [[list(pair) for pair in content_lemmas(text, words)] for text in generations],
        }
