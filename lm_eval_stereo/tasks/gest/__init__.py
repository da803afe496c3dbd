"""GEST (Pikuliak et al. 2024): the benchmark's declaration (see README.md)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark, same_for_every_task
from lm_eval_stereo.tasks.gest import data, figure, findings, metrics, options
from lm_eval_stereo.tasks.gest.sources import GEST

BENCHMARK = Benchmark(
    name="gest",
    title="GEST",
    task_patterns=("gest", "gest_*"),
    options=options.PAIRS_OPTIONS,
    metric_sets={
        "gest.scores": metrics.scores_metric_set,
        "gest.pairs": same_for_every_task(metrics.PAIRS_METRICS),
        "gest.translation": same_for_every_task(metrics.MT_METRICS),
    },
    sources=(GEST,),
    figures=(
        FigureSpec(figure.stereotype_figures, "gest_{task}.png", "GEST ({task})", ("gest.scores", "gest.pairs")),
        FigureSpec(
            "dot_plot",
            "gest_mt.png",
            "GEST machine translation: stereotype and masculine rate",
            ("gest.translation",),
            ("f_s", "f_m"),
        ),
    ),
    languages=("en", *data.LANGUAGES),
    demo_tasks={"tiny": ("gest", "gest_mt"), "scoring": ("gest_en",), "generation": ("gest_mt_cs",)},
    leaderboard={"stereo_leaderboard": ("gest",), "stereo_leaderboard_chat": ("gest_mt",)},
    findings=findings.findings,
)
