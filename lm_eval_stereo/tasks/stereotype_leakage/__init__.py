"""Cross-lingual stereotype leakage (Cao, Sotnikova et al. 2025): the benchmark's declaration (see README.md)."""

from collections.abc import Sequence

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark
from lm_eval_stereo.tasks.stereotype_leakage import data, figure, metric_sets, options
from lm_eval_stereo.tasks.stereotype_leakage.sources import STEREOTYPE_LEAKAGE


def leakage_command(argv: Sequence[str]) -> int:
    """fit the leakage regression (Eq. 1) on whole runs: leakage OUT_MULTI [--mono OUT_MONO]

    ``lm-eval-stereo leakage`` (:mod:`.command`, imported only when it runs); the first line is its line in
    ``lm-eval-stereo --help``."""
    from lm_eval_stereo.tasks.stereotype_leakage.command import main

    return main(argv)


BENCHMARK = Benchmark(
    name="stereotype_leakage",
    title="Stereotype leakage",
    task_patterns=("stereotype_leakage", "stereotype_leakage_*"),
    options=(*options.CAUSAL_OPTIONS, *options.MASKED_OPTIONS, *options.GENERATION_OPTIONS),
    metric_sets={
        "stereotype_leakage.regression": metric_sets.regression,
        "stereotype_leakage.generation": metric_sets.generation,
    },
    sources=(STEREOTYPE_LEAKAGE,),
    figures=(
        FigureSpec(
            figure.leakage_figure,
            "leakage.png",
            "Stereotype leakage",
            ("stereotype_leakage.regression", "stereotype_leakage.generation"),
        ),
    ),
    languages=tuple(data.LANGUAGES),
    report_ideals={"leak_coef_*": 0.0},
    commands={"leakage": leakage_command},
    demo_tasks={
        "tiny": ("stereotype_leakage", "stereotype_leakage_gen_en"),
        "scoring": ("stereotype_leakage_en",),
        "generation": ("stereotype_leakage_gen_en",),
    },
    leaderboard={"stereo_leaderboard": ("stereotype_leakage",), "stereo_leaderboard_chat": ("stereotype_leakage_gen",)},
)
