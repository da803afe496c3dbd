"""The seed of each sampled repeat: the k-th identical sampled request of a run carries ``seed + k``.

A task's ``repeats`` sends one prompt k times; with one seed for all of them, a backend that honours it (a served
model, vLLM) returns k identical texts. The plugin's views of those backends (:mod:`lm_eval_stereo.models.served_mixin`,
:mod:`lm_eval_stereo.models.vllm_mixin`) give the k-th identical request ``seed + k``, so the k samples differ, and a
repeated run with the same ``seed`` gives the same ones whatever order the backend sends them in.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any


class RepeatSeeds:
    """The seed of each sampled request of a run, counted per identical request (the same prompt with the same
    ``gen_kwargs``)."""

    def __init__(self) -> None:
        self._sent: Counter[str] = Counter()

    def next_seed(self, seed: int, prompt: Any, gen_kwargs: dict) -> int:
        """``seed`` plus the number of identical requests seen before this one."""
        key = json.dumps([prompt, gen_kwargs], sort_keys=True, default=str)
        self._sent[key] += 1
        return seed + self._sent[key] - 1
