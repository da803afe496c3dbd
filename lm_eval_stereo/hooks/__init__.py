"""The plugin's changes to lm_eval 0.4.13, one module per lm_eval module it changes; each module says what lm_eval
lacks there and why the plugin needs it, and holds the wrappers and the function that installs them. This package
module holds what they share: :func:`wrap`, :func:`fail` and :class:`RepeatSeeds`.

The start-up hook (:mod:`lm_eval_stereo._autoload`) installs them, from its table ``_HOOKS``, right after lm_eval has
executed the module each one changes. Nothing else in the package writes onto lm_eval's objects. A wrapper marks the
function it returns with ``_lm_eval_stereo = True``, so that a module hooked twice is wrapped once.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
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


class RepeatSeeds:
    """The seed of each sampled request of a run: the k-th identical one (the same prompt with the same ``gen_kwargs``:
    a task's ``repeats``, one prompt sent k times) gets ``seed + k``, so the k samples differ, and a repeated run with
    the same ``seed`` gives the same ones whatever order the backend sends them in (served models and vLLM alike)."""

    def __init__(self) -> None:
        self._sent: Counter[str] = Counter()

    def next_seed(self, seed: int, prompt: Any, gen_kwargs: dict) -> int:
        """``seed`` plus the number of identical requests seen before this one."""
        key = json.dumps([prompt, gen_kwargs], sort_keys=True, default=str)
        self._sent[key] += 1
        return seed + self._sent[key] - 1
