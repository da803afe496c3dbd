"""The plugin's view of one of lm_eval's backends: the same backend, with the plugin's behaviour for its own tasks.

lm_eval 0.4.13 registers ``hf``, ``vllm`` and its OpenAI-compatible API models under names a plugin cannot
re-register (the model registry refuses another target for a built-in name), and its own tasks must get exactly what
stock lm_eval gives. So the plugin changes none of those classes: its tasks' requests are sent by
:class:`lm_eval_stereo.models.router.PluginRouter` to a view of the run's backend (:func:`view_of`), an object of a
subclass ``(mixin, type(backend))`` that shares the backend's ``__dict__`` (the same model, engine, tokenizer, caches
and counters: nothing is loaded twice), its behaviour for the plugin's tasks in the mixin (:data:`MIXINS`):

- ``hf`` (and every subclass of lm_eval's ``HFLM``): :class:`lm_eval_stereo.models.hf_mixin.HFMixin`;
- ``vllm`` (``VLLM``): :class:`lm_eval_stereo.models.vllm_mixin.VLLMMixin`;
- the OpenAI-compatible API models (``LocalCompletionsAPI``, ``LocalChatCompletion`` and their subclasses
  ``openai-completions``, ``openai-chat-completions``, Azure's) and the other ``TemplateAPI`` backends:
  :mod:`lm_eval_stereo.models.served_mixin`.

A backend of the plugin's own (``hf-prefix``, ``vllm-prefix``, ``local-completions-prefix``, ``hf-mlm``, ``replay``)
is its own view: it includes the mixins it needs in its class. A backend no mixin is written for is its own view too:
the plugin's tasks run on it as on stock lm_eval.

Each mixin names the methods it overrides with the parameters of lm_eval 0.4.13's (``OVERRIDES``,
:func:`lm_eval_stereo.core.signatures.shape`); where the installed lm_eval's differ, no view is made: the plugin's
tasks run on the stock backend, and one warning line names the method and what they lose.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, ClassVar

from lm_eval_stereo.core.signatures import shape, warn_line

#: the module prefix of the plugin's own backends (each its own view)
PLUGIN_MODULES = "lm_eval_stereo."


class PluginMixin:
    """The base of the mixins of a view: :attr:`OVERRIDES` names each method of lm_eval's backend a mixin overrides,
    with the parameters it was written for (a leading ``self`` left out: a static method and a method read alike),
    and :attr:`LOSES` what the plugin's tasks lose where they do not match."""

    #: method name -> the parameters of lm_eval 0.4.13's method (:func:`lm_eval_stereo.core.signatures.shape`)
    OVERRIDES: ClassVar[dict[str, str]] = {}
    #: what the plugin's tasks lose on a backend of this kind without the mixin
    LOSES: ClassVar[str] = ""


#: lm_eval's backend class (``module:Class``) -> the mixin of its view, most specific first (the first the backend's
#: class is a subclass of); a module lm_eval has not imported is not imported for this (its backend is not the run's)
MIXINS: tuple[tuple[str, str], ...] = (
    ("lm_eval.models.openai_completions:LocalChatCompletion", "lm_eval_stereo.models.served_mixin:ChatMixin"),
    ("lm_eval.models.openai_completions:LocalCompletionsAPI", "lm_eval_stereo.models.served_mixin:CompletionsMixin"),
    ("lm_eval.models.api_models:TemplateAPI", "lm_eval_stereo.models.served_mixin:ServedMixin"),
    ("lm_eval.models.vllm_causallms:VLLM", "lm_eval_stereo.models.vllm_mixin:VLLMMixin"),
    ("lm_eval.models.huggingface:HFLM", "lm_eval_stereo.models.hf_mixin:HFMixin"),
)

#: the view class made for each backend class (None: the backend is its own view)
_VIEW_CLASSES: dict[type, type | None] = {}


def _loaded(path: str) -> Any:
    """The object ``module:name`` where its module is imported already, else None."""
    module, _, name = path.partition(":")
    return getattr(sys.modules[module], name, None) if module in sys.modules else None


def is_plugin_backend(backend: Any) -> bool:
    """Whether ``backend`` is one of the plugin's own (``hf-prefix``, ``replay``, ...): its own view, for every task."""
    return type(backend).__module__.startswith(PLUGIN_MODULES)


def mixin_for(cls: type) -> type | None:
    """The mixin of ``cls``'s view (:data:`MIXINS`), None where none is written for it."""
    for backend, mixin in MIXINS:
        base = _loaded(backend)
        if isinstance(base, type) and issubclass(cls, base):
            module, _, name = mixin.partition(":")
            return getattr(importlib.import_module(module), name)
    return None


def _unbound(parameters: str) -> str:
    """``parameters`` without a leading ``self``."""
    names = parameters.split(", ")
    return ", ".join(names[1:] if names[0] == "self" else names)


def expected_overrides(mixin: type) -> dict[str, str]:
    """Every method ``mixin`` and its base mixins override, with the parameters each was written for."""
    found: dict[str, str] = {}
    for cls in reversed(mixin.__mro__):
        found.update(vars(cls).get("OVERRIDES", {}))
    return found


def mismatches(mixin: type, cls: type) -> list[str]:
    """``Class.method: lm_eval has (...), written for (...)`` for each method ``mixin`` overrides whose parameters
    in ``cls`` (lm_eval's backend class) differ from those it was written for, or which ``cls`` lacks."""
    found = []
    for name, written_for in expected_overrides(mixin).items():
        method = next((vars(base)[name] for base in cls.__mro__ if name in vars(base)), None)
        if method is None:
            found.append(f"{cls.__name__}.{name}: lm_eval has no such method")
            continue
        has = _unbound(shape(method))
        if has != written_for:
            found.append(f"{cls.__name__}.{name}: lm_eval has ({has}), the plugin was written for ({written_for})")
    return found


def view_class(cls: type) -> type | None:
    """The class of the views of ``cls``'s backends, ``(mixin, cls)``; None where the backend is its own view (the
    plugin's own backends, those no mixin is written for, and those whose methods do not match the mixin's, with
    one warning line per class)."""
    if cls in _VIEW_CLASSES:
        return _VIEW_CLASSES[cls]
    made = None
    if cls.__module__.startswith(PLUGIN_MODULES):
        _check_own(cls)
        mixin = None
    else:
        mixin = mixin_for(cls)
    if mixin is not None:
        wrong = mismatches(mixin, cls)
        if wrong:
            warn_line(
                f"the plugin's tasks run on lm_eval's {cls.__name__} as it is, without the plugin's changes for them "
                f"({'; '.join(wrong)}): they lose {mixin.LOSES}"
            )
        else:
            # named as lm_eval's class (in messages, and where it is written), the mixin's behaviour added
            made = type(cls.__name__, (mixin, cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
    _VIEW_CLASSES[cls] = made
    return made


def _check_own(cls: type) -> None:
    """One warning line where a mixin the plugin's own backend ``cls`` includes overrides a method of lm_eval's base
    class whose parameters differ from those it was written for (the backend has no stock class to fall back to)."""
    for position, mixin in enumerate(cls.__mro__):
        if mixin is PluginMixin or not (isinstance(mixin, type) and issubclass(mixin, PluginMixin)):
            continue
        if mixin.__module__.startswith(PLUGIN_MODULES) and "OVERRIDES" in vars(mixin):
            base = next((c for c in cls.__mro__[position:] if not issubclass(c, PluginMixin)), None)
            wrong = mismatches(mixin, base) if base is not None and base is not object else []
            if wrong:
                warn_line(f"--model {cls.__name__} was written for another lm_eval ({'; '.join(wrong)})")
            return


def view_of(backend: Any) -> Any:
    """The plugin's view of ``backend``: an object of :func:`view_class` sharing its ``__dict__``, or ``backend``
    itself where it is its own view."""
    cls = view_class(type(backend))
    if cls is None:
        return backend
    view = object.__new__(cls)
    view.__dict__ = backend.__dict__
    return view
