"""lm_eval_bias/lm_eval_functions.py: lm_eval's own aggregations, and the quiet they run in on a bootstrap resample."""

from __future__ import annotations

import logging
import math

import pytest

from lm_eval_stereo.tasks.lm_eval_bias import lm_eval_functions
from lm_eval_stereo.tasks.lm_eval_bias.metrics import task_yaml

#: EsBBQ's (is_ambig, ambig_incorrect_pro_stereo, ambig_incorrect_anti_stereo) of three disambiguated documents
NO_AMBIGUOUS = [(0, 0, 0)] * 3


def bias_score_ambig():
    return lm_eval_functions.aggregations(task_yaml("esbbq_age"), ("bias_score_ambig",))["bias_score_ambig"]


def test_an_undefined_figure_is_nan_and_lm_eval_s_error_line_is_dropped_only_inside_quiet(caplog) -> None:
    caplog.set_level(logging.INFO)
    with lm_eval_functions.quiet():
        with lm_eval_functions.quiet():  # nested: the inner one's end leaves the outer one quiet
            pass
        undefined = lm_eval_functions.aggregate(bias_score_ambig(), NO_AMBIGUOUS)
        logging.critical("a critical line still shows")
    assert math.isnan(undefined)
    assert [record.getMessage() for record in caplog.records] == ["a critical line still shows"]
    assert logging.root.filters == []
    lm_eval_functions.aggregate(
        bias_score_ambig(), NO_AMBIGUOUS
    )  # outside: lm_eval's own error line, as lm_eval logs it
    assert "Cannot calculate bias_score_ambig" in caplog.records[-1].getMessage()
    assert lm_eval_functions.aggregate(bias_score_ambig(), [(1, 1, 0), (1, 0, 0)]) == pytest.approx(0.5)


def test_numpy_s_warnings_are_silenced_inside_quiet_only() -> None:
    import warnings

    import numpy as np

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lm_eval_functions.quiet():
            np.mean(np.array([]))
        assert caught == []
        np.mean(np.array([]))
        assert caught and {warning.category for warning in caught} == {RuntimeWarning}  # mean of an empty slice
