"""Length normalisation of log-likelihood scores, resolved from the evaluated model's arguments.

StereoSet's causal-LM score is a *mean* log-probability per token (Öztürk et al. 2023, Eq. 4), so the number of
tokens the evaluated model's tokenizer produces is part of the method. The model arguments reach a task as metadata
(lm_eval merges ``--model_args`` into it); ``normalization`` in ``--metadata`` picks the unit:

- ``token`` (default): tokens of the evaluated model's tokenizer (``tokenizer=`` or ``pretrained=`` model argument);
- ``byte``: UTF-8 bytes of the scored text (for models whose tokenizer cannot be loaded, e.g. API models);
- ``none``: the plain sum of log-probabilities (not the paper's score).

When ``token`` is asked for but no tokenizer can be resolved, ``byte`` is used, a warning is logged once, and the
choice is recorded in every item (and so in the results).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_stereo.core.model_tokenizer import load_tokenizer, tokenizer_name

logger = logging.getLogger(__name__)

UNITS = ("token", "byte", "none")


@dataclass(frozen=True)
class Normalizer:
    """Counts the units of a continuation scored after a context (empty context = BOS-conditioned)."""

    unit: str
    description: str
    _encode: Callable[[str], list[int]] | None = None

    def count(self, context: str, continuation: str) -> int:
        if self.unit == "none":
            return 1
        if self.unit == "byte":
            return max(1, len(continuation.encode("utf-8")))
        assert self._encode is not None
        if not context:
            return max(1, len(self._encode(continuation)))
        # the harness encodes context + continuation and splits off the context tokens
        return max(1, len(self._encode(context + continuation)) - len(self._encode(context)))

    def count_requests(self, requests: Sequence[tuple[str, str]]) -> int:
        """Units of a text scored by several (context, continuation) requests whose log-likelihoods are summed."""
        if self.unit == "none":
            return 1
        return sum(self.count(context, continuation) for context, continuation in requests)


@functools.cache
def _warn_fallback(reason: str) -> None:
    logger.warning("token normalisation impossible (%s); falling back to byte normalisation", reason)


def resolve(metadata: Mapping[str, Any], unit: str) -> Normalizer:
    """The normaliser for ``unit`` (one of :data:`UNITS`; the tokenizer comes from the model arguments in
    ``metadata``), with the byte fallback."""
    if unit != "token":
        return Normalizer(unit, unit)
    name = tokenizer_name(metadata)
    if name is None:
        _warn_fallback("no tokenizer= or pretrained= model argument")
        return Normalizer("byte", "byte (no tokenizer could be resolved from the model arguments)")
    try:
        tokenizer = load_tokenizer(metadata)
    except Exception as exc:  # noqa: BLE001 - any loading failure means: no tokenizer for this model
        _warn_fallback(f"tokenizer {name!r} could not be loaded: {type(exc).__name__}")
        return Normalizer("byte", f"byte (tokenizer {name!r} could not be loaded)")

    def encode(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False)

    return Normalizer("token", f"token ({name})", encode)
