"""How a causal LM scores an intrasentence candidate: the reference's first-token split, or BOS conditioning.

The reference (``generative_inference`` in stereotypes-multi ``code/intrasentence_inference.py``, inherited from the
original StereoSet code) takes P(first token) from the distribution after the encoded string ``"<|endoftext|>"`` and
P(tokens 2..n) from one pass over the sentence alone, so token 2 is conditioned on token 1 only. Within lm_eval's
log-likelihood requests that is two requests per candidate:

- ``(start, first)``: the first token after the start the reference conditions on. With ``intrasentence_start`` =
  ``reference`` (default) ``start`` is the literal ``"<|endoftext|>"`` whenever the evaluated model's tokenizer
  encodes it, as the reference calls it, to one id (GPT-2-family and SmolLM2 tokenizers): lm_eval encodes a non-empty
  context as it is, so every backend conditions on that id, whatever ``prefix_token_id`` says. Where it is not one id
  (e.g. SentencePiece tokenizers that split it into pieces), and with ``intrasentence_start`` = ``prefix_token``,
  ``start`` is ``""``: lm_eval's empty context, i.e. the model's prefix token;
- ``(first, rest)``: the remaining tokens given the first one.

``first`` is the text of the sentence's first token in the evaluated model's tokenizer. The split reproduces the
reference's tokens when lm_eval re-encodes ``first`` as exactly that one token. Where it does not (a first token that
is part of a multi-byte character), both requests also carry the reference's token split (``references``, see
:mod:`lm_eval_stereo.core.token_split`): ``hf-prefix`` scores exactly those tokens; other backends score the strings,
and the candidate is counted. A sentence whose first token cannot be a context (it is whitespace, or the whole
sentence) is scored as ``("", sentence)`` and counted.

``bos`` (the scoring of task version 1.0) scores the whole sentence after the prefix token: ``("", sentence)``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lm_eval_stereo.core.model_tokenizer import load_tokenizer, tokenizer_name
from lm_eval_stereo.core.token_split import TokenSplit, token_split

logger = logging.getLogger(__name__)

SCORINGS = ("reference", "bos")
#: ``intrasentence_start``: what the first token is conditioned on (``reference``: see :func:`reference_start`)
STARTS = ("reference", "prefix_token")
#: the reference's start: the distribution after ``tokenizer.encode("<|endoftext|>")``
REFERENCE_START = "<|endoftext|>"
Request = tuple[str, str]


@dataclass(frozen=True)
class Split:
    """The log-likelihood requests scoring one sentence (their log-likelihoods are summed), whether the reference's
    token boundaries survive them, and per request the reference's token split where they do not (else None)."""

    requests: tuple[Request, ...]
    boundaries_kept: bool
    references: tuple[TokenSplit | None, ...] = ()

    def reference(self, n: int) -> TokenSplit | None:
        """The token split of request ``n`` (None: its strings are the reference's tokens, or none is known)."""
        return self.references[n] if n < len(self.references) else None


def whole_sentence(sentence: str, boundaries_kept: bool = True, start: str = "") -> Split:
    """The sentence as one request after ``start`` (``""``: the model's prefix token, the ``bos`` scoring)."""
    return Split(((start, sentence),), boundaries_kept)


def reference_start(tokenizer: Any) -> str:
    """``"<|endoftext|>"`` when ``tokenizer.encode("<|endoftext|>")`` (the reference's call) is one id, the same one
    lm_eval's encoding without special tokens gives; else ``""`` (lm_eval's prefix token)."""
    ids = tokenizer.encode(REFERENCE_START)
    return (
        REFERENCE_START if len(ids) == 1 and ids == tokenizer.encode(REFERENCE_START, add_special_tokens=False) else ""
    )


def first_token_split(tokenizer: Any, sentence: str, start: str = "") -> Split:
    """The reference's split of ``sentence`` after its first token, the first token after ``start`` (see the module
    docstring)."""
    ids = tokenizer.encode(sentence, add_special_tokens=False)
    if tokenizer.is_fast:
        end = tokenizer(sentence, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"][0][1]
    else:
        decoded = tokenizer.decode(ids[:1])
        end = len(decoded) if sentence.startswith(decoded) else 0
    first, rest = sentence[:end], sentence[end:]
    if not first.strip() or first != first.rstrip() or not rest:
        return whole_sentence(sentence, boundaries_kept=False, start=start)
    kept = tokenizer.encode(first, add_special_tokens=False) == ids[:1]
    if kept:
        return Split(((start, first), (first, rest)), kept)
    start_ids = tokenizer.encode(start, add_special_tokens=False) if start else [_prefix_token(tokenizer)]
    references = (token_split(start_ids, ids[:1]), token_split(ids[:1], ids[1:]))
    return Split(((start, first), (first, rest)), kept, references)


def _prefix_token(tokenizer: Any) -> int:
    """lm_eval ``hf``'s prefix token of an empty context: BOS, else EOS."""
    return tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id


class IntraScoring:
    """The intrasentence scoring in force: ``mode`` (one of :data:`SCORINGS`) and its description for the results."""

    def __init__(self, mode: str, description: str, tokenizer: Any = None, start: str = "") -> None:
        self.mode = mode
        self.description = description
        self.start = start
        self._tokenizer = tokenizer
        self._splits: dict[str, Split] = {}

    def split(self, sentence: str) -> Split:
        """The requests of ``sentence`` (cached: requests and results are matched through it)."""
        if sentence not in self._splits:
            self._splits[sentence] = (
                first_token_split(self._tokenizer, sentence, self.start)
                if self.mode == "reference"
                else whole_sentence(sentence)
            )
        return self._splits[sentence]


@functools.cache
def _warn_fallback(reason: str) -> None:
    logger.warning("reference intrasentence scoring impossible (%s); scoring whole sentences after BOS", reason)


def resolve(metadata: Mapping[str, Any], mode: str, start: str = "reference") -> IntraScoring:
    """The scoring for ``mode`` and ``start`` (one of :data:`STARTS`); ``reference`` needs the evaluated model's
    tokenizer and falls back to ``bos`` (warned once, recorded in the description) when none can be resolved from the
    model arguments. The description names the start token used."""
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
            context = reference_start(tokenizer) if start == "reference" else ""
            if context:
                after = f"{context} (id {tokenizer.convert_tokens_to_ids(context)}, as the reference)"
            elif start == "reference":
                after = f"the prefix token ({REFERENCE_START} is not one token of this tokenizer)"
            else:
                after = "the prefix token (intrasentence_start: prefix_token)"
            return IntraScoring(
                "reference",
                f"reference (first token after {after}, rest after the first token; {name})",
                tokenizer,
                context,
            )
    _warn_fallback(reason)
    return IntraScoring("bos", f"bos (reference scoring impossible: {reason})")
