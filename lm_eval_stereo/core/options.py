"""The one parser of task options given with ``--metadata`` (and of the model arguments tasks read).

lm_eval hands a task one dict: the model arguments (``--model_args``) merged with ``--metadata`` and the task YAML's
own ``metadata``. Every task declares its options (:class:`~lm_eval_stereo.core.registry.Option`: name, default,
parser, help); :func:`parse` returns their values and rejects keys that are neither an option of this task, an option
of another plugin task (one ``--metadata`` serves every task of a run), a task-YAML metadata key, nor one of the model
arguments the user passed (:mod:`lm_eval_stereo.core.model_arguments`: every backend's arguments, known from the
command line or ``simple_evaluate`` itself, not from a list).
A typo such as ``normalisation`` is therefore an error that lists the keys the task accepts, never a silent default.
The options of the other tasks are those the benchmarks declare in the registry (:mod:`lm_eval_stereo.core.registry`),
which the plugin's tasks package fills before any plugin task is built, whatever the order of ``--tasks``.

An option of another benchmark that no plugin task of the run reads (its benchmark is not in the run) has no effect:
:func:`warn_unread` says so in one warning line per option, once the run's tasks are built.

A true/false option is parsed by :func:`lm_eval_stereo.core.values.flag`, as every truth value of the plugin is.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from lm_eval_stereo.core import registry
from lm_eval_stereo.core.errors import OptionError
from lm_eval_stereo.core.registry import Option

logger = logging.getLogger(__name__)

#: the options the plugin tasks built in this process declare, the other benchmarks' options they were given, and
#: those already warned of (:func:`warn_unread`)
_READ: set[str] = set()
_GIVEN_TO_OTHERS: set[str] = set()
_WARNED: set[str] = set()

#: keys of a task YAML's ``metadata`` block that lm_eval itself uses
YAML_METADATA = ("version", "config_source", "num_fewshot", "pretrained_model_name_or_path")


def choice(*allowed: str) -> Callable[[Any, str], str]:
    """A parser accepting one of ``allowed`` (case-insensitive)."""

    def parse(value: Any, name: str) -> str:
        text = str(value).strip().lower()
        if text not in allowed:
            raise OptionError(f"option {name!r} must be one of {', '.join(allowed)}, got {value!r}")
        return text

    return parse


def integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not str(value).strip().lstrip("-").isdigit():
        raise OptionError(f"option {name!r} must be an integer, got {value!r}")
    return int(value)


def integer_at_least(minimum: int) -> Callable[[Any, str], int]:
    """A parser accepting an integer of at least ``minimum``; a value below is an error naming the option, the value
    and the range, never replaced by the nearest allowed one."""

    def parse(value: Any, name: str) -> int:
        number = integer(value, name)
        if number < minimum:
            raise OptionError(f"option {name!r} must be an integer >= {minimum}, got {value!r}")
        return number

    return parse


def text(value: Any, name: str) -> str | None:
    """A string option; None and "" mean unset."""
    return None if value is None or value == "" else str(value)


def parse(
    task: str, options: Sequence[Option], given: Mapping[str, Any], model_arguments: Collection[str] | None = ()
) -> dict[str, Any]:
    """The values of ``options`` from ``given`` (model arguments + ``--metadata`` + YAML metadata of ``task``);
    ``model_arguments``: the keys the user passed as model arguments (:func:`lm_eval_stereo.core.model_arguments.given`),
    accepted whatever they are; every other key must be an option of a plugin task or a key lm_eval's YAMLs use.
    ``model_arguments`` None (not known): only a near miss of an option is refused."""
    own = {option.name for option in options}
    known = own | registry.all_options() | set(YAML_METADATA) | set(model_arguments or ())
    unknown = sorted(key for key in given if key not in known)
    if model_arguments is None:
        unknown = [key for key in unknown if _near_miss(key, options)]
    if unknown:
        raise OptionError(_unknown_message(task, unknown, options))
    _READ.update(own)
    _GIVEN_TO_OTHERS.update(key for key in given if key in registry.all_options() and key not in own)
    return {option.name: option.value(given) for option in options}


def _near_miss(key: str, options: Sequence[Option]) -> list[str]:
    """The option ``key`` is a near miss of (the task's own, else any plugin task's), if any."""
    return difflib.get_close_matches(key, [o.name for o in options] or sorted(registry.all_options()), n=1, cutoff=0.75)


def warn_unread() -> None:
    """One warning line per option given (``--metadata``) that no plugin task built in this process reads: an option
    of a benchmark none of whose tasks is in the run, which has no effect (once per option and process)."""
    for key in sorted(_GIVEN_TO_OTHERS - _READ - _WARNED):
        owners = [bench.name for bench in registry.benchmarks() if key in {option.name for option in bench.options}]
        logger.warning(
            "lm-eval-stereo: option %r (of %s) is read by no task of this run: it has no effect", key,
            ", ".join(owners) or "another benchmark",
        )  # fmt: skip
        _WARNED.add(key)


def _unknown_message(task: str, unknown: Iterable[str], options: Sequence[Option]) -> str:
    accepted = ", ".join(f"{o.name} (default {o.default!r})" for o in options) or "none"
    parts = []
    for key in unknown:
        close = _near_miss(key, options)
        parts.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return (
        f"task {task}: unknown --metadata key {', '.join(parts)}; this task accepts: {accepted}. "
        "Model arguments belong in --model_args."
    )
