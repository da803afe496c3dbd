"""Credentials kept out of every file a run writes: the plugin's one rule of what is a secret and how it is hidden.

A user passes credentials as model arguments (``api_key=``, ``auth_token=``, ``token=``, ``header=``/``headers=``)
or inside a URL (``http://user:KEY@host/...``, ``...?api-key=KEY`` as proxies and Azure-style endpoints take them).
lm_eval 0.4.13 writes the model arguments into ``config.model_args`` and, merged into every task's metadata, into
``configs.<task>.metadata`` of the results file; the plugin writes them into its messages and its answer-cache
record. Everything written goes through :func:`redact_model_args` / :func:`redact_url` first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from lm_eval_stereo.core.values import FALSE, TRUE, parse_model_args

#: what a redacted value reads as
REDACTED = "<redacted>"
#: the names of model arguments, query parameters and metadata keys whose value is a credential: a key, token,
#: secret, password, signature or header, alone or as the last word of the name (``api_key``, ``api-key``,
#: ``auth_token``, ``use_auth_token``, ``sig``, ``headers``)
SECRET_NAME = re.compile(
    r"^(?:.*[_-])?(?:api_?key|key|secret|password|passwd|credentials?|sig|signature|token|authorization|headers?)$",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """Whether a value named ``name`` is a credential (:data:`SECRET_NAME`)."""
    return bool(SECRET_NAME.match(str(name).strip()))


def _is_url(value: str) -> bool:
    parts = urlsplit(value)
    return bool(parts.scheme and parts.netloc)


def redact_url(url: str) -> str:
    """``url`` without its user info (``user:key@``) and with every query parameter named like a credential
    (:data:`SECRET_NAME`: ``api-key``, ``key``, ``token``, ``sig``, ...) replaced by :data:`REDACTED`; the rest of
    the query (``api-version=...``) kept."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError:  # an unparseable port or host: nothing of it is kept but the scheme
        return f"{url.split(':', 1)[0]}://{REDACTED}" if "://" in url else REDACTED
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    query = [(name, REDACTED if is_secret_name(name) else value) for name, value in parse_qsl(parts.query, True)]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="<>"), ""))


def redact_value(name: str, value: Any) -> Any:
    """``value`` as it may be written: :data:`REDACTED` when ``name`` names a credential (but for a truth value:
    ``use_auth_token=True``), a URL without its credentials, anything else as it is."""
    if is_secret_name(name) and value not in (None, "") and str(value).strip().lower() not in (*TRUE, *FALSE):
        return REDACTED
    if isinstance(value, str) and _is_url(value):
        return redact_url(value)
    return value


def redact_mapping(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` (model arguments, a task's metadata) with every credential redacted (:func:`redact_value`)."""
    return {key: redact_value(key, value) for key, value in values.items()}


def redact_model_args(model_args: Any) -> Any:
    """``model_args`` as lm_eval records it (a dict, or ``k=v,...`` text) with every credential redacted; given
    without credentials, returned as it is."""
    args = parse_model_args(model_args) if not isinstance(model_args, Mapping) else dict(model_args)
    redacted = redact_mapping(args)
    if redacted == args:
        return model_args
    if isinstance(model_args, Mapping):
        return redacted
    return ",".join(f"{key}={value}" for key, value in redacted.items())
