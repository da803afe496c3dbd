"""Credentials kept out of every file a run writes: the plugin's one rule of what is a secret and how it is hidden.

A user passes credentials as model arguments (``api_key=``, ``auth_token=``, ``token=``, ``header=``/``headers=``)
or inside a URL (``http://user:KEY@host/...``, ``...?api-key=KEY`` as proxies and Azure-style endpoints take them).
lm_eval 0.4.13 writes the model arguments into ``config.model_args`` and, merged into every task's metadata, into
``configs.<task>.metadata`` of the results file; the plugin writes them into its messages and its answer-cache
record. Everything written goes through :func:`redact_model_args` / :func:`redact_url` first. What lm_eval prints
to the console (its "Initializing ... with arguments" log line, its summary line) cannot be rewritten before it is
written: while a run is in progress (:func:`hidden`) every log record, and the ``lm_eval`` command's summary line,
has the run's credentials (:func:`secrets_of`) replaced in its text (:func:`redact_text`).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

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


#: a credential shorter than this is not searched for in console text (a one-letter ``api_key=a`` would blank every
#: "a" of every log line); it is still redacted wherever it is written as a model argument or URL part
MIN_SECRET_LENGTH = 4


def _url_secrets(url: str) -> set[str]:
    """The credentials of ``url``: its password (or its user name where it has none: ``http://KEY@host``) and the
    values of its query parameters named like credentials, each as written and percent-decoded."""
    try:
        parts = urlsplit(url)
        found = {parts.password} if parts.password else {parts.username}
    except ValueError:
        return set()
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if is_secret_name(unquote_plus(name)):
            found |= {value, unquote_plus(value)}
    found = {text for text in found if text}
    return found | {unquote(text) for text in found}


def secrets_of(model_args: Any) -> frozenset[str]:
    """The credential texts in ``model_args`` (a dict, ``k=v,...`` or JSON text): the values of arguments named like
    credentials (a header mapping's values and their last word: ``Bearer KEY``), and the credentials of every URL
    (:func:`_url_secrets`); truth values and texts shorter than :data:`MIN_SECRET_LENGTH` left out."""
    args = dict(model_args) if isinstance(model_args, Mapping) else parse_model_args(model_args)
    found: set[str] = set()
    for name, value in args.items():
        values = list(value.values()) if isinstance(value, Mapping) else [value]
        for text in map(str, values):
            if is_secret_name(name) and text.strip().lower() not in (*TRUE, *FALSE, "none"):
                found |= {text, text.split()[-1]} if text.split() else set()
            if _is_url(text):
                found |= _url_secrets(text)
    return frozenset(text for text in found if len(text) >= MIN_SECRET_LENGTH)


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each of ``secrets`` (longest first) replaced by :data:`REDACTED`."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


#: the credentials of the runs in progress in this process (:func:`hidden`), searched for in every log record
_HIDDEN: list[frozenset[str]] = []


def hidden_secrets() -> frozenset[str]:
    """The credentials of every run in progress (:func:`hidden`)."""
    return frozenset().union(*_HIDDEN)


def _redacting_factory(factory: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        secrets = hidden_secrets()
        if secrets:
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 - a record whose arguments do not format is left to logging
                return record
            redacted = redact_text(message, secrets)
            if redacted != message:
                record.msg, record.args = redacted, None
        return record

    make_record.redacts_credentials = True  # type: ignore[attr-defined]
    return make_record


@contextlib.contextmanager
def hidden(secrets: Iterable[str]) -> Iterator[None]:
    """While the block runs, every log record of this process (lm_eval's "Initializing ... with arguments", any
    library's, any thread's) has ``secrets`` replaced by :data:`REDACTED` in its message: console logs are saved to
    files as often as results are."""
    secrets = frozenset(secrets)
    factory = logging.getLogRecordFactory()
    if secrets and not getattr(factory, "redacts_credentials", False):
        logging.setLogRecordFactory(_redacting_factory(factory))
    _HIDDEN.append(secrets)
    try:
        yield
    finally:
        _HIDDEN.remove(secrets)
