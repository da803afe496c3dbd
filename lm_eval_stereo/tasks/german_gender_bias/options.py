"""The options of the German gender-bias tasks (``--metadata``): declared here once, read by the tasks and the
registry."""

from __future__ import annotations

from lm_eval_stereo.core.options import anything, choice, integer_at_least, text
from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.core.values import flag
from lm_eval_stereo.tasks.german_gender_bias.personas import cooccurrence
from lm_eval_stereo.tasks.german_gender_bias.personas.data import WORDINGS

GERBBQ_OPTIONS = (
    Option(
        "exclude_undetermined",
        False,
        flag,
        "leave undetermined answers out of the figures instead of booking them as 'unbekannt' (the reference)",
    ),
)

WORDING_OPTION = Option(
    "persona_wording", "fictional", choice(*WORDINGS), "prompt wording: fictional (the paper) or typical (thesis)"
)
JUDGE_OPTIONS = (
    Option("judge_model", None, text, "lm_eval model name of the optional LLM gender judge (none: lexicon only)"),
    Option("judge_model_args", None, text, "the judge's model arguments"),
    Option("judge_batch_size", 1, anything, "the judge's batch size"),
    Option("judge_device", None, text, "the judge's device (default: cuda when available, else cpu)"),
    Option("judge_chat_template", True, anything, "wrap the judge's question in its chat template"),
    Option("judge_gen_kwargs", None, anything, "the judge's generation arguments"),
)
SEED_OPTION = Option(
    "cooccurrence_seed",
    cooccurrence.DEFAULT_SEED,
    integer_at_least(0),
    "seed of the random halves of the intra-gender bias (numpy's seeds are >= 0)",
)
CLASSIFIED_PERSONA_OPTIONS = (WORDING_OPTION, *JUDGE_OPTIONS)
GENDER_PERSONA_OPTIONS = (WORDING_OPTION, SEED_OPTION)
