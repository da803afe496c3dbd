"""How a causal LM scores an intrasentence candidate: the reference's first-token split, or BOS conditioning.

The reference (``generative_inference`` in stereotypes-multi ``code/intrasentence_inference.py``, inherited from the
original StereoSet code) takes P(first token) from the distribution after the encoded string ``"<|endoftext|>"`` and
P(tokens 2..n) from one pass over the sentence alone, so token 2 is conditioned on token 1 only. Within lm_eval's
log-likelihood requests that is two requests per candidate:

- ``("", first)``: the first token after the model's prefix token (lm_eval's empty context; the prefix token is
  ``<|endoftext|>`` for GPT-2-style tokenizers, where this equals the reference);
- ``(first, rest)``: the remaining tokens given the first one.

``first`` is the text of the sentence's first token in the evaluated model's tokenizer. The split reproduces the
reference's tokens when lm_eval re-encodes ``first`` as exactly that one token; candidates where it does not (e.g. a
first token that is part of a multi-byte character) are still scored with the split, and counted. A sentence whose
first token cannot be a context (it is whitespace, or the whole sentence) is scored as ``("", sentence)`` and counted.

``bos`` (the scoring of task version 1.0) scores the whole sentence after the prefix token: ``("", sentence)``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lm_eval_stereo.core.model_tokenizer import load_tokenizer, tokenizer_name

logger = logging.getLogger(__name__)

SCORINGS = ("reference", "bos")
Request = tuple[str, str]


@dataclass(frozen=True)
class Split:
    """The log-likelihood requests scoring one sentence (their log-likelihoods are summed) and whether the reference's
    token boundaries survive them."""

    requests: tuple[Request, ...]
    boundaries_kept: bool


def whole_sentence(sentence: str, boundaries_kept: bool = True) -> Split:
    """The sentence as one request after the model's prefix token (``bos`` scoring)."""
    return Split((("", sentence),), boundaries_kept)


def first_token_split(tokenizer: Any, sentence: str) -> Split:
    """The reference's split of ``sentence`` after its first token (see the module docstring)."""
    ids = tokenizer.encode(sentence, add_special_tokens=False)
    if tokenizer.is_fast:
        end = tokenizer(sentence, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"][0][1]
    else:
        decoded = tokenizer.decode(ids[:1])
        end = len(decoded) if sentence.startswith(decoded) else 0
    first, rest = sentence[:end], sentence[end:]
    if not first.strip() or first != first.rstrip() or not rest:
        return whole_sentence(sentence, boundaries_kept=False)
    kept = tokenizer.encode(first, add_special_tokens=False) == ids[:1]
    return Split((("", first), (first, rest)), kept)


class IntraScoring:
    """The intrasentence scoring in force: ``mode`` (one of :data:`SCORINGS`) and its description for the results."""

    def __init__(self, mode: str, description: str, tokenizer: Any = None) -> None:
        self.mode = mode
        self.description = description
        self._tokenizer = tokenizer
        self._splits: dict[str, Split] = {}

    def split(self, sentence: str) -> Split:
        """The requests of ``sentence`` (cached: requests and results are matched through it)."""
        if sentence not in self._splits:
            self._splits[sentence] = (
                first_token_split(self._tokenizer, sentence) if self.mode == "reference" else whole_sentence(sentence)
            )
        return self._splits[sentence]


@functools.cache
def _warn_fallback(reason: str) -> None:
    logger.warning("reference intrasentence scoring impossible (%s); scoring whole sentences after BOS", reason)


def resolve(metadata: Mapping[str, Any], mode: str) -> IntraScoring:
    """The scoring for ``mode``; ``reference`` needs the evaluated model's tokenizer and falls back to ``bos``
    (warned once, recorded in the description) when none can be resolved from the model arguments."""
    if mode == "bos":
        return IntraScoring("bos", "bos (whole sentence after the prefix token)")
    name = tokenizer_name(metadata)
    if name is None:
        reason = "no tokenizer= or pretrained= model argument"
    else:
        try:
            tokenizer = load_tokenizer(metadata)
        except Exception as exc:  # noqa: BLE001 - any loading failure means: no tokenizer for this model
            reason = f"tokenizer {name!r} could not be loaded: {type(exc).__name__}"
        else:
            return IntraScoring(
                "reference", f"reference (first token after the prefix token, rest after it; {name})", tokenizer
            )
    _warn_fallback(reason)
    return IntraScoring("bos", f"bos (reference scoring impossible: {reason})")
