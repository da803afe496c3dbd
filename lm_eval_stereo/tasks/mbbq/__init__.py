"""MBBQ (Neplenbroek, Bisazza, Fernández, COLM 2024): BBQ in English, Spanish, Dutch and Turkish, with its control
set; the benchmark's declaration (see README.md)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark, same_for_every_task
from lm_eval_stereo.tasks.mbbq import data, figure, findings, metrics, options
from lm_eval_stereo.tasks.mbbq.sources import MBBQ

BENCHMARK = Benchmark(
    name="mbbq",
    title="MBBQ",
    task_patterns=("mbbq", "mbbq_*"),
    options=options.OPTIONS,
    metric_sets={
        metric_set.id: same_for_every_task(metric_set) for metric_set in (metrics.BIAS_METRICS, metrics.CONTROL_METRICS)
    },
    sources=(MBBQ,),
    figures=(
        FigureSpec(
            figure.bias_vs_control_figure,
            "mbbq.png",
            "MBBQ: bias against control-set accuracy per language",
            (metrics.BIAS_METRICS.id, metrics.CONTROL_METRICS.id),
        ),
    ),
    languages=tuple(data.LANGUAGES),
    demo_tasks={"tiny": ("mbbq", "mbbq_control"), "scoring": ("mbbq_en", "mbbq_control_en")},
    leaderboard={
        "stereo_leaderboard": ("mbbq", "mbbq_control"),
        "stereo_leaderboard_chat": ("mbbq_gen", "mbbq_gen_control"),
    },
    findings=findings.findings,
)
