"""A request a model did not answer, or answered cut at its token limit, and the count of them per task.

A served model's request that failed after lm_eval's retries, or whose message had no content (null, a refusal, a
content filter), gives an :class:`Unanswered` empty text instead of ending the run
(the plugin's view of a served model, :mod:`lm_eval_stereo.models.served_mixin`); ``replay``'s ``null`` recordings are
the same (:mod:`lm_eval_stereo.models.replay`). The task scores it as the empty output it is, lm_eval's ``--use_cache``
never stores it (:class:`lm_eval_stereo.core.answer_record.AnswerCache`), and the model that counts them
(:func:`counting_model`) has its per-task counts written into the plugin's tasks' results as ``unanswered``
(:func:`add_unanswered_counts`, after lm_eval's ``evaluate``: :mod:`lm_eval_stereo.hooks.evaluator`).

A served answer that ended at the token limit (``finish_reason: "length"``: ``max_gen_toks`` reached before the
model stopped) is a :class:`CutText` (:func:`lm_eval_stereo.core.served_answers.mark_cut`): scored as the text it is,
kept by ``--use_cache`` with its mark, and counted per task as ``cut_answers`` from the answers the task received
(those ``--use_cache`` served among them), so that a cut answer is never taken for a complete one unsaid.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

#: the per-task count of requests that gave no text, added to every generative task's results
UNANSWERED = "unanswered"


class Unanswered(str):
    """The text of a request the server did not answer (failed after retries, null or refused content): equal to
    lm_eval's placeholder (``LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER``, empty by default), so tasks score it as that
    text, but recognisable, so the results count it and the request cache never keeps it."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return (Unanswered, (str(self),))


#: the per-task count of answers cut at the token limit, added to every generative task of a served run's results
CUT_ANSWERS = "cut_answers"


class CutText(str):
    """The text of an answer the server cut at the token limit (``finish_reason: "length"``)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return (CutText, (str(self),))


#: the attribute of a model that holds its per-task counts of unanswered requests
COUNTS_ATTRIBUTE = "_lm_eval_stereo_unanswered"


def count_unanswered(model: Any, requests: list, texts: list, empty_too: bool = True) -> None:
    """Add the requests whose text is :class:`Unanswered` (``empty_too``: or empty) to ``model``'s per-task counts,
    which :func:`add_unanswered_counts` writes into the results."""
    counts = model.__dict__.setdefault(COUNTS_ATTRIBUTE, Counter())
    for request, text in zip(requests, texts):
        if isinstance(text, Unanswered) or (empty_too and not text):
            counts[getattr(request, "task_name", None)] += 1


def _inner(lm: Any) -> Any:
    """``lm``, or the model inside ``--use_cache``'s ``CachingLM``."""
    return lm.__dict__.get("lm", lm) if hasattr(lm, "__dict__") else lm


def served_model(lm: Any) -> Any:
    """The lm_eval API model behind ``lm`` (unwrapping ``--use_cache``'s ``CachingLM``), else None. An API model's
    module is imported before it is built: where it is not, no model is one, and the module (with aiohttp, 1.5
    CPU-seconds) is not imported for a run that serves none."""
    api_models = sys.modules.get("lm_eval.models.api_models")
    inner = _inner(lm)
    return inner if api_models is not None and isinstance(inner, api_models.TemplateAPI) else None


def counting_model(lm: Any) -> Any:
    """The model behind ``lm`` that counts unanswered requests: a served model, or one that says so
    (``COUNTS_UNANSWERED``: ``replay``, whose ``null`` recordings are requests that were not answered), else None."""
    inner = _inner(lm)
    return inner if served_model(inner) is not None or getattr(inner, "COUNTS_UNANSWERED", False) else None


def _cut_answers(task: Any) -> int:
    """The answers ``task`` received that are :class:`CutText` (each repeat of a sampled prompt its own answer)."""
    return sum(isinstance(answer, CutText) for request in task.instances or () for answer in request.resps)


def add_unanswered_counts(lm: Any, tasks: dict[str, Any], results: dict | None) -> None:
    """Add ``unanswered`` (requests that gave no text) to every generative task of a served (or replayed) run's
    results, and, for a served run, ``cut_answers`` (answers cut at the token limit)."""
    model = counting_model(lm)
    if model is None or not results or "results" not in results:
        return
    write_task_counts(results, tasks, ("generate_until",), UNANSWERED, model.__dict__.get(COUNTS_ATTRIBUTE, Counter()))
    if served_model(model) is not None:
        cut = Counter({name: _cut_answers(task) for name, task in tasks.items()})
        write_task_counts(results, tasks, ("generate_until",), CUT_ANSWERS, cut)


def write_task_counts(
    results: dict, tasks: dict[str, Any], output_types: tuple[str, ...], name: str, counts: Counter
) -> None:
    """Write ``counts`` (per task name) as the metric ``name`` of every task of ``output_types`` in ``results`` (0
    where a task has none), under the filter of the task's other metrics."""
    for task_name, task in tasks.items():
        metrics = results["results"].get(task_name)
        if getattr(task, "OUTPUT_TYPE", None) not in output_types or metrics is None:
            continue
        filters = [key.partition(",")[2] for key in metrics if "," in key]
        metrics[f"{name},{filters[0] if filters else 'none'}"] = counts.get(task_name, 0)
