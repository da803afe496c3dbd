"""``lm-eval-stereo leakage OUT_MULTI [--mono OUT_MONO]``: the paper's Eq. 1 fitted on the results of whole runs.

Reads the logged samples (``--log_samples``) of every ``stereotype_leakage*`` task below the given ``lm_eval
--output_path`` folders (the newest file per task), rebuilds each task's 32 x 30 association table (mean over
templates) and fits, per task (= model family and target language)::

    M_tgt(g, t) = sum_L alpha_L H_L(g, t) [+ beta M_mono,tgt(g, t)] + u_t + eps        (mixedlm, groups=trait, REML)

with the monolingual model's table of the same target language from ``--mono`` folders as the covariate when given.
Prints the coefficients, p-values and significant edges (source -> target: alpha > 0, p < 0.05, source != target),
writes them as JSON and draws the leakage graph as a PNG (matplotlib, imported only then).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from lm_eval_stereo.cli_args import Parser, input_folder, output_file
from lm_eval_stereo.tasks.stereotype_leakage import metrics
from lm_eval_stereo.tasks.stereotype_leakage.data import LANGUAGES
from lm_eval_stereo.tasks.stereotype_leakage.human import human_associations

PREFIX = "stereotype_leakage"


class LeakageInputError(ValueError):
    """The given folders hold no usable stereotype-leakage results."""


@dataclass(frozen=True)
class RunTable:
    """One task's association table: its name, family (task name without the language), target and score kind."""

    task: str
    family: str
    target: str
    score: str
    table: pd.DataFrame


def _task_of(sample_file: Path) -> str:
    return sample_file.name[len("samples_") :].rsplit("_", 1)[0]


def read_tables(folder: str | Path) -> list[RunTable]:
    """The association tables of the ``stereotype_leakage*`` tasks logged below ``folder``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise LeakageInputError(f"{folder} is not a folder (give an lm_eval --output_path)")
    newest: dict[str, Path] = {}
    for path in sorted(folder.rglob("samples_*.jsonl"), key=lambda p: p.stat().st_mtime):
        if _task_of(path).startswith(PREFIX):
            newest[_task_of(path)] = path
    if not newest:
        has_results = any(
            task.startswith(PREFIX)
            for path in folder.rglob("results_*.json")
            for task in (_read_json(path).get("results") or {})
        )
        hint = "; rerun lm_eval with --log_samples" if has_results else ""
        raise LeakageInputError(f"no logged samples of stereotype_leakage* tasks below {folder}{hint}")
    tables = []
    for task, path in sorted(newest.items()):
        items = _logged_leaks(path)
        cells = [cell for item in items for cell in metrics.item_cells(item)]
        family, _, lang = task.rpartition("_")
        score = _score_of(path.parent, task)
        tables.append(RunTable(task, family, lang, score, metrics.association_table(cells)))
    return tables


def _read_json(path: Path) -> dict[str, Any]:
    """A results file as a dict; :class:`LeakageInputError` naming it when it cannot be read or is no JSON object."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LeakageInputError(f"{path}: not a readable lm_eval results file ({exc})") from None
    if not isinstance(data, dict):
        raise LeakageInputError(f"{path}: not an lm_eval results file (no JSON object)")
    return data


def _logged_leaks(path: Path) -> list[Any]:
    """The ``n_leaks`` field of every logged sample; :class:`LeakageInputError` naming the file and line."""
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LeakageInputError(f"{path}: not a readable samples file ({exc})") from None
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line)["n_leaks"])
        except (json.JSONDecodeError, TypeError, KeyError) as exc:
            problem = "no 'n_leaks' field" if isinstance(exc, (KeyError, TypeError)) else f"invalid JSON ({exc.msg})"
            raise LeakageInputError(f"{path}, line {number}: {problem}") from None
    return items


def _score_of(folder: Path, task: str) -> str:
    """The task's ``score`` metric from the newest results file beside its samples ("" if absent)."""
    for path in sorted(folder.glob("results_*.json"), key=lambda p: p.stat().st_mtime, reverse=True):
        value = ((_read_json(path).get("results") or {}).get(task) or {}).get("score,none")
        if value is not None:
            return str(value)
    return ""


def fit_runs(
    tables: Sequence[RunTable], mono: Sequence[RunTable] = (), *, unrated: str = "zero", scale: str = "reference"
) -> dict[str, Any]:
    """JSON-ready fits of every table (with the mono table of its target as covariate when there is one)."""
    humans = {lang: human_associations(lang) for lang in LANGUAGES}
    mono_by_target = {m.target: m for m in mono}
    fits: dict[str, Any] = {}
    edges = []
    for run in tables:
        factor = metrics.REFERENCE_SCALE.get(run.score, 1.0) if scale == "reference" else 1.0
        covariate = mono_by_target.get(run.target)
        mono_table = None
        if covariate is not None:
            mono_factor = metrics.REFERENCE_SCALE.get(covariate.score, 1.0) if scale == "reference" else 1.0
            mono_table = covariate.table * mono_factor
        frame = metrics.leakage_frame(run.table, humans, scale=factor, unrated=unrated, mono=mono_table)
        fit = metrics.fit_leakage(frame, run.target)
        fits[run.task] = {
            "family": run.family,
            "target": run.target,
            "score": run.score,
            "mono_task": covariate.task if covariate is not None else None,
            "coef": fit.coef,
            "p": fit.p,
            "mono_coef": _number(fit.mono_coef),
            "mono_p": _number(fit.mono_p),
            "own_coef": _number(fit.own_coef),
            "n_leaks": fit.n_leaks,
            "leaks": fit.leaks(),
            "cells": fit.cells,
            "converged": fit.converged,
            "notes": fit.notes,
        }
        edges += [
            {"family": run.family, "source": src, "target": run.target, "coef": fit.coef[src], "p": fit.p[src]}
            for src in fit.leaks()
        ]
    return {"unrated": unrated, "scale": scale, "fits": fits, "edges": edges}


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


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
    """The leakage graph(s): one panel per task family, languages on a square, significant edges with alpha."""
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
    figure.savefig(path, dpi=120)
    plt.close(figure)


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
    if not args.no_png:
        try:
            output_file(str(args.png))
        except argparse.ArgumentTypeError as exc:
            parser.fail("--png", str(exc))
    try:
        tables = [t for folder in args.multi for t in read_tables(folder)]
        mono = [t for folder in args.mono for t in read_tables(folder)]
        report = fit_runs(tables, mono, unrated=args.unrated, scale=args.scale)
        print(render(report))
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"\nfits written to {args.json}")
        if not args.no_png:
            draw(report, args.png)
            print(f"graph drawn in {args.png}")
    except LeakageInputError as exc:
        parser.exit(2, f"lm-eval-stereo leakage: error: {exc}\n")
    return 0
