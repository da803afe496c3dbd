"""The reference's templates, group words, trait words and prior words, expanded as ``asso.py`` runs them.

The literal lists come from the pinned upstream ``asso.py`` (:mod:`~lm_eval_stereo.tasks.stereotype_leakage.reference`,
AnnaSou/Stereotype_Leakage @ 8254eb7, MIT), read at run time. Template sets per language: ``mlm`` (the mBERT
functions as committed: Hindi = the ``comp`` pair only), ``mlm_full`` (the monolingual-BERT functions: Hindi = 40
gendered pairs + 5 oblique-plural templates) and ``seq2seq`` (the mT5 functions).

A :class:`Recipe` is one scored file of the reference: a template with ``<group>`` and ``<mask>``, its groups, the prior
word and the trait words. Placeholders are resolved as the reference does:

- en: ``<sgroup>``/``<pgroup>``/``<cpgroup>`` with priors ``person``/``people``/``People``; zh: ``<group>``, prior ``人``;
- ru: ``<csgroup>`` templates run twice — feminine groups with feminine trait forms whose prior ``Человек`` is scored
  with the masculine forms, and masculine groups with masculine forms; ``<pgroup>``/``<cpgroup>`` with
  ``<ptrait>``/``<ptrait2>`` (plural trait forms);
- hi: each (feminine, masculine) template pair gives a feminine run (prior scored in the masculine template), a
  masculine run and a gender-neutral run (in the masculine template); ``<pgroup2>`` templates (oblique plural).

Trait words are index-aligned with :data:`~lm_eval_stereo.tasks.stereotype_leakage.data.TRAITS` (checked against
``aggre_tem.py``). Hindi uses ``बेईमान`` for both untrustworthy and dishonest, so both rows get the same scores — the
reference's copy of ``dishonest`` into ``untrustworthy``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lm_eval_stereo.tasks.stereotype_leakage.data import TRAITS, language
from lm_eval_stereo.tasks.stereotype_leakage.reference import reference_lists

TEMPLATE_SETS = ("mlm", "mlm_full", "seq2seq")
MASK = "<mask>"


@dataclass(frozen=True)
class Recipe:
    """One template run: ``groups`` are (English name, word) pairs; trait words index-aligned with TRAITS."""

    id: str
    template: str
    prior_template: str
    prior_word: str
    groups: tuple[tuple[str, str], ...]
    traits: tuple[str, ...]
    prior_traits: tuple[str, ...]


def _recipe(rid: str, template: str, groups: dict[str, str], prior: str, traits: list[str], **kw: Any) -> Recipe:
    words = tuple(traits)
    if len(words) != len(TRAITS):
        raise ValueError(f"recipe {rid}: {len(words)} trait words, expected {len(TRAITS)}")
    return Recipe(
        rid,
        template,
        kw.get("prior_template", template),
        prior,
        tuple((english, word) for word, english in groups.items()),
        words,
        tuple(kw.get("prior_traits", words)),
    )


def _english(lists: dict[str, Any], templates: dict[str, list[str]]) -> list[Recipe]:
    recipes = []
    for kind, entries in templates.items():
        for i, template in enumerate(entries):
            slot = next(s for s in ("sgroup", "pgroup", "cpgroup") if f"<{s}>" in template)
            recipes.append(
                _recipe(
                    f"{kind}{i}",
                    template.replace(f"<{slot}>", "<group>"),
                    lists["groups"][slot],
                    lists["priors"][slot],
                    lists["traits"]["trait"],
                )
            )
    return recipes


def _chinese(lists: dict[str, Any], templates: dict[str, list[str]]) -> list[Recipe]:
    groups, prior, traits = lists["groups"]["group"], lists["priors"]["group"], lists["traits"]["trait"]
    return [
        _recipe(f"{kind}{i}", template, groups, prior, traits)
        for kind, entries in templates.items()
        for i, template in enumerate(entries)
    ]


def _russian(lists: dict[str, Any], templates: dict[str, list[str]]) -> list[Recipe]:
    groups, priors, traits = lists["groups"], lists["priors"], lists["traits"]
    recipes = []
    for kind, entries in templates.items():
        for i, template in enumerate(entries):
            if "<csgroup>" in template:
                text = template.replace("<csgroup>", "<group>").replace("<strait>", MASK)
                fem, masc = traits["strait_fem"], traits["strait_masc"]
                recipes.append(
                    _recipe(f"{kind}{i}-fem", text, groups["csgroup_fem"], priors["csgroup"], fem, prior_traits=masc)
                )
                recipes.append(_recipe(f"{kind}{i}-masc", text, groups["csgroup_masc"], priors["csgroup"], masc))
                continue
            slot = "pgroup" if "<pgroup>" in template else "cpgroup"
            form = "ptrait" if "<ptrait>" in template else "ptrait2"
            text = template.replace(f"<{slot}>", "<group>").replace(f"<{form}>", MASK)
            recipes.append(_recipe(f"{kind}{i}", text, groups[slot], priors[slot], traits[form]))
    return recipes


def _hindi(lists: dict[str, Any], templates: dict[str, dict[str, list[str]]]) -> list[Recipe]:
    groups, priors, traits = lists["groups"], lists["priors"], lists["traits"]["trait"]
    recipes = []
    for kind, entries in templates["extra"].items():
        for i, template in enumerate(entries):
            text = template.replace("<pgroup2>", "<group>")
            recipes.append(_recipe(f"{kind}{i}", text, groups["pgroup2"], priors["pgroup2"], traits))
    for kind, feminine in templates["fem"].items():
        for i, (fem, masc) in enumerate(zip(feminine, templates["masc"][kind], strict=True)):
            number = "s" if "<sfgroup>" in fem else "p"
            fem_text = fem.replace(f"<{number}fgroup>", "<group>")
            masc_text = masc.replace(f"<{number}mgroup>", "<group>")
            prior = priors[number]
            recipes += [
                _recipe(f"{kind}{i}-fem", fem_text, groups[f"{number}fgroup"], prior, traits, prior_template=masc_text),
                _recipe(f"{kind}{i}-masc", masc_text, groups[f"{number}mgroup"], prior, traits),
                _recipe(f"{kind}{i}-neutral", masc_text, groups[f"{number}ngroup"], prior, traits),
            ]
    return recipes


EXPANDERS = {"en": _english, "zh": _chinese, "ru": _russian, "hi": _hindi}


def recipes(lang: str, template_set: str = "mlm") -> list[Recipe]:
    """The template runs of ``lang`` in ``template_set`` (see the module docstring)."""
    lang = language(lang)
    if template_set not in TEMPLATE_SETS:
        raise ValueError(f"unknown template set {template_set!r}; choose one of {', '.join(TEMPLATE_SETS)}")
    lists = reference_lists()[lang]
    found = EXPANDERS[lang](lists, lists["templates"][template_set])
    for recipe in found:
        for text in {recipe.template, recipe.prior_template}:
            if text.count(mask_pattern(lang)) != 1 or "<group>" not in text:
                raise ValueError(f"{lang} template {recipe.id} {text!r} needs one {mask_pattern(lang)!r} and <group>")
    return found


def mask_pattern(lang: str) -> str:
    """What the reference replaces by the masks: ``' <mask>'`` (the space is part of it) except in Chinese."""
    return MASK if language(lang) == "zh" else " " + MASK


def split(template: str, group_word: str, lang: str) -> tuple[str, str, str]:
    """(left, separator, right) of ``template`` with ``group_word`` filled in: the trait goes between."""
    left, right = template.replace("<group>", group_word).split(mask_pattern(lang))
    return left, mask_pattern(lang)[: -len(MASK)], right
