"""The reference's literal template, group, trait and prior-word lists, read from the pinned ``asso.py`` at run time.

``asso.py`` (AnnaSou/Stereotype_Leakage @ 8254eb7, MIT) defines one function per model and language (``mbert_en``,
``bert_ru``, ``mt5_hi``, ...) whose local variables are the literal lists. The file (from the offline mirror
``LM_EVAL_STEREO_DATA_DIR`` or downloaded, sha256-verified either way) is parsed with :mod:`ast` and
:func:`ast.literal_eval`, never executed; sets become sorted lists.

:func:`reference_lists` converts the literals into one dict per language: ``templates`` per template set (``mlm`` =
the mBERT function, ``mlm_full`` = the monolingual-BERT function, ``seq2seq`` = the mT5 function; Hindi as
``{"extra", "fem", "masc"}``, with no ``extra`` templates for mBERT, whose function never loops them), ``groups``
(placeholder -> {word: English name}), ``priors`` (placeholder -> prior word) and ``traits`` (form -> 32 words
index-aligned with :data:`~lm_eval_stereo.tasks.stereotype_leakage.data.TRAITS`). Groups, traits and priors are the
same in the three functions of a language.

English names of the group words: the English singular words are the names; the English plurals map through
:data:`~lm_eval_stereo.tasks.stereotype_leakage.data.ANNOTATION_GROUPS` (the annotator files' plurals); the other
languages' words through :data:`ENGLISH_NAMES`, the names in the order the reference lists the words (its sets
sorted). A test checks this alignment against the reference's own maps in ``aggre_tem.py``.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from lm_eval_stereo.core import sources
from lm_eval_stereo.tasks.stereotype_leakage.data import ANNOTATION_GROUPS, LANGUAGES, SOURCE

ASSO = "asso.py"
#: template set -> prefix of the reference's function (``<prefix>_<lang>``)
FUNCTIONS: dict[str, str] = {"mlm": "mbert", "mlm_full": "bert", "seq2seq": "mt5"}

_RU_PLURAL = (
    "housewife", "single mother", "man", "woman", "gay man", "lesbian", "software engineer", "wealthy person",
    "poor person", "disabled person", "Asian person", "Black person", "Muslim person", "immigrant",
    "government official", "feminist", "civil servant", "veteran", "Hui person", "migrant worker",
    "Shanghainese person", "muscovite", "Chechenets", "VDV soldier", "Texan", "Mormon person", "Puerto Rican",
    "Gujarati person", "Brahmin person", "Shudra person",
)  # fmt: skip
_HI_FEMININE = ("single mother", "housewife", "woman", "lesbian")
_HI_MASCULINE = ("man", "gay man")
_HI_NEUTRAL = (
    "disabled person", "immigrant", "wealthy person", "Black person", "Asian person", "poor person",
    "Gujarati person", "Chechenets", "Texan", "Shudra person", "feminist", "Puerto Rican", "migrant worker",
    "Brahmin person", "muscovite", "Muslim person", "Mormon person", "VDV soldier", "civil servant",
    "Shanghainese person", "government official", "veteran", "software engineer", "Hui person",
)  # fmt: skip
#: (language, placeholder) -> the English names of the reference's group words, in the order of its lists
ENGLISH_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("zh", "group"): (
        "Shanghainese person", "Asian person", "VDV soldier", "civil servant", "migrant worker", "single mother",
        "Gujarati person", "Hui person", "woman", "lesbian", "feminist", "Brahmin person", "housewife",
        "wealthy person", "Texan", "Mormon person", "government official", "disabled person", "Puerto Rican", "man",
        "gay man", "immigrant", "Muslim person", "poor person", "muscovite", "Chechenets", "software engineer",
        "veteran", "Shudra person", "Black person",
    ),
    ("ru", "csgroup_fem"): (
        "housewife", "single mother", "woman", "lesbian", "Asian person", "Muslim person", "immigrant",
        "government official", "feminist", "civil servant", "migrant worker", "Shanghainese person", "muscovite",
        "Chechenets", "Texan", "Puerto Rican", "Gujarati person", "Brahmin person", "Shudra person",
    ),
    ("ru", "csgroup_masc"): (
        "man", "gay man", "software engineer", "wealthy person", "poor person", "disabled person", "Asian person",
        "Black person", "Muslim person", "immigrant", "government official", "feminist", "civil servant", "veteran",
        "Hui person", "migrant worker", "Shanghainese person", "muscovite", "Chechenets", "VDV soldier", "Texan",
        "Mormon person", "Puerto Rican", "Gujarati person", "Brahmin person", "Shudra person",
    ),
    ("ru", "pgroup"): _RU_PLURAL,
    ("ru", "cpgroup"): _RU_PLURAL,
    ("hi", "sfgroup"): _HI_FEMININE,
    ("hi", "pfgroup"): _HI_FEMININE,
    ("hi", "smgroup"): _HI_MASCULINE,
    ("hi", "pmgroup"): _HI_MASCULINE,
    ("hi", "sngroup"): _HI_NEUTRAL,
    ("hi", "pngroup"): _HI_NEUTRAL,
    ("hi", "pgroup2"): (
        "single mother", "disabled person", "immigrant", "wealthy person", "Black person", "Asian person",
        "poor person", "Gujarati person", "housewife", "Chechenets", "Texan", "Shudra person", "feminist", "man",
        "Puerto Rican", "migrant worker", "Brahmin person", "woman", "muscovite", "Muslim person", "Mormon person",
        "VDV soldier", "civil servant", "Shanghainese person", "gay man", "lesbian", "government official",
        "veteran", "software engineer", "Hui person",
    ),
}  # fmt: skip


def _plain(value: Any) -> Any:
    """``value`` with sets as sorted lists and tuples as lists."""
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def extract_literals(source: str) -> dict[str, dict[str, Any]]:
    """Function name -> {variable: literal value} of every ``name = <literal>`` statement directly in the body of
    each top-level function of ``source`` (parsed, never executed; non-literal assignments skipped)."""
    functions: dict[str, dict[str, Any]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        literals = {}
        for statement in node.body:
            if isinstance(statement, ast.Assign) and [type(t) for t in statement.targets] == [ast.Name]:
                try:
                    value = ast.literal_eval(statement.value)
                except ValueError:
                    continue
                literals[statement.targets[0].id] = _plain(value)
        functions[node.name] = literals
    return functions


@functools.cache
def asso_literals() -> dict[str, dict[str, Any]]:
    """The literals of the pinned ``asso.py`` per function (mirror or download, checksum-verified)."""
    return extract_literals(sources.fetch(SOURCE, ASSO).read_text(encoding="utf-8"))


def english_names(lang: str, placeholder: str, words: list[str]) -> dict[str, str]:
    """{word: English group name} for the words of one placeholder of the reference."""
    if lang == "en":
        names = [word if placeholder == "sgroup" else _english_plural(word) for word in words]
    else:
        names = list(ENGLISH_NAMES[(lang, placeholder)])
    if len(names) != len(words):
        raise ValueError(f"{lang} {placeholder}: {len(words)} group words, {len(names)} English names")
    return dict(zip(words, names))


def _english_plural(word: str) -> str:
    """The group name of an English plural as the reference writes it (capitalised at a sentence start)."""
    return ANNOTATION_GROUPS.get(word) or ANNOTATION_GROUPS[word[0].lower() + word[1:]]


def _language_lists(lang: str, literals: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One language's lists (see the module docstring) from the literals of its three functions."""
    functions = {name: literals[f"{prefix}_{lang}"] for name, prefix in FUNCTIONS.items()}
    base = functions["mlm"]
    if lang == "en":
        groups = {"sgroup": base["groups_sing"], "pgroup": base["groups_plur"], "cpgroup": base["groups_cap_plur"]}
        priors = {"sgroup": base["prior_g_sing"], "pgroup": base["prior_g_plur"], "cpgroup": base["prior_g_cap_plur"]}
        traits = {"trait": base["traits"]}
    elif lang == "zh":
        groups, priors, traits = {"group": base["groups"]}, {"group": base["prior_group"]}, {"trait": base["traits"]}
    elif lang == "ru":
        groups = {
            "csgroup_fem": base["csgroup"]["feminine"],
            "csgroup_masc": base["csgroup"]["masculine"],
            **base["pluralgroups"],
        }
        priors = {"csgroup": base["prior_g_cs"], "pgroup": base["prior_g_p"], "cpgroup": base["prior_g_cp"]}
        traits = {"strait_fem": base["strait"]["feminine"], "strait_masc": base["strait"]["masculine"]}
        traits.update(base["pluraltraits"])
    else:
        slots = ("sfgroup", "smgroup", "pfgroup", "pmgroup", "sngroup", "pngroup", "pgroup2")
        groups = {slot: base[slot] for slot in slots}
        priors = {"s": base["prior_g_s"], "p": base["prior_g_p"], "pgroup2": base["prior_g_g2"]}
        traits = {"trait": base["traits"]}
    if lang == "hi":
        templates = {
            name: {
                "extra": function["tplts_extra"] if name != "mlm" else {},
                "fem": function["tplts_fem"],
                "masc": function["tplts_msc"],
            }
            for name, function in functions.items()
        }
    else:
        templates = {name: function["tplts"] for name, function in functions.items()}
    return {
        "templates": templates,
        "groups": {slot: english_names(lang, slot, words) for slot, words in groups.items()},
        "priors": priors,
        "traits": traits,
    }


def convert(literals: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """language -> its lists, from the literals of ``asso.py`` per function."""
    return {lang: _language_lists(lang, literals) for lang in LANGUAGES}


@functools.cache
def reference_lists() -> dict[str, dict[str, Any]]:
    """The reference's lists per language (see the module docstring), read once."""
    return convert(asso_literals())
