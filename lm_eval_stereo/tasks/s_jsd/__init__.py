"""Multilingual CrowS-Pairs gender with S_JSD (Steinborn et al. 2022): the benchmark's declaration (see README.md)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark, same_for_every_task
from lm_eval_stereo.tasks.s_jsd import data, findings, metrics, options
from lm_eval_stereo.tasks.s_jsd.sources import CROWS_PAIRS, S_JSD_MULTILINGUAL

BENCHMARK = Benchmark(
    name="s_jsd",
    title="S_JSD",
    task_patterns=("s_jsd", "s_jsd_*"),
    options=options.OPTIONS,
    metric_sets={
        "s_jsd.causal": same_for_every_task(metrics.metric_set("s_jsd", causal=True)),
        "s_jsd.masked": same_for_every_task(metrics.metric_set("s_jsd_mlm")),
    },
    sources=(S_JSD_MULTILINGUAL, CROWS_PAIRS),
    figures=(
        FigureSpec(
            "dot_plot", "s_jsd.png", "S_JSD per language", ("s_jsd.causal", "s_jsd.masked"), ("s_jsd", "b_s_jsd", "cps")
        ),
    ),
    languages=tuple(data.LANGUAGES),
    demo_tasks={"tiny": ("s_jsd_ext",), "scoring": ("s_jsd_en",)},
    leaderboard={"stereo_leaderboard": ("s_jsd",)},
    findings=findings.findings,
)
