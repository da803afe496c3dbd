"""Dependencies by need: a task whose scoring needs a language tool (a morphological analyser, a lemmatizer, a
regression package) names the optional extra of ``lm-eval-stereo`` that brings it, and stops before any request with
one line naming ``pip install "lm-eval-stereo[<extra>]"`` when it is missing (as lm_eval keeps its own tasks' tools
in extras: ``lm_eval[math]``, ``lm_eval[ifeval]``). The extras themselves are declared in ``pyproject.toml``; a
benchmark declares which of them a task class needs (:attr:`lm_eval_stereo.core.summary.SummaryTask.EXTRA`)."""

from __future__ import annotations

import importlib.util
from collections.abc import Collection
from dataclasses import dataclass


class MissingExtraError(ImportError):
    """A task needs an optional extra of lm-eval-stereo that is not installed; the message is the one line that says
    which and how to install it."""


@dataclass(frozen=True)
class Extra:
    """The optional extra ``name`` of lm-eval-stereo: the ``modules`` it installs, ``what`` they are for ("statsmodels
    for the leakage regression"), and ``languages``: the only languages of a task that need it (empty: every one)."""

    name: str
    modules: tuple[str, ...]
    what: str
    languages: Collection[str] = ()

    def missing(self) -> list[str]:
        """The modules of this extra that cannot be imported here."""
        return [module for module in self.modules if importlib.util.find_spec(module) is None]

    def require(self, task: str, language: str | None = None) -> None:
        """Raise :class:`MissingExtraError` when ``task`` (in ``language``) needs this extra and a module of it is
        missing."""
        if self.languages and language not in self.languages:
            return
        missing = self.missing()
        if missing:
            raise MissingExtraError(
                f"{task} needs {self.what} ({', '.join(missing)} not installed): "
                f'pip install "lm-eval-stereo[{self.name}]"'
            )
