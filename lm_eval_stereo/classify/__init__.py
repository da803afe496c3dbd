"""Generative classification: rule-based readers of model outputs (answers, genders).

Public API (imported lazily, so heavy dictionaries load only when used):

- :func:`first_person_gender` (``slavic_gender``): grammatical gender of "I" in a Slavic translation.
- :func:`gerbbq_answer` (``gerbbq``): the option letter a GerBBQ+ output chose, following the reference rules.
- :func:`persona_gender_lexicon` (``persona``): the word-list gender classifier of the German persona tasks.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "first_person_gender": "slavic_gender",
    "gerbbq_answer": "gerbbq",
    "persona_gender_lexicon": "persona",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
