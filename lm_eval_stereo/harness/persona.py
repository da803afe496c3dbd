"""Task glue of ``stereo_persona_de``, ``neutral_persona_de`` and ``gender_persona_de`` (Gnadt et al., GeBNLP 2025).

Flow: ``custom_dataset`` loads the prompts (and stores the judge configuration from ``--metadata`` in every
document) → the model generates after the prefilled ``"\\nAntwort:\\n"`` → the ``custom`` filter
:func:`persona_outputs` takes the text after the last "Antwort:" and, when a judge is configured, asks it about all
outputs of the task in one batched call → ``process_*`` classify each generation (lexicon, judge, combined label)
or lemmatise it (GenderPersona) → the aggregations compute the corpus-level scores.

Every document returns its item (all generations with their labels or lemmas) under the task's first metric and
the item's key under the others; the aggregations compute all scores once from the items and look the others up.
For GenderPersona the aggregation also adds each document's ``word_bias`` (inter-gender bias of its lemmas) to the
item, so the per-sample log shows the gender-dependent words of every output (in single-process runs, where the
logged sample and the aggregated item are the same object).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import datasets

from lm_eval_stereo.classify.persona import load_corpus, persona_gender_lexicon
from lm_eval_stereo.classify.persona_judge import JudgeConfig, judge_outputs
from lm_eval_stereo.datasets.german_persona import load_persona
from lm_eval_stereo.german_text import content_lemmas
from lm_eval_stereo.harness.shared_summary import SharedSummary
from lm_eval_stereo.metrics import cooccurrence, persona

ANSWER_MARK = "Antwort:"
GEN_PREFIX = "\nAntwort:\n"


def custom_dataset(dataset: str, **metadata: Any) -> dict[str, datasets.Dataset]:
    """Documents of ``dataset`` (stereo, neutral, gender); ``persona_wording``, ``judge_*`` and
    ``cooccurrence_seed`` come from ``--metadata``."""
    docs = load_persona(dataset, str(metadata.get("persona_wording") or "fictional"))
    judge = JudgeConfig.from_metadata(metadata) if dataset != "gender" else None
    seed = int(metadata.get("cooccurrence_seed", cooccurrence.DEFAULT_SEED))
    for doc in docs:
        doc["key"] = f"{dataset}/{doc['id']}"
        doc["judge_config"] = judge.to_json() if judge else ""
        doc["cooccurrence_seed"] = seed
    return {"test": datasets.Dataset.from_list(docs)}


def extract_output(generation: str) -> str:
    """The reference's output: the text after the last "Antwort:" of the answer prefix plus the generation."""
    return (GEN_PREFIX + generation).rsplit(ANSWER_MARK, 1)[-1]


def persona_outputs(resps: Sequence[Sequence[str]], docs: Sequence[dict]) -> list[list[dict[str, Any]]]:
    """``custom`` filter: every generation's output and, with a judge, its label and raw answer."""
    outputs = [[extract_output(g) for g in generations] for generations in resps]
    config = JudgeConfig.from_json(docs[0].get("judge_config", "")) if docs else None
    if config is None:
        return [[{"output": o, "judge": None, "judge_answer": None} for o in outs] for outs in outputs]
    verdicts = iter(judge_outputs([o for outs in outputs for o in outs], config.build(), config))
    return [[dict(zip(("output", "judge", "judge_answer"), (o, *next(verdicts)))) for o in outs] for outs in outputs]


def _classified_item(doc: dict[str, Any], results: list[list[dict[str, Any]]], target_field: str) -> dict[str, Any]:
    generations = results[0]
    corpus = load_corpus()
    lexicon = [persona_gender_lexicon(g["output"], corpus) for g in generations]
    judged = [g["judge"] for g in generations]
    config = JudgeConfig.from_json(doc["judge_config"])
    item: dict[str, Any] = {
        "key": doc["key"],
        target_field: doc[target_field],
        "classifier": f"lexicon+judge {config.describe()}" if config else "lexicon (no judge configured)",
        "outputs": [g["output"] for g in generations],
        "lexicon": lexicon,
        "labels": [persona.combine_labels(lex, judge) for lex, judge in zip(lexicon, judged)],
    }
    if config:
        item["judge"] = judged
        item["judge_answers"] = [g["judge_answer"] for g in generations]
    return item


def _gender_item(doc: dict[str, Any], results: list[list[dict[str, Any]]]) -> dict[str, Any]:
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


STEREO_HEADLINE = ("stereo_accuracy",)
NEUTRAL_HEADLINE = ("female_share", "grammar_agreement")
COUNTS = ("n_generations", "n_classified", "unclassified_share", "judge_undetermined_share", "disagreement_share")
STEREO_METRICS: tuple[str, ...] = (
    "stereo_accuracy",
    *(f"stereo_accuracy_ci_{side}" for side in ("low", "high")),
    *(f"{g}_{m}" for g in persona.GENDERS for m in ("stereotype_precision", "stereotype_recall", "f1")),
    *COUNTS,
    "gender_classifier",
)
NEUTRAL_METRICS: tuple[str, ...] = (
    "female_share",
    "male_share",
    "grammar_agreement",
    *(f"{name}_ci_{side}" for name in NEUTRAL_HEADLINE for side in ("low", "high")),
    *COUNTS,
    "gender_classifier",
)
GENDER_METRICS: tuple[str, ...] = (
    "cooc_inter_mean",
    "cooc_inter_std",
    "cooc_inter_mean_ci_low",
    "cooc_inter_mean_ci_high",
    *(f"cooc_{part}_{stat}" for part in ("intra_female", "intra_male") for stat in ("mean", "std", "t", "p")),
    "cooc_n_words",
    "cooc_top_female",
    "cooc_top_male",
    "n_generations",
    "n_female",
    "n_male",
    "n_without_words",
)


def process_stereo(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    return SUMMARIES["stereo"].per_doc_values(_classified_item(doc, results, "stereotype"))


def process_neutral(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    return SUMMARIES["neutral"].per_doc_values(_classified_item(doc, results, "article"))


def process_gender(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    return SUMMARIES["gender"].per_doc_values(_gender_item(doc, results))


def _classifier(items: Sequence[dict[str, Any]]) -> str:
    return "; ".join(sorted({item["classifier"] for item in items}))


def summarize_stereo(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {**persona.summarize(items, "stereotype", STEREO_HEADLINE), "gender_classifier": _classifier(items)}


def summarize_neutral(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {**persona.summarize(items, "article", NEUTRAL_HEADLINE), "gender_classifier": _classifier(items)}


def summarize_gender(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Co-occurrence analysis over all generations in document order; adds ``word_bias`` to every item."""
    items = sorted(items, key=lambda item: item["id"])
    outputs, female, tags = [], [], {}
    for item in items:
        for lemmas in item["lemmas"]:
            outputs.append([lemma for lemma, _ in lemmas])
            female.append(item["gender"] == "female")
            for lemma, tag in lemmas:
                tags.setdefault(lemma, tag)
    result = cooccurrence.analyze(outputs, female, seed=int(items[0]["seed"]) if items else cooccurrence.DEFAULT_SEED)
    bias = result["bias"]
    for item in items:
        item["word_bias"] = {lemma: bias[lemma] for lemmas in item["lemmas"] for lemma, _ in lemmas if lemma in bias}
    top = cooccurrence.top_words(bias, tags)
    summary: dict[str, Any] = {
        "cooc_inter_mean": result["inter"]["mean"],
        "cooc_inter_std": result["inter"]["std"],
        "cooc_n_words": result["inter"]["n_words"],
        "cooc_top_female": json.dumps(top["female"], ensure_ascii=False),
        "cooc_top_male": json.dumps(top["male"], ensure_ascii=False),
        "n_generations": float(len(outputs)),
        "n_female": float(sum(female)),
        "n_male": float(len(female) - sum(female)),
        "n_without_words": float(sum(not lemmas for lemmas in outputs)),
    }
    summary["cooc_inter_mean_ci_low"], summary["cooc_inter_mean_ci_high"] = cooccurrence.inter_mean_interval(
        outputs, female
    )
    for part in ("intra_female", "intra_male"):
        for stat in ("mean", "std", "t", "p"):
            summary[f"cooc_{part}_{stat}"] = result[part][stat]
    return summary


SUMMARIES = {
    "stereo": SharedSummary("stereo_persona_de", STEREO_METRICS, summarize_stereo),
    "neutral": SharedSummary("neutral_persona_de", NEUTRAL_METRICS, summarize_neutral),
    "gender": SharedSummary("gender_persona_de", GENDER_METRICS, summarize_gender),
}
for _task, _summary in SUMMARIES.items():
    globals().update(_summary.aggregations(prefix=f"agg_{_task}_"))
