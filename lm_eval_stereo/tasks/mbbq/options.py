"""The options of the MBBQ tasks (``--metadata``): declared here once, read by the tasks and the registry."""

from __future__ import annotations

from lm_eval_stereo.core.options import text
from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.core.values import flag

OPTIONS = (
    Option(
        "mbbq_length_norm",
        False,
        flag,
        "log-likelihood tasks: pick the answer with the highest log-likelihood per character of the answer text "
        "(default: the highest summed log-likelihood)",
    ),
    Option(
        "mbbq_keep_undetermined",
        False,
        flag,
        "keep answers with no detected answer in the denominators as wrong, neither biased nor counter-biased "
        "(default: left out, as MBBQ's analysis drops them)",
    ),
    Option(
        "mbbq_detection_file",
        None,
        text,
        "generative tasks: a file of the layout of MBBQ's answer_detection.py (prompts, answer phrases) to read "
        "instead of the pinned upstream file",
    ),
)
