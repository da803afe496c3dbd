"""The parameters a change to lm_eval was written for, and the one line said where lm_eval's differ.

The plugin changes lm_eval 0.4.13 in two ways, both written against lm_eval's own functions: the hooks of
:mod:`lm_eval_stereo._autoload`'s table wrap functions of lm_eval, and the mixins of the plugin's views of lm_eval's
backends (:mod:`lm_eval_stereo.models.view`) override their methods. Each names the parameters of what it changes
(:func:`shape`); where the installed lm_eval's differ (a later release renamed, added or dropped one), that change is
not made, and one warning line (:func:`warn_line`) names it and what the plugin's tasks lose without it.

Cheap to import (the start-up hook's module imports it): ``warnings`` only; ``inspect`` when a shape is asked for.
"""

from __future__ import annotations

import warnings

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: this module is imported at every interpreter start-up

if TYPE_CHECKING:
    from typing import Any


class PluginHookWarning(RuntimeWarning):
    """The plugin could not make one of its changes to this lm_eval."""


def shape(function: Any) -> str:
    """The parameters of ``function`` as ``"self, requests, *, generate, **kwargs"``: their names, in order, with
    ``/`` after the positional-only ones, ``*`` before the keyword-only ones, ``*name`` and ``**name`` for the
    variadic ones; no defaults, no annotations (a default lm_eval changes does not change how a wrapper binds).
    A ``staticmethod`` or ``classmethod`` is read through to its function; a ``property`` has the shape of its
    getter."""
    import inspect

    if isinstance(function, (staticmethod, classmethod)):
        function = function.__func__
    if isinstance(function, property):
        function = function.fget
    parts: list[str] = []
    star = False
    parameters = list(inspect.signature(function).parameters.values())
    for n, parameter in enumerate(parameters):
        kind = parameter.kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            parts.append(f"*{parameter.name}")
            star = True
        elif kind is inspect.Parameter.VAR_KEYWORD:
            parts.append(f"**{parameter.name}")
        elif kind is inspect.Parameter.KEYWORD_ONLY:
            if not star:
                parts.append("*")
                star = True
            parts.append(parameter.name)
        else:
            parts.append(parameter.name)
            following = parameters[n + 1].kind if n + 1 < len(parameters) else None
            if kind is inspect.Parameter.POSITIONAL_ONLY and following is not inspect.Parameter.POSITIONAL_ONLY:
                parts.append("/")
    return ", ".join(parts)


def warn_line(message: str) -> None:
    """``message`` as one :class:`PluginHookWarning` line on stderr (``lm-eval-stereo: PluginHookWarning: ...``,
    without the source line ``warnings`` prints under a warning raised from code)."""
    warnings.warn_explicit(message, PluginHookWarning, filename="lm-eval-stereo", lineno=0, module="lm_eval_stereo")
