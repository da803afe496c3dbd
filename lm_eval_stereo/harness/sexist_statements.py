"""Task glue of ``sexist_statements_de``: dataset, per-statement response counts and the agreement metrics.

``process_results`` books every generation of a statement (the task repeats each prompt to reach the paper's
>= 2000 generations) and returns one record of counts under every metric name. One aggregation per metric pools the
records; they are built from :data:`METRIC_SCOPES` (statistic × sexism type × gender of the statement), so the YAML's
``metric_list`` and this module name the same metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import datasets
import numpy as np

from lm_eval_stereo.classify.gerbbq import answer_part
from lm_eval_stereo.classify.sexist_agreement import statement_agreement
from lm_eval_stereo.datasets.german_gender_bias import load_sexist_statements
from lm_eval_stereo.metrics import sexist_statements as metric

#: sexism types of the published data; the first three have statements about women and about men
TYPES: tuple[str, ...] = ("behavioural_expectations", "stereotypes", "endorsement_of_inequality", "denying_inequality")
GENDERED_TYPES: tuple[str, ...] = TYPES[:3]
GENDERS: dict[str, int] = {"female": 1, "male": 0}

Aggregation = Callable[[list[Mapping[str, Any]]], float]


def load_dataset(**_: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset``: the 325 published statements (the YAML's ``repeats`` replicates them)."""
    return {"test": datasets.Dataset.from_list(load_sexist_statements())}


def book_generation(output: str) -> int | None | str:
    """1 agree, 0 disagree, None undetermined, ``"empty"`` for an empty output (the reference drops those)."""
    return "empty" if output == "" else statement_agreement(answer_part(output))


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, dict]:
    """Count the responses of one statement over all its generations (``results[0]`` lists them)."""
    responses = results[0] if isinstance(results[0], list) else results
    record = {
        "sexist": doc["sexist"],
        "type": doc["type"],
        "gender": doc["gender"],
        **metric.response_counts([book_generation(output) for output in responses]),
    }
    return dict.fromkeys(AGGREGATIONS, record)


def _columns(items: list[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    return {key: np.array([item[key] for item in items]) for key in items[0]} if items else {}


def _scope(columns: Mapping[str, np.ndarray], type_: str | None, gender: str | None) -> np.ndarray:
    mask = np.ones(len(columns["sexist"]), dtype=bool)
    if type_ is not None:
        mask &= columns["type"] == type_
    if gender is not None:
        mask &= columns["gender"] == GENDERS[gender]
    return mask


def _statistic_aggregation(name: str, type_: str | None, gender: str | None) -> Aggregation:
    def aggregate(items: list[Mapping[str, Any]]) -> float:
        columns = _columns(items)
        return float(metric.statistic(columns, name, _scope(columns, type_, gender))) if items else float("nan")

    scope = " and ".join(part for part in (type_ and f"type {type_}", gender and f"{gender} statements") if part)
    aggregate.__doc__ = f"{name} over {scope or 'all statements'} (ideal 0)."
    return aggregate


def _interval_aggregation(name: str, bound: int) -> Aggregation:
    def aggregate(items: list[Mapping[str, Any]]) -> float:
        return metric.bootstrap_interval(_columns(items), name)[bound] if items else float("nan")

    aggregate.__doc__ = f"{'Lower' if bound == 0 else 'Upper'} end of the seeded 95% bootstrap CI of {name}."
    return aggregate


def _share_aggregation(name: str) -> Aggregation:
    def aggregate(items: list[Mapping[str, Any]]) -> float:
        return metric.share(_columns(items), name) if items else float("nan")

    aggregate.__doc__ = f"Share of {name} responses among all generations (ideal 0)."
    return aggregate


def _scopes() -> list[tuple[str, str | None, str | None]]:
    scopes: list[tuple[str, str | None, str | None]] = [("", None, None)]
    scopes += [(f"_{t}", t, None) for t in TYPES]
    for gender in GENDERS:
        scopes.append((f"_{gender}", None, gender))
        scopes += [(f"_{gender}_{t}", t, gender) for t in GENDERED_TYPES]
    return scopes


#: metric name → (statistic, sexism type or None, gender or None)
METRIC_SCOPES: dict[str, tuple[str, str | None, str | None]] = {
    f"{name}{suffix}": (name, type_, gender) for suffix, type_, gender in _scopes() for name in metric.STATISTICS
}

AGGREGATIONS: dict[str, Aggregation] = {
    **{name: _statistic_aggregation(*spec) for name, spec in METRIC_SCOPES.items()},
    **{f"{name}_ci_low": _interval_aggregation(name, 0) for name in metric.STATISTICS},
    **{f"{name}_ci_high": _interval_aggregation(name, 1) for name in metric.STATISTICS},
    "undetermined": _share_aggregation("undetermined"),
    "empty": _share_aggregation("empty"),
}

# the YAML refers to each aggregation as `!function lm_eval_stereo.harness.sexist_statements.<metric name>`
globals().update(AGGREGATIONS)
