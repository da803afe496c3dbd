"""The German gender-bias suite (Gnadt et al., GeBNLP 2025): GerBBQ+, SexistStatements and the persona tasks, one
subfolder each; the benchmark's declaration (see README.md)."""

from lm_eval_stereo.core.figures import FigureSpec
from lm_eval_stereo.core.registry import Benchmark, same_for_every_task
from lm_eval_stereo.tasks.german_gender_bias import findings, options
from lm_eval_stereo.tasks.german_gender_bias.gerbbq import metrics as gerbbq
from lm_eval_stereo.tasks.german_gender_bias.personas import metrics as personas
from lm_eval_stereo.tasks.german_gender_bias.sexist_statements import metrics as sexist_statements
from lm_eval_stereo.tasks.german_gender_bias.sources import GERMAN_GENDER_BIAS

METRIC_SETS = (
    gerbbq.METRICS,
    sexist_statements.METRICS,
    personas.STEREO_METRICS,
    personas.NEUTRAL_METRICS,
    personas.GENDER_METRICS,
)
BENCHMARK = Benchmark(
    name="german_gender_bias",
    title="German gender bias",
    task_patterns=(
        "german_gender_bias",
        "german_persona_tasks",
        "gerbbq",
        "gerbbq_*",
        "sexist_statements_*",
        "stereo_persona_*",
        "neutral_persona_*",
        "gender_persona_*",
    ),
    options=(*options.GERBBQ_OPTIONS, *options.CLASSIFIED_PERSONA_OPTIONS, options.SEED_OPTION),
    metric_sets={metric_set.id: same_for_every_task(metric_set) for metric_set in METRIC_SETS},
    sources=(GERMAN_GENDER_BIAS,),
    figures=(
        FigureSpec(
            "dot_plot",
            "german.png",
            "German gender bias: GerBBQ+, SexistStatements, personas",
            tuple(metric_set.id for metric_set in METRIC_SETS),
            (
                "accuracy",
                "bias",
                "combined_sexism",
                "sexist_agreement",
                "antisexist_disagreement",
                "stereo_accuracy",
                "female_share",
                "grammar_agreement",
                "cooc_inter_mean",
            ),
        ),
    ),
    languages=("de",),
    demo_tasks={
        "tiny": (
            "gerbbq",
            "gerbbq_mc",
            "sexist_statements_de_once",
            "stereo_persona_de_once",
            "neutral_persona_de_once",
            "gender_persona_de",
        ),
        "scoring": ("gerbbq_mc",),
        "generation": ("gerbbq_amb", "sexist_statements_de_once"),
    },
    leaderboard={
        "stereo_leaderboard": ("gerbbq_mc",),
        "stereo_leaderboard_chat": ("gerbbq", "sexist_statements_de", "stereo_persona_de", "neutral_persona_de"),
    },
    findings=findings.findings,
)
