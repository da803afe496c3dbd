"""Multilingual StereoSet (Öztürk et al. 2023): the benchmark's declaration (see README.md)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark, same_for_every_task
from lm_eval_stereo.tasks.stereoset_multi import data, figure, findings, metrics, options
from lm_eval_stereo.tasks.stereoset_multi.sources import STEREOSET_MULTI

BENCHMARK = Benchmark(
    name="stereoset_multi",
    title="StereoSet",
    task_patterns=("stereoset_multi", "stereoset_multi_*"),
    options=(*options.CAUSAL_OPTIONS, *options.MASKED_OPTIONS),
    metric_sets={"stereoset_multi.scores": same_for_every_task(metrics.METRICS)},
    sources=(STEREOSET_MULTI,),
    figures=(FigureSpec(figure.lms_ss_figure, "stereoset.png", "StereoSet: LMS vs SS", ("stereoset_multi.scores",)),),
    languages=data.LANGUAGES,
    demo_tasks={"tiny": ("stereoset_multi",), "scoring": ("stereoset_multi",)},
    leaderboard={"stereo_leaderboard": ("stereoset_multi",)},
    findings=findings.findings,
)
