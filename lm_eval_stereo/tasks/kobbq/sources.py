"""The upstream source of KoBBQ (Jin et al., TACL 2024): naver-ai/KoBBQ at its pinned commit (MIT licence).

The tasks read ``data/KoBBQ_test_samples.tsv`` (the 2,280 samples the paper reports) and
``evaluation/0_evaluation_prompts.tsv`` (the five evaluation prompts); the licence is pinned beside them. The full
76,048-sample file (``data/KoBBQ_all_samples.tsv``, the paper's template-averaged "all" evaluation) is not read.
"""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

KOBBQ = Source(
    name="kobbq",
    repo="naver-ai/KoBBQ",
    commit="0dd165aeaaacd1bd46c63513a9b2e9875eb6dce7",
    licence="MIT",
    citation="Jin, Kim, Lee, Yoo, Oh, Lee (2024). KoBBQ: Korean Bias Benchmark for Question Answering. TACL.",
    files=parse_pins(
        """
    a09774bc173cad4312010ebabf3bac57ad88c1ed99fde5c204d61f40dec48e64       1078  LICENSE
    6eacb1c0ff995c74b26183d368c500193454b7bf96a2a0f9462641e57972aab7    1067881  data/KoBBQ_test_samples.tsv
    1757448babb55bfc01dce7233f64c2188ad06843646f75b6c590bff633d88bca       2167  evaluation/0_evaluation_prompts.tsv
"""
    ),
)
