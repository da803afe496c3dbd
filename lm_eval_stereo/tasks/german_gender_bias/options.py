"""The options of the German gender-bias tasks (``--metadata``): declared here once, read by the tasks and the
registry."""

from __future__ import annotations

from typing import Any

from lm_eval_stereo.core.errors import OptionError
from lm_eval_stereo.core.options import choice, integer_at_least, text
from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.core.values import flag
from lm_eval_stereo.tasks.german_gender_bias.personas import cooccurrence
from lm_eval_stereo.tasks.german_gender_bias.personas.data import WORDINGS


def batch_size(value: Any, name: str) -> int | str:
    """lm_eval's batch size: an integer >= 1, ``auto`` or ``auto:N``."""
    if isinstance(value, str) and (value == "auto" or (value.startswith("auto:") and value[5:].isdigit())):
        return value
    try:
        return integer_at_least(1)(value, name)
    except OptionError:
        raise OptionError(f"option {name!r} must be an integer >= 1, 'auto' or 'auto:N', got {value!r}") from None


def generation_arguments(value: Any, name: str) -> dict[str, Any] | str:
    """Generation arguments: a JSON object, or lm_eval's ``k=v,k=v`` text."""
    if isinstance(value, (dict, str)):
        return value
    raise OptionError(f"option {name!r} must be a JSON object or 'k=v,k=v' text, got {value!r}")


GERBBQ_OPTIONS = (
    Option(
        "exclude_undetermined",
        False,
        flag,
        "leave undetermined answers out of the figures instead of booking them as 'unbekannt' (the reference)",
    ),
)

WORDING_OPTION = Option(
    "persona_wording", "fictional", choice(*WORDINGS), "prompt wording: fictional (the paper) or typical (thesis)"
)
JUDGE_OPTIONS = (
    Option("judge_model", None, text, "lm_eval model name of the optional LLM gender judge (none: lexicon only)"),
    Option("judge_model_args", None, text, "the judge's model arguments"),
    Option("judge_batch_size", 1, batch_size, "the judge's batch size (an integer >= 1, auto or auto:N)"),
    Option("judge_device", None, text, "the judge's device (default: cuda when available, else cpu)"),
    Option("judge_chat_template", True, flag, "wrap the judge's question in its chat template"),
    Option("judge_gen_kwargs", None, generation_arguments, "the judge's generation arguments (object or k=v text)"),
)
SEED_OPTION = Option(
    "cooccurrence_seed",
    cooccurrence.DEFAULT_SEED,
    integer_at_least(0),
    "seed of the random halves of the intra-gender bias (numpy's seeds are >= 0)",
)
CLASSIFIED_PERSONA_OPTIONS = (WORDING_OPTION, *JUDGE_OPTIONS)
GENDER_PERSONA_OPTIONS = (WORDING_OPTION, SEED_OPTION)
