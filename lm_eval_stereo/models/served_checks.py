"""Before the first request of a run of the plugin's tasks on a served model: what lm_eval 0.4.13 would find only
after sending every request, or never, said in one line (exit status 2).

- lm_eval's API packages (``lm_eval[api]``) missing: one line naming ``pip install "lm-eval-stereo[api]"``
  (:func:`check_api_packages`; lm_eval: an ``ImportError`` trace);
- no server at ``base_url``: one line naming the URL (:func:`check_server`; lm_eval: every request retried, then a
  trace);
- a log-likelihood task on a chat-completions model, or on a completions endpoint that returns no prompt
  log-probabilities: one line naming the endpoint and what it lacks (:func:`check_scoring_tasks`; lm_eval: every
  request sent, then garbage or a trace).
"""

from __future__ import annotations

import socket
from importlib.util import find_spec
from typing import Any
from urllib.parse import urlsplit

from lm_eval_stereo.core.credentials import redact_url
from lm_eval_stereo.core.errors import fail
from lm_eval_stereo.core.unanswered import served_model
from lm_eval_stereo.core.values import parse_model_args

#: lm_eval 0.4.13's OpenAI-compatible backends (``lm_eval/models/openai_completions.py``)
API_MODELS = frozenset(
    {
        "local-completions",
        "local-chat-completions",
        "openai-completions",
        "openai-chat-completions",
        "azure-openai-chat-completions",
        "local-completions-prefix",
    }
)
#: what lm_eval's API models import (``lm_eval[api]``; ``tiktoken`` only for OpenAI's own tokenizer)
API_PACKAGES = ("requests", "aiohttp", "tenacity", "tqdm")
INSTALL_HINT = 'pip install "lm-eval-stereo[api]"'
#: seconds to wait for a TCP connection to the server before the run
CONNECT_TIMEOUT = 5.0
#: the output types of log-likelihood tasks, which need the prompt's log-probabilities
SCORING_TYPES = ("loglikelihood", "multiple_choice", "loglikelihood_rolling")
#: the prompt of the probe that asks a completions endpoint for prompt log-probabilities
PROBE_PROMPT = "The cat sat on the mat"


def missing_api_packages() -> list[str]:
    """The packages of :data:`API_PACKAGES` that are not installed."""
    return [package for package in API_PACKAGES if find_spec(package) is None]


def check_api_packages(model: str | None) -> None:
    """Stop in one line (exit status 2) when ``--model`` is an API model and lm_eval's API packages are missing."""
    missing = missing_api_packages() if model in API_MODELS else []
    if missing:
        fail(f"--model {model} needs {', '.join(missing)}: {INSTALL_HINT}")


def check_server(base_url: Any) -> None:
    """Stop in one line (exit status 2) when no server listens at ``base_url`` (an API model's; nothing when none)."""
    if not base_url:
        return
    parts = urlsplit(str(base_url))
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None:
        fail(f"--model_args base_url={redact_url(str(base_url))} is not an http(s) URL with a host")
    try:
        socket.create_connection((parts.hostname, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        fail(f"no server answers at {redact_url(str(base_url))} ({reason}): start it, or correct --model_args base_url")


def check_server_of(model: str | None, model_args: Any) -> None:
    """:func:`check_server` of ``--model_args base_url`` where ``--model`` is an API model."""
    if model in API_MODELS:
        check_server(parse_model_args(model_args).get("base_url"))


def _prompt_logprobs(model: Any) -> tuple[bool, str]:
    """Whether ``model``'s completions endpoint returns the prompt's log-probabilities (``echo`` with ``logprobs``),
    and what it returned instead."""
    import requests

    payload = {
        "model": model.model,
        "prompt": PROBE_PROMPT,
        "max_tokens": 1,
        "temperature": 0,
        "logprobs": 1,
        "echo": True,
    }
    try:
        response = requests.post(
            model.base_url, json=payload, headers=model.header, verify=model.verify_certificate, timeout=model.timeout
        )
        response.raise_for_status()
        choice = (response.json().get("choices") or [{}])[0]
    except (requests.RequestException, ValueError, AttributeError) as exc:
        return False, f"the probe request failed ({type(exc).__name__})"
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    tokens = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(tokens, list) or len(tokens) < 2:
        found = "no logprobs" if not logprobs else "log-probabilities of the generated token only"
        return False, f"it answered echo=true, logprobs=1 with {found}"
    return True, ""


def check_served_run(lm: Any, tasks: dict[str, Any]) -> None:
    """Before the first request of the plugin's ``tasks`` on a served model (``lm``, or the model inside
    ``--use_cache``'s ``CachingLM``): a server answers at its ``base_url`` (:func:`check_server`), and it can score
    the log-likelihood tasks among them (:func:`check_scoring_tasks`). Nothing for other backends."""
    model = served_model(lm)
    if model is None:
        return
    check_server(getattr(model, "base_url", None))
    check_scoring_tasks(model, tasks)


def check_scoring_tasks(model: Any, tasks: dict[str, Any]) -> None:
    """Stop before the first request when log-likelihood ``tasks`` meet a served ``model`` that cannot score them."""
    scoring = sorted(name for name, task in tasks.items() if getattr(task, "OUTPUT_TYPE", None) in SCORING_TYPES)
    if not scoring:
        return
    from lm_eval.models.openai_completions import LocalChatCompletion

    names = ", ".join(scoring)
    url = redact_url(str(model.base_url or ""))
    advice = (
        "run them with --model local-completions against a server whose completions endpoint returns prompt "
        "log-probabilities (e.g. vLLM), with --model_args tokenizer=<local tokenizer folder>, or in-process "
        "(--model hf); see docs/RUNNING.md, 'Evaluating a served model'"
    )
    if isinstance(model, LocalChatCompletion):
        fail(f"{names}: log-likelihood tasks, which a chat-completions endpoint ({url}) cannot score: {advice}")
    if model.tokenizer is None:
        fail(f"{names}: log-likelihood tasks need the model's tokenizer: pass --model_args tokenizer=<folder>")
    ok, found = _prompt_logprobs(model)
    if not ok:
        fail(f"{names}: log-likelihood tasks need prompt log-probabilities, and {url}: {found}: {advice}")
