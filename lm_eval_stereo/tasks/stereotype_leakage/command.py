"""``lm-eval-stereo leakage OUT_MULTI [--mono OUT_MONO]``: the paper's Eq. 1 fitted on the results of whole runs.

Reads the logged samples (``--log_samples``) of every stereotype-leakage regression task below the given ``lm_eval
--output_path`` folders, per task from the newest run, picked as the report picks runs (by lm_eval's ``date``, else the
file's time: :mod:`lm_eval_stereo.tasks.stereotype_leakage.run_tables`), and fits each task's table
(:mod:`lm_eval_stereo.tasks.stereotype_leakage.across_runs`), with the monolingual model's table of the same target
language from ``--mono`` folders as the covariate when given. Prints the coefficients, p-values and significant edges
(source -> target: alpha > 0, p < 0.05, source != target), writes them as JSON and draws the leakage graph as a PNG
(matplotlib, imported only then), each file whole or not at all (:mod:`lm_eval_stereo.core.whole_files`: one line
naming the file that cannot be written). The benchmark declares the command (``Benchmark.commands``); the console script
finds it there.
"""

from __future__ import annotations

import argparse
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lm_eval_stereo.cli_args import Parser, input_folder, output_file
from lm_eval_stereo.core.extras import MissingExtraError
from lm_eval_stereo.core.whole_files import WriteError, write_whole
from lm_eval_stereo.tasks.stereotype_leakage import metrics
from lm_eval_stereo.tasks.stereotype_leakage.across_runs import fit_runs
from lm_eval_stereo.tasks.stereotype_leakage.data import LANGUAGES
from lm_eval_stereo.tasks.stereotype_leakage.run_tables import LeakageInputError, read_tables


def render(report: dict[str, Any]) -> str:
    """A plain-text table: one row per task, alpha (p) per source, beta of the mono term, significant edges."""
    header = ["task", *(f"H_{LANGUAGES[lang][1]} α (p)" for lang in LANGUAGES), "mono β (p)", "n_leaks", "edges"]
    rows = [header]
    for task, fit in report["fits"].items():
        cells = [f"{_fmt(fit['coef'][lang])} ({_fmt(fit['p'][lang])})" for lang in LANGUAGES]
        mono = f"{_fmt(fit['mono_coef'])} ({_fmt(fit['mono_p'])})" if fit["mono_task"] else "-"
        edges = ", ".join(f"{LANGUAGES[s][1]}→{LANGUAGES[fit['target']][1]}" for s in fit["leaks"]) or "-"
        rows.append([task, *cells, mono, str(fit["n_leaks"]), edges])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)


def _fmt(value: float | None) -> str:
    return "nan" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def draw(report: dict[str, Any], path: Path) -> None:
    """The leakage graph(s) as the PNG ``path``: one panel per task family, languages on a square, significant edges
    with alpha."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise LeakageInputError(
            "drawing the graph needs matplotlib (pip install matplotlib), or pass --no-png"
        ) from None
    families = sorted({fit["family"] for fit in report["fits"].values()})
    position = {"en": (0.0, 1.0), "ru": (1.0, 1.0), "zh": (1.0, 0.0), "hi": (0.0, 0.0)}
    figure, axes = plt.subplots(1, len(families), figsize=(4.2 * len(families), 4.2), squeeze=False)
    for ax, family in zip(axes[0], families):
        for lang, (x, y) in position.items():
            ax.text(x, y, LANGUAGES[lang][1], ha="center", va="center", fontsize=13,
                    bbox={"boxstyle": "circle", "facecolor": "white"})  # fmt: skip
        for edge in (e for e in report["edges"] if e["family"] == family):
            (x0, y0), (x1, y1) = position[edge["source"]], position[edge["target"]]
            arrow = {"arrowstyle": "-|>", "shrinkA": 18, "shrinkB": 18, "connectionstyle": "arc3,rad=0.15"}
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0), arrowprops=arrow)
            dx, dy = x1 - x0, y1 - y0
            side = 0.12 / math.hypot(dx, dy)  # beside the arc, so that opposite edges keep apart
            label = f"{edge['coef']:.2g}"
            ax.text((x0 + x1) / 2 + side * dy, (y0 + y1) / 2 - side * dx, label, fontsize=9, ha="center", va="center")
        ax.set_title(family)
        ax.set_xlim(-0.3, 1.3)
        ax.set_ylim(-0.3, 1.3)
        ax.axis("off")
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=120)
    plt.close(figure)
    write_whole(path, image.getvalue(), within=path.parent)


def main(argv: Sequence[str]) -> int:
    parser = Parser(prog="lm-eval-stereo leakage", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "multi",
        nargs="+",
        type=input_folder,
        metavar="OUT_MULTI",
        help="lm_eval --output_path folder(s) of the multilingual model's runs",
    )
    parser.add_argument(
        "--mono",
        action="append",
        type=input_folder,
        default=[],
        metavar="OUT_MONO",
        help="folder(s) of monolingual-model runs (covariate)",
    )
    parser.add_argument("--unrated", choices=metrics.UNRATED_RULES, default="zero")
    parser.add_argument("--scale", choices=("reference", "none"), default="reference")
    parser.add_argument("--json", type=output_file, default="leakage.json", help="where to write the fits (JSON)")
    parser.add_argument("--png", type=Path, default=Path("leakage.png"), help="where to draw the leakage graph")
    parser.add_argument("--no-png", action="store_true", help="do not draw the graph")
    args = parser.parse_args(argv)
    try:
        metrics.REGRESSION.require("lm-eval-stereo leakage")
    except MissingExtraError as exc:
        parser.exit(2, f"lm-eval-stereo leakage: error: {exc}\n")
    if not args.no_png:
        try:
            output_file(str(args.png))
        except argparse.ArgumentTypeError as exc:
            parser.fail("--png", str(exc))
    try:
        tables = read_tables(*args.multi)
        mono = read_tables(*args.mono) if args.mono else []
        report = fit_runs(tables, mono, unrated=args.unrated, scale=args.scale)
        print(render(report))
        write_whole(args.json, json.dumps(report, indent=1, ensure_ascii=False), within=args.json.parent)
        print(f"\nfits written to {args.json}")
        if not args.no_png:
            draw(report, args.png)
            print(f"graph drawn in {args.png}")
    except (LeakageInputError, WriteError) as exc:
        parser.exit(2, f"lm-eval-stereo leakage: error: {exc}\n")
    return 0
