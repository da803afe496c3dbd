"""German text processing for the co-occurrence score of Gnadt et al. (GeBNLP 2025): tokenising, stop
words, lemmatising with part-of-speech tags, and the neutralisation of gendered word endings.

Everything works offline from PyPI packages that ship their data:

- stop words: ``stop-words`` (``get_stop_words("german")``, the list the reference code uses);
- lemmas and tags: HanTa, the Hanover Tagger (``morphmodel_ger.pgz`` ships inside the package), as in the reference,
  which analyses every token on its own (``HanoverTagger.analyze``) and gets STTS-like tags such as ``NN``,
  ``ADJ(A)``, ``VV(FIN)``;
- tokens: a regular expression (the reference uses NLTK's ``word_tokenize``, whose Punkt model is a separate data
  download; the difference only matters for punctuation, which is dropped anyway).

A token is kept when it starts with a letter (ASCII or ä ö ü Ä Ö Ü ß, the reference's rule), is not a stop word and
is not one of the gendered words of the classifier corpus; both comparisons are case-sensitive, as in the reference.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

from lm_eval_stereo.core.extras import Extra

#: words, including inner hyphens and apostrophes; any other non-space character is a token of its own
TOKEN = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")
#: the reference keeps a token only when it starts with one of these letters
WORD_START = re.compile(r"[a-zA-ZÄäÖöÜüß]")
#: compound endings that name the gender of a person noun, replaced by the neutral "mensch" (Putzfrau → Putzmensch)
GENDERED_COMPOUND_END = re.compile(r"(?<=\w)(frau|mann)$")
#: the feminine suffix of person nouns, stripped (Kollegin → Kolleg); only applied to nouns
FEMININE_SUFFIX = "in"
NOUN_TAGS = frozenset({"NN", "NNA", "NNI", "NE"})


def tokenize(text: str) -> list[str]:
    """The word and punctuation tokens of ``text`` in order."""
    return TOKEN.findall(text)


#: HanTa and the stop-words lists: the optional extra the persona tasks' content lemmas need
LEMMATIZER = Extra(
    "german-personas", ("HanTa", "stop_words"), "HanTa and the stop-words lists for the German lemmatizer"
)


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """The German stop words of the ``stop-words`` package (lower case; matched case-sensitively)."""
    from stop_words import get_stop_words

    return frozenset(get_stop_words("german"))


@lru_cache(maxsize=1)
def _tagger():
    from HanTa import HanoverTagger

    return HanoverTagger.HanoverTagger("morphmodel_ger.pgz")


@lru_cache(maxsize=200_000)
def analyze(token: str) -> tuple[str, str]:
    """(lemma, tag) of one token by HanTa's context-free analysis."""
    lemma, tag = _tagger().analyze(token)
    return str(lemma), str(tag)


def neutralize_gender(lemma: str, tag: str) -> str:
    """Drop the gender marking of a person noun: ``-frau``/``-mann`` → ``-mensch``, final ``-in`` stripped.

    The published word lists show both rules (``Putzmensch``, ``Geschäftsmensch``, ``Kolleg``, ``Fachärzt``); the
    reference applies the ``-in`` rule to bare string endings, so words such as ``Medizin`` lose it too.
    """
    if tag not in NOUN_TAGS:
        return lemma
    if GENDERED_COMPOUND_END.search(lemma):
        return GENDERED_COMPOUND_END.sub("mensch", lemma)
    if lemma.endswith(FEMININE_SUFFIX) and len(lemma) > len(FEMININE_SUFFIX) + 1:
        return lemma[: -len(FEMININE_SUFFIX)]
    return lemma


def content_lemmas(text: str, gendered_words: Collection[str]) -> list[tuple[str, str]]:
    """(lemma, tag) of every kept token of ``text``: tokenised, filtered, lemmatised and gender-neutralised."""
    stops = stop_words()
    kept = []
    for token in tokenize(text):
        if token in gendered_words or token in stops or not WORD_START.match(token):
            continue
        lemma, tag = analyze(token)
        kept.append((neutralize_gender(lemma, tag), tag))
    return kept
