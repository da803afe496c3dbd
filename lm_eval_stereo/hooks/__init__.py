"""The plugin's changes to lm_eval 0.4.13, one module per lm_eval module it changes; each module says what lm_eval
lacks there and why the plugin needs it, and holds the wrappers and the function that installs them.

The start-up hook (:mod:`lm_eval_stereo._autoload`) installs them, from its table ``_HOOKS``, right after lm_eval has
executed the module each one changes. Nothing else in the package writes onto lm_eval's objects. A wrapper marks the
function it returns with ``_lm_eval_stereo = True``, so that a module hooked twice is wrapped once.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn


def wrap(owner: Any, name: str, wrapper: Any) -> None:
    """Replace ``owner.name`` by ``wrapper(owner.name)`` once (a wrapper marks what it returns ``_lm_eval_stereo``);
    the attribute is read from ``owner``'s own namespace, so a static method stays recognisable."""
    original = vars(owner)[name] if isinstance(owner, type) else getattr(owner, name)
    if not getattr(getattr(original, "__func__", original), "_lm_eval_stereo", False):
        setattr(owner, name, wrapper(original))


def fail(message: str) -> NoReturn:
    """End the run with ``lm-eval-stereo: message`` on stderr, exit status 2 (the plugin's one-line errors)."""
    sys.stderr.write(f"lm-eval-stereo: {message}\n")
    raise SystemExit(2)
