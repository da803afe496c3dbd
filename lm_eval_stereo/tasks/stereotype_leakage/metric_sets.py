"""The registry's factories of the leakage metric sets: the declarations the report and the export read.

A leakage task's regression (Eq. 1) summarises its whole association table; its task computes it (its options and
target language), so the declared ``summarize`` is never called by a reader. Two runs are compared on the cells of
their tables (:mod:`lm_eval_stereo.tasks.stereotype_leakage.association_cells`), which the declarations name as their pairing
unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_stereo.core.metrics import MetricSet, PairingUnit
from lm_eval_stereo.tasks.stereotype_leakage.association_cells import CELL_METRICS, cell_items
from lm_eval_stereo.tasks.stereotype_leakage.metrics import GENERATION_METRICS, leakage_metric_set

#: paired comparisons of leakage runs compare their association cells, not their logged items
CELLS = PairingUnit(cell_items, CELL_METRICS)


def _computed_by_the_task(items: list[dict[str, Any]]) -> dict[str, Any]:
    raise RuntimeError(
        "the stereotype-leakage regression is computed by its task (its options and target language); "
        "the report reads its values from the results file"
    )


def regression(task: str, metadata: Mapping[str, Any]) -> MetricSet:
    """``stereotype_leakage.regression``: the metrics of a leakage task, compared run to run by its cells."""
    return leakage_metric_set(task, _computed_by_the_task, pairing=CELLS)


def generation(task: str, metadata: Mapping[str, Any]) -> MetricSet:
    """``stereotype_leakage.generation``: the metrics of a generative leakage task, compared by its cells."""
    return leakage_metric_set(
        task, _computed_by_the_task, GENERATION_METRICS, id="stereotype_leakage.generation", pairing=CELLS
    )
