"""The options of the GEST tasks (``--metadata``): declared here once, read by the tasks and the registry."""

from __future__ import annotations

from lm_eval_stereo.core.options import choice, text
from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.core.values import flag
from lm_eval_stereo.tasks.gest.data import DEFAULT_VERSION, VERSIONS

VERSION_OPTION = Option(
    "gest_version", DEFAULT_VERSION, choice(*VERSIONS), "GEST data version (1.1 as in the paper, or 1.0)"
)
PAIRS_OPTIONS = (
    VERSION_OPTION,
    Option("pairs_file", None, text, "a CSV of one's own minimal pairs (columns language, stereotype, male, female)"),
    Option(
        "pairs_tokenizer_filter",
        True,
        flag,
        "apply the reference's tokenizer filters with the evaluated model's tokenizer (causal tasks only: false)",
    ),
)
