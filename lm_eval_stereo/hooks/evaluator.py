"""``lm_eval.evaluator``: lm_eval 0.4.13's ``evaluate`` sends every request before it looks at the answers, and its
``simple_evaluate`` writes ``model_args`` into the results as given.

- A log-likelihood task on a served model that cannot score it (a chat-completions endpoint, a completions endpoint
  without prompt log-probabilities) would send every request and score garbage or fail at the end: ``evaluate``
  checks first (:func:`lm_eval_stereo.hooks.api_models.check_scoring_tasks`), one line and exit status 2.
- lm_eval has no count of the requests a model did not answer: ``evaluate`` resets the counting model's counts before
  the run and writes them into every generative task's results after it
  (:func:`lm_eval_stereo.core.unanswered.add_unanswered_counts`).
- ``--model_args api_key=...`` (or ``auth_token``, ``header``, a ``base_url`` with ``user:key@``) would reach the
  results file and every report made from it: ``simple_evaluate`` redacts them (:func:`redact_model_args`).
"""

from __future__ import annotations

import functools
from collections import Counter
from types import ModuleType
from typing import Any

from lm_eval_stereo.core.prefix_cache import add_resent_counts, reset_resent_counts
from lm_eval_stereo.core.unanswered import COUNTS_ATTRIBUTE, add_unanswered_counts, counting_model
from lm_eval_stereo.core.values import parse_model_args
from lm_eval_stereo.hooks import wrap
from lm_eval_stereo.hooks.api_models import check_scoring_tasks, redact_url

#: ``model_args`` whose value is a credential
SECRET_ARGS = ("auth_token", "api_key", "header")
REDACTED = "<redacted>"


def redact_model_args(model_args: Any) -> Any:
    """``model_args`` (a dict or ``k=v,...`` text) with credentials replaced by :data:`REDACTED`, ``base_url``
    without ``user:key@`` and query string."""
    args = parse_model_args(model_args)
    if not any(key in args for key in (*SECRET_ARGS, "base_url")):
        return model_args
    for key in SECRET_ARGS:
        if key in args:
            args[key] = REDACTED
    if "base_url" in args:
        args["base_url"] = redact_url(args["base_url"])
    if isinstance(model_args, dict):
        return {key: args.get(key, value) for key, value in model_args.items()}
    return ",".join(f"{key}={value}" for key, value in args.items())


def evaluate_wrapper(original: Any) -> Any:
    """lm_eval's ``evaluate`` with :func:`check_scoring_tasks` before the run and :func:`add_unanswered_counts` after
    it."""

    @functools.wraps(original)
    def evaluate(*args: Any, **kwargs: Any) -> Any:
        lm = kwargs["lm"] if "lm" in kwargs else args[0]
        task_dict = kwargs["task_dict"] if "task_dict" in kwargs else args[1]
        tasks = task_dict.get("tasks", {}) if isinstance(task_dict, dict) and "tasks" in task_dict else {}
        check_scoring_tasks(lm, tasks)
        model = counting_model(lm)
        if model is not None:
            model.__dict__[COUNTS_ATTRIBUTE] = Counter()
        reset_resent_counts(lm)
        results = original(*args, **kwargs)
        add_unanswered_counts(lm, tasks, results)
        add_resent_counts(lm, tasks, results)
        return results

    evaluate._lm_eval_stereo = True  # type: ignore[attr-defined]
    return evaluate


def simple_evaluate_wrapper(original: Any) -> Any:
    """lm_eval's ``simple_evaluate`` whose results' ``model_args`` carry no credentials (:func:`redact_model_args`)."""

    @functools.wraps(original)
    def simple_evaluate(*args: Any, **kwargs: Any) -> Any:
        results = original(*args, **kwargs)
        config = results.get("config") if isinstance(results, dict) else None
        if isinstance(config, dict) and config.get("model_args"):
            config["model_args"] = redact_model_args(config["model_args"])
        return results

    simple_evaluate._lm_eval_stereo = True  # type: ignore[attr-defined]
    return simple_evaluate


def install(module: ModuleType) -> None:
    """lm_eval's ``evaluate`` checks a served model before the run and counts its unanswered requests after it;
    ``simple_evaluate`` keeps credentials out of the results."""
    wrap(module, "evaluate", evaluate_wrapper)
    wrap(module, "simple_evaluate", simple_evaluate_wrapper)
