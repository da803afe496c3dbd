"""lm_eval's own aggregation functions of its bias tasks, taken from the installed lm_eval: the ``metric_list`` of the
task's own YAML, its ``!function`` entries resolved by lm_eval's YAML loader, so that a figure recomputed from the
logged per-document values is lm_eval's by construction.

The declarations follow lm_eval :data:`KNOWN_VERSION`; where the installed lm_eval has moved a YAML, renamed a
metric or changed its loader, :class:`LmEvalChanged` says so, and the readers show lm_eval's numbers without an
interval (fail soft).
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: the lm_eval release whose task names, YAMLs and aggregation functions these declarations follow
KNOWN_VERSION = "0.4.13"

Aggregation = Callable[[Sequence[Any]], float]


class LmEvalChanged(RuntimeError):
    """The installed lm_eval does not define a task's metrics as :data:`KNOWN_VERSION` does."""


def installed_version() -> str:
    try:
        import lm_eval

        return str(getattr(lm_eval, "__version__", "?"))
    except ImportError:
        return "not installed"


@functools.cache
def aggregations(yaml: str, metrics: tuple[str, ...]) -> dict[str, Aggregation]:
    """The aggregation function of each of ``metrics`` in lm_eval's task YAML ``yaml`` (a path below
    ``lm_eval/tasks``); :class:`LmEvalChanged` when the installed lm_eval has no such YAML or metric."""
    try:
        import lm_eval
        from lm_eval.api.registry import get_aggregation
        from lm_eval.tasks._yaml_loader import load_yaml

        config = load_yaml(Path(lm_eval.__file__).parent / "tasks" / yaml)
        declared = {entry["metric"]: entry["aggregation"] for entry in config["metric_list"]}
        missing = [name for name in metrics if name not in declared]
        if missing:
            raise KeyError(f"no metric {', '.join(missing)}")
        return {name: get_aggregation(declared[name]) if isinstance(declared[name], str) else declared[name]
                for name in metrics}  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - any change of lm_eval's internals is reported, never a trace
        raise LmEvalChanged(
            f"the installed lm_eval {installed_version()} does not define {yaml} as lm_eval {KNOWN_VERSION} does "
            f"({type(exc).__name__}: {exc})"
        ) from exc


@functools.cache
def process_results(yaml: str) -> Callable[[dict, list], dict]:
    """The ``process_results`` function of lm_eval's task YAML ``yaml`` (a path below ``lm_eval/tasks``), as lm_eval's
    YAML loader resolves it; :class:`LmEvalChanged` when the installed lm_eval has none there."""
    try:
        import lm_eval
        from lm_eval.tasks._yaml_loader import load_yaml

        found = load_yaml(Path(lm_eval.__file__).parent / "tasks" / yaml).get("process_results")
        if not callable(found):
            raise KeyError("no process_results function")
        return found
    except Exception as exc:  # noqa: BLE001 - any change of lm_eval's internals is reported, never a trace
        raise LmEvalChanged(
            f"the installed lm_eval {installed_version()} does not define {yaml} as lm_eval {KNOWN_VERSION} does "
            f"({type(exc).__name__}: {exc})"
        ) from exc


def _above_error(record: logging.LogRecord) -> bool:
    return record.levelno > logging.ERROR


@contextmanager
def quiet() -> Iterator[None]:
    """lm_eval's aggregations log an error and numpy warns where a figure is undefined (0/0, an empty mean); on a
    bootstrap resample that is an undefined resample, counted, not a message. The EsBBQ/CaBBQ aggregations log on the
    root logger (``logging.error``), whose filter drops them here: ``logging.disable`` would clear the cache of every
    logger of the process twice a resample (30 µs a resample beside the 336 loggers of lm_eval's run, 3 µs with the
    filter; more where more loggers are)."""
    outermost = _above_error not in logging.root.filters  # a quiet() inside another leaves the filter to the outer
    if outermost:
        logging.root.addFilter(_above_error)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            yield
    finally:
        if outermost:
            logging.root.removeFilter(_above_error)


def aggregate(function: Aggregation, values: Sequence[Any]) -> float:
    """``function(values)`` as a float; NaN where lm_eval's function finds the figure undefined (no values, a
    division by zero)."""
    if not values:
        return float("nan")
    try:
        return float(function(list(values)))
    except (ZeroDivisionError, ValueError, FloatingPointError):
        return float("nan")
