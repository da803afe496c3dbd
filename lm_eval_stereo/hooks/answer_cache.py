"""``lm_eval.api.model``'s ``CachingLM`` (lm_eval's request cache, ``--use_cache PATH``) as the plugin's backends need
it: one backend per database, and every answer it serves seen by the backend.

lm_eval 0.4.13's ``CachingLM`` keys an answer by its request's strings only (``hash_args(request type, args)``), so a
database written by one backend answers another backend's run with the first one's numbers: ``hf`` and ``hf-prefix``
differ wherever ``hf-prefix`` scores a reference's own tokens (:mod:`lm_eval_stereo.core.token_split`), two models or
two dtypes of one model differ everywhere. This module wraps ``CachingLM.__init__``
(:func:`caching_init_wrapper`, installed by :func:`install`):

- the database records whose answers it holds (:func:`answers_of`: the backend's class, the model's name and dtype, or
  what the backend itself names, e.g. ``replay``'s recordings and their digest) under :data:`OWNER_KEY`; a run whose
  backend or model differs from the recorded one stops before its first request with one line naming both and what
  to do (another ``--use_cache`` path). A database that holds answers but no record (written without the plugin, or
  by an older one) is refused to the plugin's own backends, whose answers differ from lm_eval's, and left to lm_eval's
  backends as lm_eval leaves it;
- the store ``CachingLM`` reads is an :class:`AnswerCache`: it never keeps a served model's unanswered request
  (:class:`lm_eval_stereo.core.unanswered.Unanswered`, so that a resumed run asks again), and it hands every answer it
  serves to the backend's ``served_from_cache`` method where the backend has one (``replay`` accounts for them).
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

from lm_eval_stereo.core.unanswered import Unanswered
from lm_eval_stereo.hooks import fail, wrap

#: the database entry that records whose answers it holds (not a request hash: lm_eval never reads it)
OWNER_KEY = "lm_eval_stereo:answers_of"
#: the module prefix of the plugin's own backends
PLUGIN_MODULES = "lm_eval_stereo."


def backend_name(lm: Any) -> str:
    """The ``--model`` name ``lm``'s class is registered under in lm_eval (its first), else its ``module.Class``."""
    cls = type(lm)
    path = f"{cls.__module__}.{cls.__qualname__}"
    try:
        from lm_eval.api.registry import model_registry

        registered = getattr(model_registry, "_objs", {})
    except ImportError:
        return path
    for name, target in registered.items():
        if target is cls or (isinstance(target, str) and target.replace(":", ".") == path):
            return name
    return path


def answers_of(lm: Any) -> dict[str, str]:
    """What the answers of ``lm`` depend on: its backend, and its own ``answer_facts()`` where it names them, else the
    model's name (``pretrained``, an API model's ``model``), revision, dtype and ``mixed_precision_dtype`` where it
    has them (``hf`` and its subclasses; vLLM's engine arguments)."""
    facts = {"model": backend_name(lm)}
    own = getattr(lm, "answer_facts", None)
    if callable(own):
        return {**facts, **own()}
    network = getattr(lm, "_model", None)
    config = getattr(network, "config", None) or getattr(lm, "_config", None)
    engine = getattr(lm, "model_args", None)
    engine = engine if isinstance(engine, dict) else {}
    names = (getattr(config, "_name_or_path", None), getattr(lm, "pretrained", None), getattr(lm, "model", None))
    found = {
        "pretrained": next((name for name in names if isinstance(name, str) and name), None),
        "revision": getattr(lm, "revision", None) or engine.get("revision"),
        "dtype": getattr(network, "dtype", None) or engine.get("dtype"),
        "autocast": getattr(lm, "mixed_precision_dtype", None),
    }
    for fact, value in found.items():
        if value is not None and (not isinstance(value, str) or value):
            facts[fact] = str(value).removeprefix("torch.")
    return facts


def describe(facts: dict[str, str]) -> str:
    """``--model hf (pretrained=..., dtype=...)``."""
    details = ", ".join(f"{key}={value}" for key, value in facts.items() if key != "model")
    return f"--model {facts.get('model', '?')}" + (f" ({details})" if details else "")


def claim(store: Any, lm: Any, path: str) -> None:
    """Record in ``store`` (lm_eval's cache database at ``path``) that it holds the answers of ``lm``
    (:func:`answers_of`), or stop in one line (exit status 2) when it holds another backend's or model's."""
    ours = answers_of(lm)
    recorded = store.get(OWNER_KEY)
    advice = "give this run its own --use_cache path (one per backend and model), or delete that file"
    if recorded is None:
        if not store:  # SqliteDict: MAX(ROWID), not a count of every entry
            store[OWNER_KEY] = ours
            if hasattr(store, "commit"):
                store.commit()
            return
        if type(lm).__module__.startswith(PLUGIN_MODULES):
            fail(
                f"--use_cache: {path} holds answers that do not say which backend and model gave them (written "
                f"without lm-eval-stereo, or by an older one); this run is {describe(ours)}, whose answers may differ "
                f"from theirs: {advice}"
            )
        return
    if recorded != ours:
        fail(
            f"--use_cache: {path} holds the answers of {describe(recorded)}; this run is {describe(ours)}, whose "
            f"answers differ from those: {advice}"
        )


class AnswerCache:
    """lm_eval's request cache (a ``SqliteDict``) that never stores a served model's unanswered request and tells the
    backend (``served``) of every answer it serves."""

    def __init__(self, store: Any, served: Any = None) -> None:
        self._store = store
        self._served = served

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(value, Unanswered):
            self._store[key] = value

    def __getitem__(self, key: str) -> Any:
        value = self._store[key]
        if self._served is not None:
            self._served(value)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._store, attr)


def caching_init_wrapper(original: Any) -> Any:
    """``CachingLM.__init__`` that :func:`claim`\\ s its database for the run's backend and reads it through an
    :class:`AnswerCache`."""

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        claim(self.dbdict, self.lm, str(self.cache_db))
        self.dbdict = AnswerCache(self.dbdict, served=getattr(self.lm, "served_from_cache", None))
        hook = getattr(self.lm, "cache_hook", None)
        if hook is not None and getattr(hook, "dbdict", None) is not None:
            hook.dbdict = self.dbdict

    __init__._lm_eval_stereo = True  # type: ignore[attr-defined]
    return __init__


def install(module: ModuleType) -> None:
    """Make ``--use_cache`` hold one backend's answers and keep only answered requests of served models
    (:func:`caching_init_wrapper`)."""
    wrap(module.CachingLM, "__init__", caching_init_wrapper)
