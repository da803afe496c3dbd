"""A benchmark's sentences on docs/REAL_MODELS.md, declared beside the benchmark: what its findings function receives.

``scripts/real_models_doc.py`` writes one page per benchmark from the committed real-model runs; the first section of
a benchmark's page, "What the statistics say", is the :data:`Findings` function its declaration names
(:attr:`~lm_eval_stereo.core.registry.Benchmark.findings`). The script calls it with a :class:`FindingsKit`: the
report's tasks and models, each model's cell of a task, and the readings every page shares (a headline against its
ideal from its 95% CI, a directed metric against chance, two models compared only through their paired test's
Holm-adjusted p), so that a sentence says what the statistics say and the script names no benchmark. These are
protocols: ``core`` imports no report module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol


class FindingsEstimate(Protocol):
    """A metric's 95% CI bounds (None where the results have none)."""

    low: float | None
    high: float | None


class FindingsCell(Protocol):
    """One model's results for one task, as the report holds them."""

    values: Mapping[str, Any]

    @property
    def document_counts(self) -> tuple[int, int] | None: ...

    def estimate(self, name: str) -> FindingsEstimate: ...

    def companion_figure(self, name: str) -> tuple[str, float] | None: ...


class FindingsKit(Protocol):
    """What the page lends a benchmark's findings: the report's ``tasks`` and model row ``labels``, and the readings."""

    tasks: list[str]
    labels: list[str]

    def cell(self, task: str, label: str) -> FindingsCell | None:
        """The model ``label``'s cell of ``task``, None where it did not run it."""
        ...

    def estimate(self, cell: FindingsCell, name: str) -> str:
        """``name``'s value and 95% CI as the report writes them."""
        ...

    def describe(self, cell: FindingsCell, name: str) -> str:
        """The report's verdict of ``name`` against its ideal, from its 95% CI."""
        ...

    def against_chance(self, cell: FindingsCell, name: str, chance: float) -> Literal["above", "below", "consistent"]:
        """Where a directed metric's CI lies against ``chance``."""
        ...

    def compared(self, task: str, metric: str, what: str, higher: str) -> str | None:
        """The two compared models' difference in ``metric`` on ``task`` from their paired test (a difference only
        where Holm's p < 0.05), ``what`` leading and ``higher`` naming the direction; None unless both ran it."""
        ...

    def name(self, label: str) -> str:
        """The model ``label`` as the prose names it."""
        ...

    def count(self, value: float) -> str:
        """A count as the prose writes it (``2,221``)."""
        ...

    def results_file(self, cell: FindingsCell) -> Path:
        """The results file ``cell`` was read from (files a run keeps beside it lie next to it)."""
        ...


#: a benchmark's sentences: ``kit -> the lines of its "What the statistics say"`` (none: the section is left out)
Findings = Callable[[FindingsKit], list[str]]


def language_code(task: str) -> str:
    """The language code a per-language task name ends with (``stereoset_multi_de`` -> ``de``)."""
    return task.rsplit("_", 1)[1]
