"""The plugin's changes to lm_eval 0.4.13's own objects, one module per lm_eval module it changes; each module says
what lm_eval lacks there and why the plugin's tasks need it, and holds the wrappers. The start-up hook
(:mod:`lm_eval_stereo._autoload`) installs them, from its one table ``HOOKS`` (lm_eval module, target, the parameters
each was written for, the wrapper, what the plugin's tasks lose without it, whom it changes), right after lm_eval has
executed the module each one changes, through :func:`wrap`. Nothing else in the package writes onto lm_eval's objects.
"""

from __future__ import annotations

import builtins
from typing import Any

#: the mark :func:`wrap` sets on what it installs, so that a module hooked twice is wrapped once
MARK = "_lm_eval_stereo"


def original_of(owner: Any, name: str) -> Any:
    """``owner.name`` as ``owner`` holds it: a class's own attribute (a static method stays one), a module's global,
    or the builtin of that name a module uses where it has no global of it (``print``)."""
    if isinstance(owner, type):
        return vars(owner)[name]
    return getattr(owner, name) if hasattr(owner, name) else getattr(builtins, name)


def is_wrapped(function: Any) -> bool:
    """Whether ``function`` (or the function of a static method or property) is one :func:`wrap` installed."""
    inner = getattr(function, "__func__", None) or getattr(function, "fget", None) or function
    return bool(getattr(inner, MARK, False))


def wrap(owner: Any, name: str, wrapper: Any) -> None:
    """Replace ``owner.name`` by ``wrapper(original)`` once (:func:`original_of`), marking what it installs."""
    original = original_of(owner, name)
    if is_wrapped(original):
        return
    replacement = wrapper(original)
    setattr(getattr(replacement, "__func__", None) or getattr(replacement, "fget", None) or replacement, MARK, True)
    setattr(owner, name, replacement)
