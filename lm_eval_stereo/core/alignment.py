"""Shared tokens of a sentence pair, as CrowS-Pairs (Nangia et al. 2020) and S_JSD (Steinborn et al. 2022) align them.

Both token sequences carry their special tokens (``[CLS] … [SEP]`` / ``<s> … </s>``, or ``BOS … EOS`` for a causal
model). The shared positions U are the positions inside the ``equal`` blocks of ``difflib.SequenceMatcher`` over the
two sequences of token ids (default settings, so ``autojunk=True``: it only matters for sequences of 200 or more
tokens), collected block by block; the first and the last collected position are dropped, which removes the special
tokens at both ends. The alignment is on token ids, never on words. It lives in ``core`` because both the masked-LM
backend (:mod:`lm_eval_stereo.models.masked_lm`) and the causal S_JSD task use it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def shared_positions(first: Sequence[int], second: Sequence[int]) -> tuple[list[int], list[int]]:
    """Positions of the shared tokens in ``first`` and in ``second`` (equal length, aligned pairwise)."""
    matcher = difflib.SequenceMatcher(None, [str(t) for t in first], [str(t) for t in second])
    in_first: list[int] = []
    in_second: list[int] = []
    for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if tag == "equal":
            in_first.extend(range(a_start, a_end))
            in_second.extend(range(b_start, b_end))
    return in_first[1:-1], in_second[1:-1]
