"""The report's names for the results layer's run reader (:mod:`lm_eval_stereo.results.run`)."""

from lm_eval_stereo.results.run import (
    SAME_NUMBERS,
    Finding,
    ReportError,
    Run,
    is_nan,
    is_number,
    load_run,
    load_runs,
    newest_runs,
    parse_model_args,
    results_files,
)

__all__ = [
    "SAME_NUMBERS",
    "Finding",
    "ReportError",
    "Run",
    "is_nan",
    "is_number",
    "load_run",
    "load_runs",
    "newest_runs",
    "parse_model_args",
    "results_files",
]
