"""What a served model's answer must be before lm_eval reads it as a score or a text: the checks
:mod:`lm_eval_stereo.models.served_mixin` runs on every answer of an OpenAI-compatible server to the plugin's tasks.

lm_eval 0.4.13 reads a log-likelihood answer (``echo`` with ``logprobs``) as ``sum(token_logprobs[ctxlen:-1])``: a
list shorter than the tokens sent, or one without the generated token's entry, silently drops continuation tokens
from the sum; a positive, infinite or NaN value is summed as it is; more or fewer choices than prompts are zipped
away. :func:`check_logprobs` raises :class:`ServedAnswerError` naming what is wrong instead. :func:`is_asked_model`
says whether the model an answer names is the one asked for. A chat or completions answer cut by the token limit
(``finish_reason: "length"``) is marked (:func:`mark_cut`: a :class:`~lm_eval_stereo.core.unanswered.CutText`), so
that the task's count of them (``cut_answers``) holds it.

The standard library only (no lm_eval).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from lm_eval_stereo.core.unanswered import CutText, Unanswered

#: what may follow the asked model's name in the name an answer gives: a version or revision a server appends
#: (OpenAI's ``gpt-4o`` answering as ``gpt-4o-2024-08-06``, ``transformers serve``'s ``org/name@main``)
MODEL_SUFFIX = re.compile(r"[-@:.][\w.:@-]*")


class ServedAnswerError(ValueError):
    """A served answer that is not an answer to the requests sent; its text says what is wrong."""


class AnsweringModelError(ServedAnswerError):
    """An answer from another model than the one asked for, or than the endpoint's earlier answers; its text is the
    whole line that ends the run."""


def is_asked_model(asked: Any, named: str) -> bool:
    """Whether an answer naming ``named`` comes from the model asked for (``asked``, the request's ``model``): the same
    name, or it followed by a version a server appends (:data:`MODEL_SUFFIX`). No model asked: any."""
    if not isinstance(asked, str) or not asked:
        return True
    return named == asked or (named.startswith(asked) and bool(MODEL_SUFFIX.fullmatch(named[len(asked) :])))


def _choices(outputs: Any) -> list[dict]:
    """Every choice of the answers ``outputs`` (one answer or a list of them), each answer's in its ``index`` order."""
    found: list[dict] = []
    for answer in outputs if isinstance(outputs, list) else [outputs]:
        choices = answer.get("choices") if isinstance(answer, dict) else None
        if not isinstance(choices, list) or not all(isinstance(choice, dict) for choice in choices):
            shape = type(answer).__name__ if not isinstance(answer, dict) else f"keys {', '.join(map(str, answer))}"
            raise ServedAnswerError(f"an answer without a list of choices ({shape})")
        indices = [choice.get("index") for choice in choices]
        if sorted(map(str, indices)) != sorted(map(str, range(len(choices)))):
            raise ServedAnswerError(f"choices numbered {indices}, not 0 to {len(choices) - 1}")
        found += sorted(choices, key=lambda choice: int(choice["index"]))
    return found


def _is_logprob(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value <= 0


def check_logprobs(outputs: Any, tokens: Sequence[Sequence[Any]], ctxlens: Sequence[int]) -> None:
    """Raise :class:`ServedAnswerError` unless ``outputs`` (the answers to one request of ``echo`` log-likelihood
    prompts ``tokens``, scored from ``ctxlens``) hold one choice per prompt, each with ``logprobs.token_logprobs`` of
    every token sent and of the one generated, a finite log-probability (<= 0) for every token scored and the
    generated one, and ``top_logprobs`` (what lm_eval reads ``greedy`` from) for every token scored."""
    choices = _choices(outputs)
    if len(choices) != len(tokens):
        raise ServedAnswerError(f"{len(choices)} choices for the {len(tokens)} prompts sent")
    for number, (sent, ctxlen, choice) in enumerate(zip(tokens, ctxlens, choices)):
        prompt = f"prompt {number + 1} of {len(tokens)}: " if len(tokens) > 1 else ""
        logprobs = choice.get("logprobs")
        values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
        tops = logprobs.get("top_logprobs") if isinstance(logprobs, dict) else None
        if not isinstance(values, list) or not isinstance(tops, list):
            found = f"{logprobs!r}"[:80]
            raise ServedAnswerError(f"{prompt}no logprobs.token_logprobs and top_logprobs lists (logprobs: {found})")
        if len(values) == len(sent):
            raise ServedAnswerError(
                f"{prompt}{len(values)} log-probabilities for the {len(sent)} tokens sent, without the generated "
                "token's entry: lm_eval would drop the continuation's last token"
            )
        if len(values) != len(sent) + 1:
            raise ServedAnswerError(
                f"{prompt}{len(values)} log-probabilities for the {len(sent)} tokens sent and the one generated "
                f"({len(sent) + 1} expected)"
            )
        for position in range(ctxlen, len(values)):
            if not _is_logprob(values[position]):
                raise ServedAnswerError(
                    f"{prompt}token {position + 1} of {len(values)} has the log-probability {values[position]!r}, "
                    "not a finite number <= 0"
                )
        if len(tops) != len(values) or not all(
            isinstance(top, dict) and top and all(map(_is_logprob, top.values())) for top in tops[ctxlen:-1]
        ):
            raise ServedAnswerError(f"{prompt}top_logprobs missing or malformed for the tokens scored")


def choices_of(answer: Any) -> list | None:
    """The ``choices`` of one generation answer, None where it has none (missing, empty, not a list)."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    return choices if isinstance(choices, list) and choices else None


def mark_cut(texts: list, choices: list) -> list:
    """``texts`` (lm_eval's reading of one answer's ``choices``, in ``index`` order) with each text whose choice ended
    at the token limit (``finish_reason: "length"``) a :class:`CutText`."""
    reasons: list[Any] = [None] * len(choices)
    for choice in choices:
        index = choice.get("index") if isinstance(choice, dict) else None
        if isinstance(index, int) and 0 <= index < len(reasons):
            reasons[index] = choice.get("finish_reason")
    if len(texts) != len(reasons):
        return texts
    return [
        CutText(text) if reason == "length" and isinstance(text, str) and not isinstance(text, Unanswered) else text
        for text, reason in zip(texts, reasons)
    ]
