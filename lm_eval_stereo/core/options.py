"""The one parser of task options given with ``--metadata`` (and of the model arguments tasks read).

lm_eval hands a task one dict: the model arguments (``--model_args``) merged with ``--metadata`` and the task YAML's
own ``metadata``. Every task declares its options (:class:`~lm_eval_stereo.core.registry.Option`: name, default,
parser, help); :func:`parse` returns their values and rejects keys that are neither an option of this task, an option
of another plugin task (one ``--metadata`` serves every task of a run), a task-YAML metadata key, nor a model argument
of a known backend.
A typo such as ``normalisation`` is therefore an error that lists the keys the task accepts, never a silent default.
The options of the other tasks are those the benchmarks declare in the registry (:mod:`lm_eval_stereo.core.registry`),
which the plugin's tasks package fills before any plugin task is built, whatever the order of ``--tasks``.

A true/false option is parsed by :func:`lm_eval_stereo.core.values.flag`, as every truth value of the plugin is.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lm_eval_stereo.core import registry
from lm_eval_stereo.core.errors import OptionError
from lm_eval_stereo.core.registry import Option

#: keys of a task YAML's ``metadata`` block that lm_eval itself uses
YAML_METADATA = ("version", "config_source", "num_fewshot", "pretrained_model_name_or_path")

#: model arguments of lm_eval 0.4.13's backends that are not parameters of HFLM (vllm, with the engine arguments
#: ``block_size`` and ``enable_prefix_caching`` of ``vllm-prefix``; API models) and common ``from_pretrained`` keyword
#: arguments HFLM passes through
OTHER_MODEL_ARGUMENTS = (
    "attn_implementation", "base_url", "block_size", "bnb_4bit_compute_dtype", "bnb_4bit_quant_type", "cache_dir",
    "data_parallel_size", "device_map", "enable_prefix_caching", "enforce_eager", "eos_string",
    "gpu_memory_utilization", "header", "headers", "load_in_4bit", "load_in_8bit", "local_files_only",
    "lora_local_path", "low_cpu_mem_usage", "max_gen_toks", "max_model_len", "max_retries", "model", "num_concurrent",
    "quantization", "quantization_config", "seed", "swap_space", "tensor_parallel_size", "timeout", "token",
    "tokenized_requests", "tokenizer_backend", "tokenizer_mode", "torch_dtype", "use_auth_token",
    "verify_certificate",
)  # fmt: skip


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


#: the plugin backends' own model arguments (``hf-mlm``: HFLM's and ``pll``; ``replay``: the recording's columns).
#: Declared here, not read from the classes, so that ``core`` never imports ``models``; a test checks them equal.
PLUGIN_MODEL_ARGUMENTS = ("pll", "outputs", "prompt_column", "output_column", "prefill")


@functools.cache
def _model_arguments() -> frozenset[str]:
    """Model-argument names: HFLM's constructor parameters, :data:`PLUGIN_MODEL_ARGUMENTS` and
    :data:`OTHER_MODEL_ARGUMENTS`."""
    import inspect

    from lm_eval.models.huggingface import HFLM

    names = set(OTHER_MODEL_ARGUMENTS) | set(PLUGIN_MODEL_ARGUMENTS) | set(inspect.signature(HFLM.__init__).parameters)
    return frozenset(names - {"self", "kwargs", "args"})


def parse(task: str, options: Sequence[Option], given: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``options`` from ``given`` (model arguments + ``--metadata`` + YAML metadata of ``task``)."""
    own = {option.name for option in options}
    known = own | registry.all_options() | set(YAML_METADATA) | _model_arguments()
    unknown = sorted(key for key in given if key not in known)
    if unknown:
        raise OptionError(_unknown_message(task, unknown, options))
    return {option.name: option.value(given) for option in options}


def _unknown_message(task: str, unknown: Iterable[str], options: Sequence[Option]) -> str:
    accepted = ", ".join(f"{o.name} (default {o.default!r})" for o in options) or "none"
    parts = []
    for key in unknown:
        close = difflib.get_close_matches(
            key, [o.name for o in options] or sorted(registry.all_options()), n=1, cutoff=0.75
        )
        parts.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return (
        f"task {task}: unknown --metadata key {', '.join(parts)}; this task accepts: {accepted}. "
        "Model arguments belong in --model_args."
    )
