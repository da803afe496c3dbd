"""The options of the StereoSet tasks (``--metadata``): declared here once, read by the tasks and the registry."""

from __future__ import annotations

from lm_eval_stereo.core.model_types import SPAN_MODES
from lm_eval_stereo.core.options import choice
from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.tasks.stereoset_multi import intra_scoring, normalization

CAUSAL_OPTIONS = (
    Option(
        "normalization",
        "token",
        choice(*normalization.UNITS),
        "unit the candidate log-likelihood is divided by: token (the evaluated model's tokens, the paper), byte, none",
    ),
    Option(
        "intrasentence_scoring",
        "reference",
        choice(*intra_scoring.SCORINGS),
        "causal intrasentence scoring: reference (first token after the start token, the rest after the first "
        "token, as the reference code) or bos (the whole sentence after the prefix token, task version 1.0)",
    ),
    Option(
        "intrasentence_start",
        "reference",
        choice(*intra_scoring.STARTS),
        "what the first intrasentence token is conditioned on: reference (<|endoftext|> where it is one token of the "
        "model's tokenizer, as the reference code; else the prefix token) or prefix_token (lm_eval's prefix token, "
        "task version 2.0)",
    ),
)

MASKED_OPTIONS = (
    Option(
        "span_mode",
        "reference",
        choice("reference", *SPAN_MODES),
        "how a candidate word is masked: reference (decoded prefix + one mask at every BLANK, re-tokenised, as the "
        "reference code), or on token ids: l2r_single (task version 1.0), l2r, all",
    ),
)
