"""The options of the stereotype-leakage tasks (``--metadata``): declared here once, read by the tasks and the
registry."""

from __future__ import annotations

from lm_eval_stereo.core.options import choice
from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.core.values import flag
from lm_eval_stereo.tasks.stereotype_leakage import metrics

#: how generations are asked for and counted (the generative tasks)
PROTOCOLS = ("repository", "paper2025")

UNRATED_OPTION = Option(
    "unrated",
    "zero",
    choice(*metrics.UNRATED_RULES),
    "unrated human cells in the regression: zero (the reference) or drop",
)
COMMON_OPTIONS = (
    Option(
        "templates",
        "committed",
        choice("committed", "full"),
        "committed: the reference's template subsets "
        "(mBERT: Hindi = the comp pair only); full: every template of the language (monolingual-BERT sets)",
    ),  # fmt: skip
    UNRATED_OPTION,
    Option(
        "scale",
        "reference",
        choice("reference", "none"),
        "multiply the model scores as the reference does "
        "(x100 masked LMs, x1 causal) or not; changes the coefficients, not the p-values",
    ),  # fmt: skip
    Option(
        "hi_untrustworthy",
        "copy",
        choice("copy", "empty"),
        "Hindi untrustworthy = dishonest (same word; the reference) or left empty",
    ),  # fmt: skip
)

CAUSAL_OPTIONS = (
    *COMMON_OPTIONS,
    *(
        Option(
            "full_sentence",
            False,
            flag,
            "causal tasks: score the whole sentence (every template) instead of "
            "the trait and the rest given the prefix (templates with the group before the trait)",
        ),  # fmt: skip
    ),
)

MASKED_OPTIONS = (
    *COMMON_OPTIONS,
    *(
        Option(
            "score",
            "set",
            choice("set", "ilps"),
            "set: the sensitivity test (BERT heads, the reference); "
            "ilps: log-probability of the masked trait, left to right",
        ),  # fmt: skip
    ),
)

GENERATION_OPTIONS = (
    Option(
        "protocol",
        "repository",
        choice(*PROTOCOLS),
        "generative tasks: repository (the notebook: 16 opposite pairs, counts) "
        "or paper2025 (same-polarity pairs with a 'neither' answer, shares)",
    ),  # fmt: skip
    UNRATED_OPTION,
)
