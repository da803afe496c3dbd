"""A markdown table for a model's README: per model run, each bias headline with its value, 95% CI, ideal and n."""

from __future__ import annotations

from lm_eval_stereo.export.collect import RunExport
from lm_eval_stereo.export.headlines import Headline

HEADER = "| Benchmark | Task | Headline | Value [95% CI] | Ideal | n | Computed by |\n|---|---|---|---|---|---|---|"


def _number(value: float) -> str:
    return f"{value:.4g}"


def _value(headline: Headline) -> str:
    if headline.interval is None:
        return f"{_number(headline.value)} (no CI)"
    return f"{_number(headline.value)} [{_number(headline.interval.low)}, {_number(headline.interval.high)}]"


def _ideal(headline: Headline) -> str:
    if headline.ideal is not None:
        return _number(headline.ideal)
    return "lower is better" if headline.lower_is_better else "higher is better"


def table(export: RunExport, name: str) -> str:
    """The model-card table of one run of the model ``name``: its plugin headlines (distances to the ideal and
    lm_eval's tasks left out)."""
    run = export.run
    rows = [
        f"| {h.benchmark.title} | {h.task} | {h.metric} | {_value(h)} | {_ideal(h)} | {h.n if h.n is not None else '?'} "
        f"| {h.provenance.short() if h.provenance else '?'} |"
        for h in export.headlines
        if h.benchmark is not None and h.distance_of is None
    ]
    limit = f", --limit {run.limit} documents per task" if run.limit is not None else ""
    title = f"**{name}**: lm-eval-stereo bias benchmarks ({run.path.name}{limit})"
    return "\n".join([title, "", HEADER, *rows])
