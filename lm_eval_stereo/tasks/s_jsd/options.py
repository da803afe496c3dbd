"""The options of the S_JSD tasks (``--metadata``): declared here once, read by the tasks and the registry."""

from __future__ import annotations

from lm_eval_stereo.core.registry import Option
from lm_eval_stereo.core.values import flag

OPTIONS = (
    Option("perturb", False, flag, "drop the last character of both sentences (the paper's Table 3 'perturbed')"),
    Option("jsd_limit", False, flag, "use the limit p*log2(p) = 0 at p = 0 (the reference gives NaN there)"),
)
