"""A served model's credentials while its run works: the ones its requests carry, hidden from every log line, and the
ones lm_eval cannot send, named before the first request.

- lm_eval's API models send ``Authorization: Bearer <key>`` with every request, the key read from the environment
  (``OPENAI_API_KEY``), never from the model arguments; a request that fails in flight (an HTTP 503 to one of
  ``num_concurrent`` requests) is logged with its headers, the key among them. The headers the backend sends are
  hidden for the rest of the run (:func:`request_secrets`,
  :func:`lm_eval_stereo.core.credentials.keep_hidden`).
- A ``base_url`` with user info (``http://user:key@host/...``) and ``num_concurrent`` above 1: lm_eval sends the
  concurrent requests through aiohttp, which refuses credentials in the URL beside the ``Authorization`` header it is
  given ("Cannot combine AUTHORIZATION header with AUTH argument or credentials encoded in URL"): every request fails,
  each with a trace. The run stops before its first request, in one line saying what to do instead
  (:func:`url_credentials_problem`); with ``num_concurrent=1`` lm_eval sends them through ``requests``, which turns
  them into the request's basic authentication.

Both hold for lm_eval's own tasks too: no credential on a console, one line where lm_eval ends in traces.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from lm_eval_stereo.core.credentials import keep_hidden, redact_url, secrets_of


def request_secrets(backend: Any) -> frozenset[str]:
    """The credentials in the headers ``backend`` sends with its requests (an lm_eval API model's ``header``); none
    for a backend without, or one whose headers cannot be read (no key in the environment: lm_eval says so at its
    first request)."""
    if not hasattr(type(backend), "header"):
        return frozenset()
    try:
        headers = backend.header
    except Exception:  # noqa: BLE001 - lm_eval's OpenAI models raise where their key is missing
        return frozenset()
    return secrets_of({"header": headers}) if isinstance(headers, dict) else frozenset()


def url_credentials_problem(backend: Any) -> str | None:
    """The line that stops a run whose ``base_url`` carries user info while ``num_concurrent`` is above 1 (see the
    module docstring), else None."""
    base_url, concurrent = getattr(backend, "base_url", None), getattr(backend, "_concurrent", 1)
    if not isinstance(base_url, str) or not isinstance(concurrent, int) or concurrent <= 1:
        return None
    try:
        parts = urlsplit(base_url)
        credentials = parts.username is not None or parts.password is not None
    except ValueError:
        return None
    if not credentials:
        return None
    return (
        f"base_url {redact_url(base_url)} carries credentials as user info (user:key@), which lm_eval's concurrent "
        f"requests (num_concurrent={concurrent}, through aiohttp) cannot send beside its Authorization header: every "
        "request would fail. Give the key as OPENAI_API_KEY (or header=...) and base_url without it, or "
        "num_concurrent=1; no request was sent"
    )


def before_first_request(backend: Any) -> str | None:
    """Hide the credentials ``backend`` sends (:func:`request_secrets`); the line that stops the run where its
    ``base_url``'s credentials cannot be sent (:func:`url_credentials_problem`), else None."""
    keep_hidden(request_secrets(backend))
    return url_credentials_problem(backend)
