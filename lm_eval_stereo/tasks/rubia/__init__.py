"""RuBia (Grigoreva et al., LREC-COLING 2024): the benchmark's declaration (see README.md)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark
from lm_eval_stereo.tasks.rubia import findings, metrics
from lm_eval_stereo.tasks.rubia.sources import RUBIA

BENCHMARK = Benchmark(
    name="rubia",
    title="RuBia",
    task_patterns=("rubia", "rubia_*"),
    options=(),
    metric_sets={"rubia.shares": metrics.metric_set_factory},
    sources=(RUBIA,),
    figures=(
        FigureSpec(
            "dot_plot",
            "rubia.png",
            "RuBia: share of biased pairs per domain (ideal 0.5)",
            ("rubia.shares",),
            ("biased",),
        ),
    ),
    languages=("ru",),
    demo_tasks={"tiny": ("rubia",)},
    leaderboard={"stereo_leaderboard": ("rubia",)},
    findings=findings.findings,
)
