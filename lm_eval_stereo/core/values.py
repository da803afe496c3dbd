"""The plugin's one reading of two kinds of text users type: a truth value (:func:`flag`) and lm_eval's model
arguments (:func:`parse_model_args`). Task options, the model's tokenizer arguments, the report and the start-up hook
all read them here, so ``trust_remote_code=on`` means true wherever it is read.

Cheap to import (the start-up hook :mod:`lm_eval_stereo._autoload` and :mod:`lm_eval_stereo.hooks` use it): the standard library only, and
``typing`` not at all.
"""

from __future__ import annotations

from lm_eval_stereo.core.errors import OptionError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms at every interpreter start-up

if TYPE_CHECKING:
    from typing import Any

#: the texts of a true and of a false value (compared in lower case, without surrounding blanks)
TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def flag(value: Any, name: str = "option") -> bool:
    """A truth value from JSON (true/false), a number 0/1 or a string (true/false, 1/0, yes/no, on/off, any case);
    anything else is an :class:`~lm_eval_stereo.core.errors.OptionError` naming ``name``."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise OptionError(f"option {name!r} must be true or false (also 1/0, yes/no, on/off), got {value!r}")


def parse_model_args(model_args: Any) -> dict[str, str]:
    """lm_eval's model arguments as a dict of strings: a dict, the text of a JSON object, or ``"k=v,k=v"`` (None or
    ``""``: none). Text that looks like JSON but is not is read as ``k=v`` pairs (lm_eval itself rejects it)."""
    if isinstance(model_args, str) and model_args.strip().startswith("{"):
        import json

        try:
            model_args = json.loads(model_args)
        except json.JSONDecodeError:
            pass
    if isinstance(model_args, dict):
        return {str(key): str(value) for key, value in model_args.items()}
    pairs = (part.partition("=") for part in str(model_args or "").split(",") if part.strip())
    return {key.strip(): value.strip() for key, _, value in pairs}
