"""Harness glue shared by the ``stereotype_leakage*`` tasks: documents, options, items and metrics.

One document per (template run, trait) of :func:`lm_eval_stereo.tasks.stereotype_leakage.templates.recipes`: the
trait word for the groups, the prior word with its trait word, and the run's groups. A task turns it into one request
for the prior and one per group; the item holds association(g, t, template) = score(group) - score(prior) for each
group. The metrics (:func:`~lm_eval_stereo.tasks.stereotype_leakage.metrics.leakage_metrics`) are computed from the
mean over templates of every (group, trait) cell, i.e. from the whole run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import datasets

from lm_eval_stereo.core.metrics import MetricSet
from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.tasks.stereotype_leakage import metrics
from lm_eval_stereo.tasks.stereotype_leakage.data import LANGUAGES, TRAITS
from lm_eval_stereo.tasks.stereotype_leakage.data import language as language_code
from lm_eval_stereo.tasks.stereotype_leakage.human import human_associations
from lm_eval_stereo.tasks.stereotype_leakage.options import COMMON_OPTIONS
from lm_eval_stereo.tasks.stereotype_leakage.templates import Recipe, mask_pattern, recipes


def group_before_trait(recipe: Recipe, lang: str) -> bool:
    """Whether the group (and the prior word) of every template of ``recipe`` precedes the trait slot."""
    pattern = mask_pattern(lang)
    return all(t.index("<group>") < t.index(pattern) for t in (recipe.template, recipe.prior_template))


def custom_dataset(
    language: str,
    templates: str,
    hi_untrustworthy: str,
    template_sets: dict[str, str],
    full_sentence: bool = True,
    **metadata: Any,
) -> dict[str, datasets.Dataset]:
    """The (template run, trait) documents of ``language`` for the task family's template sets
    (``template_sets``: ``{"committed": set, "full": set}`` from the task YAML); ``full_sentence=False`` (causal
    tasks) keeps only the templates whose group precedes the trait."""
    lang = language_code(language)
    docs = []
    for recipe in recipes(lang, template_sets[templates]):
        if not full_sentence and not group_before_trait(recipe, lang):
            continue
        for index, trait in enumerate(TRAITS):
            if lang == "hi" and trait == "untrustworthy" and hi_untrustworthy == "empty":
                continue
            docs.append(
                {
                    "key": f"{recipe.id}|{trait}",
                    "template_id": recipe.id,
                    "template": recipe.template,
                    "prior_template": recipe.prior_template,
                    "prior_word": recipe.prior_word,
                    "trait": trait,
                    "trait_word": recipe.traits[index],
                    "prior_trait_word": recipe.prior_traits[index],
                    "separate_prior_traits": recipe.prior_traits != recipe.traits,
                    "groups": [{"name": name, "word": word} for name, word in recipe.groups],
                }
            )
    return {"test": datasets.Dataset.from_list(docs)}


class LeakageTask(SummaryTask):
    """Base of the ``stereotype_leakage*`` tasks: subclasses set :attr:`SCORE_KIND` (or override :meth:`score_kind`)
    and implement :meth:`scores`."""

    OPTIONS: ClassVar[Sequence[Option]] = COMMON_OPTIONS
    EXTRA = metrics.REGRESSION
    #: key of :data:`metrics.REFERENCE_SCALE`
    SCORE_KIND: ClassVar[str] = ""

    @property
    def target(self) -> str:
        return language_code((self.config.dataset_kwargs or {})["language"])

    def score_kind(self) -> str:
        """How templates are scored (a key of :data:`metrics.REFERENCE_SCALE`)."""
        return self.SCORE_KIND

    def metric_set(self) -> MetricSet:
        return metrics.leakage_metric_set(str(self.config.task), self.summarize)

    def scores(self, doc: dict[str, Any], results: list[Any]) -> tuple[float, list[float]]:
        """(prior score, score of each group of ``doc``) from the responses."""
        raise NotImplementedError

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        prior, groups = self.scores(doc, results)
        return {
            "key": doc["key"],
            "trait": doc["trait"],
            "prior": prior,
            "associations": {g["name"]: score - prior for g, score in zip(doc["groups"], groups, strict=True)},
        }

    def summarize(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        entries = [cell for item in items for cell in metrics.item_cells(item)]
        table = metrics.association_table(entries)
        scale = metrics.REFERENCE_SCALE[self.score_kind()] if self.options["scale"] == "reference" else 1.0
        humans = {lang: human_associations(lang) for lang in LANGUAGES}
        values = metrics.leakage_metrics(
            table, self.target, scale=scale, unrated=self.options["unrated"], humans=humans
        )
        values["nan_scores"] = sum(math.isnan(v) for _, _, v in entries)
        values["nan_cells"] = len({(g, t) for g, t, _ in entries}) - values["scored_cells"]
        values["score"] = self.score_kind()
        return values
