"""Credentials kept out of every file a run writes: the plugin's one rule of what is a secret and how it is hidden.

A user passes credentials as model arguments (``api_key=``, ``auth_token=``, ``token=``, ``header=``/``headers=``)
or inside a URL (``http://user:KEY@host/...``, ``...?api-key=KEY`` as proxies and Azure-style endpoints take them).
lm_eval 0.4.13 writes the model arguments into ``config.model_args`` and, merged into every task's metadata, into
``configs.<task>.metadata`` of the results file; the plugin writes them into its messages and its answer-cache
record. Everything written goes through :func:`redact_model_args` / :func:`redact_url` first. What lm_eval prints
to the console (its "Initializing ... with arguments" log line, its summary line, a failed request's headers) cannot
be rewritten before it is written: while a run is in progress (:func:`hidden`) every log record, and the ``lm_eval``
command's summary line, has the run's credentials replaced in its text (:func:`redact_text`): those of its model
arguments and ``--metadata`` (:func:`secrets_of`: a judge's model arguments inside it too), of its command line as
given (:func:`command_line_secrets`: an argument given twice, which lm_eval's warning prints both of), and the ones its
backend sends (:func:`keep_hidden`: an API key from the environment in a request's ``Authorization`` header). A run's
results and samples have them replaced in every text before lm_eval writes or prints them (:func:`redact_deep`).
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


#: the schemes an ``Authorization`` header's value starts with: alone (``Bearer `` with no key in the environment) they
#: are no credential
AUTH_SCHEMES = ("bearer", "basic", "token", "digest")
#: a credential shorter than this is not searched for in console text (a one-letter ``api_key=a`` would blank every
#: "a" of every log line); it is still redacted wherever it is written as a model argument or URL part
MIN_SECRET_LENGTH = 4
#: the values servers' documentation gives for "no key" (vLLM's and llama.cpp's ``EMPTY``, ``sk-no-key-required``,
#: ...): no credential, so not searched for in console text, results or samples, where a document's own word
#: ``EMPTY`` would otherwise be blanked in lm_eval's own tasks' samples; still redacted wherever it is written as a
#: model argument or URL part, as every value named like a credential is
PLACEHOLDER_KEYS = frozenset({"empty", "dummy", "none", "null", "no-key", "not-needed", "sk-no-key-required"})


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
    """The credential texts in ``model_args`` (a dict, ``k=v,...`` or JSON text; ``--metadata`` alike): the values of
    arguments named like credentials (a header mapping's values and their last word: ``Bearer KEY``), the credentials
    of every URL (:func:`_url_secrets`), and those of model arguments given inside a value (a judge's
    ``judge_model_args``, a nested mapping or list); truth values, texts shorter than :data:`MIN_SECRET_LENGTH` and
    the placeholders of :data:`PLACEHOLDER_KEYS` left out."""
    args = dict(model_args) if isinstance(model_args, Mapping) else parse_model_args(model_args)
    found: set[str] = set()
    for name, value in args.items():
        secret = is_secret_name(name)
        values = list(value.values()) if isinstance(value, Mapping) and secret else [value]
        for item in values:
            if isinstance(item, Mapping):
                found |= secrets_of(item)
                continue
            if isinstance(item, (list, tuple)):
                for part in item:
                    found |= secrets_of({name: part})
                continue
            text = str(item)
            words = text.split()
            if secret and text.strip().lower() not in (*TRUE, *FALSE, "none", *AUTH_SCHEMES) and words:
                found |= {text, words[-1]}
            if _is_url(text):
                found |= _url_secrets(text)
            elif "=" in text:
                found |= secrets_of(text)
    return frozenset(text for text in found if len(text) >= MIN_SECRET_LENGTH and not _placeholder(text))


def _placeholder(text: str) -> bool:
    """Whether ``text`` is a "no key" placeholder (:data:`PLACEHOLDER_KEYS`), alone or after a scheme (``Bearer
    EMPTY``)."""
    words = text.split()
    return bool(words) and words[-1].lower() in PLACEHOLDER_KEYS


def command_line_secrets(argv: Iterable[str]) -> frozenset[str]:
    """The credentials of a command line: those of every ``k=v`` pair of every argument, each pair on its own (an
    argument given twice, ``auth_token=A,auth_token=B``, gives both), and of every argument that is a URL or JSON."""
    found: set[str] = set()
    for argument in argv:
        text = str(argument)
        if text.lstrip().startswith("{"):
            found |= secrets_of(text)
        elif _is_url(text):
            found |= secrets_of({"url": text})
        else:
            for pair in text.split(","):
                found |= secrets_of(pair)
    return frozenset(found)


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each of ``secrets`` (longest first) replaced by :data:`REDACTED`."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def redact_deep(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (results, samples: mappings, lists and texts) with each of ``secrets`` replaced in every text
    (:func:`redact_text`); a container is rebuilt only where something in it changed, everything else returned as it
    is."""
    secrets = sorted(set(secrets), key=len, reverse=True)
    if not secrets:
        return value

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return redact_text(item, secrets) if any(secret in item for secret in secrets) else item
        if isinstance(item, Mapping):
            changed = {key: walk(child) for key, child in item.items()}
            return changed if any(changed[key] is not child for key, child in item.items()) else item
        if isinstance(item, (list, tuple)):
            changed_items = [walk(child) for child in item]
            if all(new is old for new, old in zip(changed_items, item)):
                return item
            return type(item)(changed_items) if isinstance(item, tuple) else changed_items
        return item

    return walk(value)


#: the credentials of the runs in progress in this process (:func:`hidden`), searched for in every log record
_HIDDEN: list[set[str]] = []


def hidden_secrets() -> frozenset[str]:
    """The credentials of every run in progress (:func:`hidden`, :func:`keep_hidden`)."""
    return frozenset().union(*_HIDDEN)


def _redact_records() -> None:
    factory = logging.getLogRecordFactory()
    if not getattr(factory, "redacts_credentials", False):
        logging.setLogRecordFactory(_redacting_factory(factory))


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
    files as often as results are. The blocks nest: what an inner one hides stays hidden until the outermost ends."""
    kept = set(secrets)
    if kept:
        _redact_records()
    for outer in _HIDDEN:
        outer |= kept
    _HIDDEN.append(kept)
    try:
        yield
    finally:
        _HIDDEN.remove(kept)


def keep_hidden(secrets: Iterable[str]) -> None:
    """Hide ``secrets`` too (a credential found while the run works: the key a backend sends in its requests' headers)
    until every block of :func:`hidden` in progress has ended; nothing where none is."""
    found = set(secrets)
    if found and _HIDDEN:
        _redact_records()
        for outer in _HIDDEN:
            outer |= found
