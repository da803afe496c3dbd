"""EuroGEST (Rowe et al., EMNLP 2025): the benchmark's declaration (see README.md)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark
from lm_eval_stereo.tasks.eurogest import data, figure, findings, metrics, options
from lm_eval_stereo.tasks.eurogest.sources import EUROGEST, EUROGEST_EVAL

BENCHMARK = Benchmark(
    name="eurogest",
    title="EuroGEST",
    task_patterns=("eurogest", "eurogest_*"),
    options=options.OPTIONS,
    metric_sets={"eurogest.scores": metrics.metric_set_factory},
    sources=(EUROGEST, EUROGEST_EVAL),
    figures=(
        FigureSpec(
            figure.heatmap_figures,
            "eurogest_{task}.png",
            "EuroGEST: masculine ratio per stereotype and language",
            ("eurogest.scores",),
        ),
    ),
    languages=tuple(data.LANGUAGES),
    demo_tasks={"tiny": ("eurogest",), "scoring_more": ("eurogest_de",)},
    leaderboard={"stereo_leaderboard": ("eurogest",)},
    findings=findings.findings,
)
