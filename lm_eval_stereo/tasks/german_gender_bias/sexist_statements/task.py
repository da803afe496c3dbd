"""Harness glue of ``sexist_statements_de``: each statement's responses booked as agree / disagree / undetermined.

The task repeats each prompt to reach the paper's >= 2000 generations; the item of a statement counts all its
responses, and :data:`sexist_statements_metrics.METRICS` pools them.
"""

from __future__ import annotations

from typing import Any

import datasets

from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.tasks.german_gender_bias.answers import answer_part
from lm_eval_stereo.tasks.german_gender_bias.data import load_sexist_statements
from lm_eval_stereo.tasks.german_gender_bias.sexist_statements import metrics as metric
from lm_eval_stereo.tasks.german_gender_bias.sexist_statements.agreement import statement_agreement


def load_dataset(**_: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset``: the 325 published statements (the YAML's ``repeats`` replicates them)."""
    return {"test": datasets.Dataset.from_list(load_sexist_statements())}


def book_generation(output: str) -> int | None | str:
    """1 agree, 0 disagree, None undetermined, ``"empty"`` for an empty output (the reference drops those)."""
    return "empty" if output == "" else statement_agreement(answer_part(output))


class SexistStatementsTask(SummaryTask):
    """``sexist_statements_de``: combined sexism, sexist agreement and anti-sexist disagreement per scope."""

    METRICS = metric.METRICS

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """Count the responses of one statement over all its generations (``results[0]`` lists them)."""
        responses = results[0] if isinstance(results[0], list) else results
        return {
            "key": f"{doc['id']:05d}",
            "sexist": doc["sexist"],
            "type": doc["type"],
            "gender": doc["gender"],
            **metric.response_counts([book_generation(output) for output in responses]),
        }
