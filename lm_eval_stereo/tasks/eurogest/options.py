"""The options of the EuroGEST tasks (``--metadata``): declared here once, read by the tasks and the registry."""

from __future__ import annotations

from lm_eval_stereo.core.options import integer_at_least
from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.core.values import flag

NORMALISATION = Option(
    "eurogest_normalisation",
    True,
    flag,
    "mean log-probability per scored token (the reference's default); false: their sum",
)
WHOLE_SEQUENCE = Option(
    "eurogest_whole_sequence",
    False,
    flag,
    "score every token of each version but the first (the reference's measure_whole_sequences); default false: from "
    "the first differing token on",
)
MIN_SENTENCES = Option(
    "eurogest_min_sentences",
    10,
    integer_at_least(1),
    "a stereotype with fewer scored sentences is NaN (the reference: 10; at least 1)",
)
COMPLETE_ONLY = Option(
    "eurogest_complete_only",
    True,
    flag,
    "g_s and the ranking only where all 16 stereotypes have a value, as the reference skips such a language; false: "
    "g_s over the stereotypes that have one",
)
OPTIONS = (NORMALISATION, WHOLE_SEQUENCE, MIN_SENTENCES, COMPLETE_ONLY)
