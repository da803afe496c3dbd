"""How KoBBQ reads an answer from a generation: the rules of the reference ``raw2prediction``
(``evaluation/3_postprocess_predictions.py``) and ``abc_2_prediction`` (``4_predictions_to_evaluation.py``).

:func:`read_answer` returns a letter ``A``/``B``/``C`` or, when no rule applies, a text the reference keeps as the
prediction (an *out-of-choice* answer unless that text is itself one of the choices). Rules, in this order, on the
choices in lower case:

1. the *head* of the output: from its start, after blanks and one optional ``(``, up to the first ``.`` or line
   break; ``없습니다`` → ``없음``, ``입니다`` removed;
2. a head starting with a letter A/B/C (either case): if it has ``:`` or ``)`` followed by some text, the letter is
   the answer when that text is the letter's choice, the head itself (out-of-choice) when the texts of the choices
   occur more than once in it altogether, else the letter; without such text, the letter when the head holds exactly
   one of the characters A, B, C (upper-cased);
3. a head equal to a choice's text: that choice's letter;
4. else the first of these that matches the whole output, read again from rule 1: the text after ``**`` (an optional
   quote skipped), after ``답은``/``답:``/``답변은``/``답변:`` (blanks and an optional quote skipped), after a quote
   (each up to the next ``.``, line break, ``*`` or quote);
5. else the letter X when exactly one of ``A:``, ``A)``, ``B:``, ... occurs in the upper-cased output;
6. else the output itself.

:func:`prediction_text` then turns a letter into its choice's text, as shown in the prompt; any other answer stays
as it is. An empty output gives the empty text (out-of-choice); the reference, which reads the outputs back with
pandas, fails on an empty output instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

LETTERS: tuple[str, ...] = ("A", "B", "C")
_HEAD = re.compile(r"^\s*\(?(?P<head>[^.\n]*)\s*")
_AFTER_MARK = re.compile(r"[:)]\s*(?P<rest>.*)\s*")
_FALLBACKS = (
    re.compile(r"\*\*['\"]?(?P<answer>[^.\n*'\"]*)\s*"),
    re.compile(r"답변?[은:]\s*['\"]?(?P<answer>[^.\n*'\"]*)\s*"),
    re.compile(r"['\"](?P<answer>[^.\n*'\"]*)\s*"),
)


def _head(output: str) -> str:
    match = _HEAD.search(output)
    head = match.group("head") if match else ""
    return head.replace("없습니다", "없음").replace("입니다", "")


def _letter_led(head: str, choices: dict[str, str]) -> str | None:
    """Rule 2: the answer of a head starting with a letter, or None when the rule does not decide."""
    upper = head.upper()
    match = _AFTER_MARK.search(upper)
    rest = match.group("rest").strip() if match else ""
    if rest:
        if choices[upper[0]] == rest.lower():
            return upper[0]
        if sum(upper.count(text.upper()) for text in choices.values()) > 1:
            return head
        return upper[0]
    if sum(upper.count(letter) for letter in choices) == 1:
        return upper[0]
    return None


def read_answer(output: str, choices: Sequence[str]) -> str:
    """The letter (``"A"``, ``"B"``, ``"C"``) the output names among ``choices`` (in the order shown), or the text
    the reference keeps when it names none."""
    return _read(output, {letter: text.lower() for letter, text in zip(LETTERS, choices)})


def _read(output: str, choices: dict[str, str]) -> str:
    head = _head(output)
    if head and head.upper()[0] in choices:
        decided = _letter_led(head, choices)
        if decided is not None:
            return decided
    texts = list(choices.values())
    if head.lower() in texts:
        return LETTERS[texts.index(head.lower())]
    for pattern in _FALLBACKS:
        match = pattern.search(output)
        if match is not None:
            return _read(match.group("answer"), choices)
    upper = output.upper()
    marked = [letter for letter in choices if re.search(f"{letter}[:)]", upper)]
    return marked[0] if len(marked) == 1 else output


def prediction_text(answer: str, shown: Sequence[str]) -> str:
    """The prediction the reference scores: the shown choice of a letter, else the answer text itself."""
    return shown[LETTERS.index(answer)] if answer in LETTERS else answer
