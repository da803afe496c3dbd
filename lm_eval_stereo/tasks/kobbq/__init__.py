"""KoBBQ (Jin et al., TACL 2024): the Korean, culturally adapted Bias Benchmark for QA; the benchmark's declaration
(see README.md)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark, same_for_every_task
from lm_eval_stereo.tasks.kobbq import findings, metrics
from lm_eval_stereo.tasks.kobbq.sources import KOBBQ

METRIC_SETS = (metrics.CHOICE, metrics.GENERATION)
BENCHMARK = Benchmark(
    name="kobbq",
    title="KoBBQ",
    task_patterns=("kobbq", "kobbq_gen"),
    options=(),
    metric_sets={metric_set.id: same_for_every_task(metric_set) for metric_set in METRIC_SETS},
    sources=(KOBBQ,),
    figures=(
        FigureSpec(
            "dot_plot",
            "kobbq.png",
            "KoBBQ: accuracy and diff-bias in ambiguous and disambiguated contexts",
            tuple(metric_set.id for metric_set in METRIC_SETS),
            ("acc_amb", "acc_dis", "bias_amb", "bias_dis"),
        ),
    ),
    languages=("ko",),
    demo_tasks={"tiny": ("kobbq", "kobbq_gen"), "scoring": ("kobbq",), "generation": ("kobbq_gen",)},
    leaderboard={"stereo_leaderboard": ("kobbq",), "stereo_leaderboard_chat": ("kobbq_gen",)},
    findings=findings.findings,
)
