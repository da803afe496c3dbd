"""``stereotype_leakage_seq2seq_<lang>`` (``--model hf --model_args backend=seq2seq``, mT5): ILPS as the reference.

The reference (``fixed_lps.get_log_prob``) scores the trait as mT5's span-corruption target::

    input  = template with <mask> -> "<extra_id_0>" (Chinese: " <extra_id_0>"), group or prior word filled in
    labels = "<extra_id_0>{trait} <extra_id_1>" + "</s>",  trait = " " + word (Chinese: word)
    score  = -loss = mean log-probability over the label tokens (sentinels and </s> included)

Here each score is a standard ``loglikelihood(input, "<extra_id_0>{trait} <extra_id_1></s>")`` request (lm_eval
encodes a seq2seq continuation without special tokens, so the tokenizer's EOS string is written out), divided by the
number of label tokens (both from the evaluated model's tokenizer, resolved from the model arguments). Quirk kept:
in the Russian feminine runs the prior's trait (the masculine form) gets no leading space. Template sets:
``templates=committed`` = the mT5 functions as committed (Chinese 10 templates, Russian 30, Hindi with the
oblique-plural templates), ``full`` = the monolingual-BERT sets.
"""

from __future__ import annotations

from typing import Any

import datasets
from lm_eval.api.instance import Instance

from lm_eval_stereo.core.model_tokenizer import load_tokenizer
from lm_eval_stereo.core.summary import instance_kwargs
from lm_eval_stereo.tasks.stereotype_leakage.task import LeakageTask
from lm_eval_stereo.tasks.stereotype_leakage.task import custom_dataset as leakage_dataset

SENTINEL, NEXT_SENTINEL = "<extra_id_0>", "<extra_id_1>"


def seq2seq_pair(template: str, word: str, trait: str, lang: str) -> tuple[str, str]:
    """(input, target) of one filled template; ``trait`` as the reference passes it (leading space included)."""
    context = template.replace("<mask>", (" " if lang == "zh" else "") + SENTINEL).replace("<group>", word)
    return context, f"{SENTINEL}{trait} {NEXT_SENTINEL}"


def seq2seq_pairs(doc: dict[str, Any], lang: str) -> list[tuple[str, str]]:
    """The prior's (input, target), then one per group of ``doc``."""
    space = "" if lang == "zh" else " "
    prior_space = "" if doc["separate_prior_traits"] else space  # the reference's Russian feminine runs
    prior = seq2seq_pair(doc["prior_template"], doc["prior_word"], prior_space + doc["prior_trait_word"], lang)
    groups = [seq2seq_pair(doc["template"], g["word"], space + doc["trait_word"], lang) for g in doc["groups"]]
    return [prior, *groups]


def custom_dataset(language: str, **kwargs: Any) -> dict[str, datasets.Dataset]:
    """The leakage documents with their (input, target + EOS) requests and label-token counts, from the evaluated
    model's tokenizer."""
    tokenizer = load_tokenizer(kwargs)
    docs = leakage_dataset(language, **kwargs)["test"].to_list()
    for doc in docs:
        doc["requests"] = [[context, target + tokenizer.eos_token] for context, target in seq2seq_pairs(doc, language)]
        doc["label_tokens"] = [
            len(tokenizer(target, add_special_tokens=False)["input_ids"]) for _, target in doc["requests"]
        ]
    return {"test": datasets.Dataset.from_list(docs)}


class LeakageSeq2SeqTask(LeakageTask):
    """One ``loglikelihood`` request for the prior word and one per group; ILPS = log-likelihood / label tokens."""

    SCORE_KIND = "seq2seq"
    SEQ2SEQ = True

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        kwargs = instance_kwargs(kwargs)
        return [
            Instance(request_type="loglikelihood", doc=doc, arguments=tuple(pair), idx=i, **kwargs)
            for i, pair in enumerate(doc["requests"])
        ]

    def scores(self, doc: dict[str, Any], results: list[Any]) -> tuple[float, list[float]]:
        means = [float(result[0]) / n for result, n in zip(results, doc["label_tokens"], strict=True)]
        return means[0], means[1:]
