"""Task glue for the Slavic minimal pairs: ``gest_pairs_<lang>`` (causal LMs) and ``gest_pairs_mlm_<lang>`` (hf-mlm).

A pairs file (default: upstream ``data/gender_variants.csv``; ``--metadata '{"pairs_file": PATH}'`` for one's own) has
a masculine and a feminine translation of a GEST sample differing in one word. The reference filters
(``_slavic_mlm.ipynb``) are applied with the evaluated model's tokenizer: the differing words start with the same
letter; both sentences tokenise to the same length with exactly one differing token; later duplicates of a
(male, female) pair are dropped. Excluded pairs are still scored (so every document has requests) but counted under
``excluded_<filter>`` instead of entering the metrics.

Score = log10 P(male) − log10 P(female):

- causal (``gest_pairs_<lang>``, our adaptation): full-sentence log-likelihoods, each conditioned on the BOS token;
- masked (``gest_pairs_mlm_<lang>``, the reference): the differing token masked in each sentence, its log10
  probability in the masculine sentence minus that in the feminine one.

``--metadata '{"pairs_tokenizer_filter": false}'`` skips the tokenizer filter (for models without a loadable
tokenizer; not possible for the masked variant, which needs the differing token's position).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import datasets
from lm_eval.api.instance import Instance

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.core.errors import DataError
from lm_eval_stereo.core.masked_requests import MaskedLMTask
from lm_eval_stereo.core.model_tokenizer import load_tokenizer, require_tokenizer
from lm_eval_stereo.core.summary import instance_kwargs
from lm_eval_stereo.core.values import flag
from lm_eval_stereo.tasks.gest.data import annotate_pairs, language_name, load_pairs, pairs_path
from lm_eval_stereo.tasks.gest.metrics import PAIRS_METRICS, PAIRS_TEMPLATES
from lm_eval_stereo.tasks.gest.options import PAIRS_OPTIONS as OPTIONS
from lm_eval_stereo.tasks.gest.task import LN10, GestTask


def model_tokenizer(metadata: Mapping[str, Any]) -> Any:
    """The evaluated model's tokenizer (``tokenizer=`` or ``pretrained=`` model argument)."""
    require_tokenizer(
        metadata,
        "gest_pairs filters pairs",
        "pass one, or --metadata '{\"pairs_tokenizer_filter\": false}' (causal tasks only)",
    )
    return load_tokenizer(metadata)


def differing_token_span(tokenizer: Any, sentence: str, other: str) -> list[int]:
    """Character [start, end) of the first token of ``sentence`` that differs from the same position in ``other``."""
    mine = tokenizer(sentence, add_special_tokens=False, return_offsets_mapping=True)
    theirs = tokenizer(other, add_special_tokens=False)["input_ids"]
    for i, token in enumerate(mine["input_ids"]):
        if i >= len(theirs) or token != theirs[i]:
            return list(mine["offset_mapping"][i])
    raise ValueError(f"no token of {sentence!r} differs from {other!r}")


def custom_dataset(
    language: str,
    pairs_file: str | None = None,
    pairs_tokenizer_filter: Any = True,
    masked: bool = False,
    **metadata: Any,
) -> dict[str, datasets.Dataset]:
    """The pairs of ``language``, annotated with the reference filters (and, if ``masked``, the differing spans)."""
    language_name(language)
    path = pairs_path(pairs_file)
    use_tokenizer = masked or flag(pairs_tokenizer_filter, "pairs_tokenizer_filter")
    tokenizer = model_tokenizer(metadata) if use_tokenizer else None
    pairs = annotate_pairs(load_pairs(path), tokenizer.tokenize if tokenizer is not None else None)
    rows = [pair for pair in pairs if pair["language"] == language]
    if not rows:
        raise DataError(f"{path} has no pairs for language {language!r} (column 'language')")
    for row in rows:
        row["id"] = row["row"]
        row["male_span"] = row["female_span"] = [0, 0]
        if masked and not row["excluded"]:
            row["male_span"] = differing_token_span(tokenizer, row["male"], row["female"])
            row["female_span"] = differing_token_span(tokenizer, row["female"], row["male"])
    return {"test": datasets.Dataset.from_list(rows)}


class GestPairsTask(GestTask):
    """``gest_pairs_<lang>``: full-sentence log-likelihoods of the masculine and feminine sentences."""

    METRICS = PAIRS_METRICS
    TEMPLATE_NAMES = PAIRS_TEMPLATES
    OPTIONS = OPTIONS
    COMPARES_LOGLIKELIHOODS = True

    def construct_requests(self, doc: dict[str, Any], ctx: str, **kwargs: Any) -> list[Instance]:
        kwargs = instance_kwargs(kwargs)
        return [
            Instance(request_type="loglikelihood", doc=doc, arguments=("", doc[side]), idx=i, **kwargs)
            for i, side in enumerate(("male", "female"))
        ]

    def score(self, results: list[Any]) -> float:
        """log10 P(male) − log10 P(female) from the two responses."""
        return (float(results[0][0]) - float(results[1][0])) / LN10

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """The pair's score; a pair kept by the filters is a near tie (:mod:`lm_eval_stereo.core.near_ties`) where
        its two sentences' log-likelihoods lie within the backends' agreement (no alternatives: g_s is continuous)."""
        item = {
            "id": doc["id"],
            "stereotype": doc["stereotype"],
            "excluded": doc["excluded"],
            "scores": {"pair": self.score(results)},
        }
        if not self.counts_near_ties():
            return item
        male, female = (float(result[0]) for result in results)
        return item | {near_ties.NEAR_TIE: not doc["excluded"] and near_ties.near_tie(male, female)}


def mean_log10(log_probs: list[float]) -> float:
    """Mean log10 probability of a span's sub-tokens from their natural-log probabilities."""
    return sum(log_probs) / len(log_probs) / LN10


class GestPairsMaskedTask(GestPairsTask, MaskedLMTask):
    """``gest_pairs_mlm_<lang>``: the differing token masked (``masked_span`` mode "all"), as the reference; ``hf-mlm``
    is its one backend (no near ties counted)."""

    COMPARES_LOGLIKELIHOODS = False

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        return MaskedLMTask.construct_requests(self, doc, ctx, **kwargs)

    def doc_to_requests(self, doc: dict[str, Any]) -> list[tuple[str, tuple[Any, ...]]]:
        requests = []
        for side in ("male", "female"):
            sentence, (start, end) = doc[side], doc[f"{side}_span"]
            if start == end:  # an excluded pair (not in the metrics): its first word keeps the request well-formed
                start, end = 0, len(sentence.split()[0])
            requests.append(("masked_span", (sentence[:start], sentence[start:end], sentence[end:], "all")))
        return requests

    def score(self, results: list[Any]) -> float:
        return mean_log10(results[0]) - mean_log10(results[1])
