"""``lm_eval.evaluator``: lm_eval 0.4.13's ``evaluate`` sends every request before it looks at the answers, and its
``simple_evaluate`` writes ``model_args`` into the results as given.

- A log-likelihood task on a served model that cannot score it (a chat-completions endpoint, a completions endpoint
  without prompt log-probabilities) would send every request and score garbage or fail at the end: ``evaluate``
  checks first (:func:`lm_eval_stereo.hooks.api_models.check_scoring_tasks`), one line and exit status 2.
- lm_eval has no count of the requests a model did not answer: ``evaluate`` resets the counting model's counts before
  the run and writes them into every generative task's results after it
  (:func:`lm_eval_stereo.core.unanswered.add_unanswered_counts`).
- lm_eval merges the model arguments into every task's metadata, where no task can tell them from ``--metadata``
  options: ``simple_evaluate`` holds the keys the caller passed while it builds the tasks
  (:mod:`lm_eval_stereo.core.model_arguments`), so every one of them is accepted as a model argument.
- ``--model_args api_key=...`` (or ``auth_token``, ``token``, ``header``, a ``base_url`` with ``user:key@`` or a
  key in its query) would reach ``config.model_args`` and every ``configs.<task>.metadata`` of the results file, and
  every report made from it: ``simple_evaluate`` redacts them (:mod:`lm_eval_stereo.core.credentials`), and while
  it runs they are replaced in every log record (its own "Initializing ... with arguments" line among them).
- ``simple_evaluate(model="vllm", ...)`` starts a vLLM engine and never shuts it down: left to vLLM's exit handlers,
  some finished runs abort (exit status 134, :mod:`lm_eval_stereo.hooks.vllm` says why). ``simple_evaluate`` shuts
  down every engine it started when it returns or raises, for ``lm_eval``, ``lm-eval-stereo`` and Python callers
  alike.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from types import ModuleType
from typing import Any

from lm_eval_stereo.core import model_arguments
from lm_eval_stereo.core.credentials import hidden, redact_mapping, redact_model_args, secrets_of
from lm_eval_stereo.core.prefix_cache import add_resent_counts, reset_resent_counts
from lm_eval_stereo.core.unanswered import COUNTS_ATTRIBUTE, add_unanswered_counts, counting_model
from lm_eval_stereo.hooks import wrap
from lm_eval_stereo.hooks.api_models import check_scoring_tasks
from lm_eval_stereo.hooks.vllm import shut_down_engines_started_within


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
    """lm_eval's ``simple_evaluate`` that tells the tasks it builds which keys of their metadata are the model
    arguments the caller passed (:func:`lm_eval_stereo.core.model_arguments.passing`), and whose results carry no
    credentials: neither in ``config.model_args`` nor in any task's ``configs.<task>.metadata``, where lm_eval copies
    the model arguments (:mod:`lm_eval_stereo.core.credentials`), nor in any log record while it runs; it shuts down
    the vLLM engines it started when it returns or raises
    (:func:`lm_eval_stereo.hooks.vllm.shut_down_engines_started_within`)."""
    import inspect

    parameters = inspect.signature(original)

    @functools.wraps(original)
    def simple_evaluate(*args: Any, **kwargs: Any) -> Any:
        bound = parameters.bind_partial(*args, **kwargs).arguments
        given = bound.get("model_args")
        # a model object (``model=lm``) was built from arguments this call never sees (a caller's TaskManager
        # metadata may carry them): they stay unknown, and only near misses of an option are refused
        known = isinstance(bound.get("model", "hf"), str)
        held = model_arguments.passing(given) if known else contextlib.nullcontext()
        with held, hidden(secrets_of(given)), shut_down_engines_started_within():
            results = original(*args, **kwargs)
        if not isinstance(results, dict):
            return results
        config = results.get("config")
        if isinstance(config, dict) and config.get("model_args"):
            config["model_args"] = redact_model_args(config["model_args"])
        for task_config in (results.get("configs") or {}).values():
            if isinstance(task_config, dict) and isinstance(task_config.get("metadata"), dict):
                task_config["metadata"] = redact_mapping(task_config["metadata"])
        return results

    simple_evaluate._lm_eval_stereo = True  # type: ignore[attr-defined]
    return simple_evaluate


def install(module: ModuleType) -> None:
    """lm_eval's ``evaluate`` checks a served model before the run and counts its unanswered requests after it;
    ``simple_evaluate`` keeps credentials out of the results and shuts down the vLLM engines it started."""
    wrap(module, "evaluate", evaluate_wrapper)
    wrap(module, "simple_evaluate", simple_evaluate_wrapper)
