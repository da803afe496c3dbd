"""The upstream source of RuBia (vergrig/RuBia-Dataset): the pairs, the authors' per-item perplexities and their
published scores."""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

RUBIA = Source(
    name="rubia",
    repo="vergrig/RuBia-Dataset",
    commit="eaab66eae197c2bc22152eb051f8b526dcb7cef8",
    licence="CC BY 4.0",
    citation="Grigoreva, Ivanova, Alimova, Artemova (2024). RuBia: A Russian Language Bias Detection Dataset. "
    "LREC-COLING 2024.",
    files=parse_pins(
        """
    a2daa5f1c5745214ca377b8971938e6be7e6f409b443a881670f9566a456c373     401805  rubia.tsv
    786f974a3db7ecc22d5381930fd0d562c4a43aaba007921ab5060fee4578bca6    1456517  scored_data.tsv
    b0f0b4af2f9d007c45f6f3b366c4bd050ff525959e64bc6486f8ca25cca7868e       2084  Analysis/statistics.tsv
"""
    ),
)
