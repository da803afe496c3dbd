"""``lm_eval``: the plugin's hooks wait for modules of lm_eval 0.4.13 by name and wrap functions by their 0.4.13
signatures. lm_eval says nothing when a plugin meets a version it was not written for; an older lm_eval keeps those
modules elsewhere, so the other hooks would never fire and never warn. When ``lm_eval`` itself is imported, its version
is checked against :data:`SUPPORTED_LM_EVAL` (the range ``pyproject.toml`` declares), and a version outside it is said
once (:class:`UnsupportedLmEval`, reported by :mod:`lm_eval_stereo._autoload` as a warning). It changes nothing.
"""

from __future__ import annotations

from types import ModuleType

#: the lm_eval versions this plugin's hooks were written and tested for (pyproject.toml declares the same range)
SUPPORTED_LM_EVAL = ((0, 4, 13), (0, 5, 0))


class UnsupportedLmEval(RuntimeError):
    """The installed lm_eval is outside the supported range."""


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def install(module: ModuleType) -> None:
    """Raise :class:`UnsupportedLmEval` when lm_eval's version is outside :data:`SUPPORTED_LM_EVAL`."""
    from importlib.metadata import version

    found = version("lm_eval")
    low, high = SUPPORTED_LM_EVAL
    if not low <= _version_tuple(found) < high:
        raise UnsupportedLmEval(f"lm_eval {found} is not supported (lm-eval-stereo needs lm_eval >= 0.4.13, < 0.5)")
