"""Where the reference starts scoring each version of a sentence, and the lm_eval request that scores the same tokens.

Reference (``evaluate_models/main.py`` ``evaluate_sentence``, ``utils/model_utils.py``): each version is tokenised
alone, ``t = tokenizer(text)`` (the tokenizer's special tokens included, e.g. a BOS); ``lp[j]`` is the log-probability
of token ``t[j+1]`` given ``t[:j+1]`` (the first token is never scored). With ``d`` the first index where the two
versions' tokens differ:

- ``start = d - 1`` (a first token that differs, ``d = 0``, gives ``start = -1``: Python's ``lp[-1:]``, the last
  token only);
- one version's tokens a prefix of the other's: ``start = min(len) - 2``;
- identical tokens: ``start = 0``;
- ``measure_whole_sequences``: every entry of ``lp``.

The scored tokens are ``t[k:]`` with ``k`` the first index of ``lp[start:]`` plus one. lm_eval scores a request
``(context, continuation)`` as ``encode(context + continuation)[len(encode(context)):]`` given the context's tokens
(an empty context: the model's prefix token, BOS or EOS), moving the context's trailing whitespace to the
continuation. The request here is ``context = text[:offset of t[k]]``; whether lm_eval's encoding of it reproduces
``t[:k] | t[k:]`` is checked with the same tokenizer and flagged where it does not (``Request.split_kept``;
:mod:`lm_eval_stereo.core.reference_requests`).
"""

from __future__ import annotations

from typing import Any

from lm_eval_stereo.core.reference_requests import Request, request


def reference_start(tokens_m: list[Any], tokens_f: list[Any], whole_sequence: bool = False) -> int:
    """The reference's ``start`` (an index into ``lp``, possibly negative)."""
    if whole_sequence:
        return 0
    shorter, longer = sorted((len(tokens_m), len(tokens_f)))
    differing = [i for i in range(shorter) if tokens_m[i] != tokens_f[i]]
    if not differing and shorter != longer:
        return shorter - 2
    return differing[0] - 1 if differing else 0


def requests(
    tokenizer: Any, masculine: str, feminine: str, whole_sequence: bool = False, add_special_tokens: bool = False
) -> tuple[Request, Request]:
    """The masculine and the feminine version's requests, from the reference's ``start`` of the pair."""
    tokens_m, tokens_f = tokenizer(masculine)["input_ids"], tokenizer(feminine)["input_ids"]
    start = reference_start(tokens_m, tokens_f, whole_sequence)
    return (
        request(tokenizer, masculine, start, add_special_tokens),
        request(tokenizer, feminine, start, add_special_tokens),
    )
