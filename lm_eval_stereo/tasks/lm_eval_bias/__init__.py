"""lm_eval's own bias tasks (BBQ, EsBBQ, CaBBQ, CrowS-Pairs): their metrics declared, with ideals, directions,
intervals and item keys, and no data, prompt or scoring of the plugin's (see README.md). lm_eval runs them as it
always does; from a run logged with ``--log_samples`` the report and the export recompute each figure from the logged
per-document values with lm_eval's own aggregation functions and add seeded bootstrap intervals, verdicts and paired
tests (models; EsBBQ against CaBBQ on the rows both share)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark, LmEvalTasks
from lm_eval_stereo.tasks.lm_eval_bias import findings, logged, metrics
from lm_eval_stereo.tasks.lm_eval_bias.lm_eval_functions import KNOWN_VERSION
from lm_eval_stereo.tasks.lm_eval_bias.sources import BBQ, ESBBQ_CABBQ

BENCHMARK = Benchmark(
    name="lm_eval_bias",
    title="lm_eval's own bias tasks",
    task_patterns=(),  # lm_eval's tasks are found through lm_eval_tasks, never guessed by the legacy reader
    options=(),
    metric_sets={
        "lm_eval_bias.esbbq_cabbq": metrics.esbbq_cabbq,
        "lm_eval_bias.bbq": metrics.bbq,
        "lm_eval_bias.crows_pairs": metrics.crows_pairs,
    },
    sources=(ESBBQ_CABBQ, BBQ),
    figures=(
        FigureSpec(
            "dot_plot",
            "lm_eval_esbbq_cabbq.png",
            "EsBBQ and CaBBQ (lm_eval's tasks): accuracy and bias score per context",
            ("lm_eval_bias.esbbq_cabbq",),
            tuple(metric.name for metric in metrics.ESBBQ_CABBQ_METRICS),
        ),
        FigureSpec(
            "dot_plot",
            "lm_eval_crows_pairs.png",
            "CrowS-Pairs (lm_eval's tasks): share of pairs preferring the stereotype",
            ("lm_eval_bias.crows_pairs",),
            ("pct_stereotype",),
        ),
    ),
    languages=("en", "es", "ca", "fr"),
    lm_eval_tasks=LmEvalTasks(
        metric_sets={
            "esbbq": "lm_eval_bias.esbbq_cabbq",
            "esbbq_*": "lm_eval_bias.esbbq_cabbq",
            "cabbq": "lm_eval_bias.esbbq_cabbq",
            "cabbq_*": "lm_eval_bias.esbbq_cabbq",
            "bbq": "lm_eval_bias.bbq",
            "bbq_ambig": "lm_eval_bias.bbq",
            "bbq_disambig": "lm_eval_bias.bbq",
            "bbq_generate": "lm_eval_bias.bbq",
            "bbq_generate_ambig": "lm_eval_bias.bbq",
            "bbq_generate_disambig": "lm_eval_bias.bbq",
            "crows_pairs_english*": "lm_eval_bias.crows_pairs",
            "crows_pairs_french*": "lm_eval_bias.crows_pairs",
        },
        items=logged.items,
        language=logged.language,
        version=KNOWN_VERSION,
    ),
    findings=findings.findings,
)
