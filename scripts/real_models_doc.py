"""Write docs/REAL_MODELS.md from the runs of scripts/run_real_models.py.

    python scripts/real_models_doc.py RUNS [RUNS...] [--timed RUNS...] --notes docs/real_models/intro.md

RUNS are the ``--out`` folders of ``scripts/run_real_models.py`` (each with its ``timings.json``) that the report
covers; ``--timed`` ones (e.g. the same tasks on fewer documents with ``hf`` and ``hf-prefix``) only add wall times.
The script copies every results file into ``docs/real_models/results/<run>/<model>/<backend>/`` with machine paths
made relative to the repository, and each run's ``timings.json`` beside them, so that each copied folder is a run
again (the samples stay behind: they are large); renders the report over the runs (with the samples, so the paired
comparisons are there) into the markdown and ``docs/real_models/report/`` (HTML and figures); and tabulates the wall
time of every task per model and backend. ``--notes`` is the hand-written part (set-up and what looks surprising),
placed before the generated tables.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def relative_paths(text: str) -> str:
    """Machine paths of a task YAML (``config_source``) as paths inside the repository."""
    return re.sub(r'"/[^"]*?/(lm_eval_stereo/tasks/[^"]+)"', r'"\1"', text)


def machine_free(text: str, runs: list[Path]) -> str:
    """``text`` with each run's folder written as its name (the report names every results file it read)."""
    for run in runs:
        text = text.replace(f"{run.resolve()}/", f"{run.name}/").replace(f"{run}/", f"{run.name}/")
    return text


def copy_results(runs: list[Path], target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    for run in runs:
        for results in sorted(run.rglob("results_*.json")):  # lm_eval's model folder may be hidden (".cache__...")
            model, backend = results.relative_to(run).parts[:2]
            destination = target / run.name / model / backend / results.name
            if destination.exists():
                raise SystemExit(f"two results files named {results.name} for {model}/{backend}")
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(relative_paths(results.read_text(encoding="utf-8")), encoding="utf-8")
        shutil.copy(run / "timings.json", target / run.name / "timings.json")


def timing_table(runs: list[Path]) -> list[str]:
    """Per task: wall time of each (run, model, backend), seconds, with the documents per task."""
    columns: dict[str, dict[str, dict]] = {}
    for run in runs:
        timings = json.loads((run / "timings.json").read_text(encoding="utf-8"))
        for key, timing in timings.items():
            model, backend, task = key.split("/")
            columns.setdefault(f"{model} {backend} (limit {timing['limit'] or 'all'})", {})[task] = timing
    tasks = sorted({task for column in columns.values() for task in column})
    names = sorted(columns)
    lines = ["| task | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for task in tasks:
        cells = [f"{columns[name][task]['seconds']:.0f}" if task in columns[name] else "" for name in names]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(t['seconds'] for t in columns[name].values()):.0f}**" for name in names]
    lines.append("| **total** | " + " | ".join(totals) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="runs reported (and timed)")
    parser.add_argument("--timed", nargs="*", type=Path, default=[], help="runs only timed (e.g. hf vs hf-prefix)")
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args(argv)
    from lm_eval_stereo.report import build_report, render_markdown
    from lm_eval_stereo.report.html import write_html

    folder = args.out / "real_models"
    copy_results([*args.runs, *args.timed], folder / "results")
    report = build_report([str(run) for run in args.runs])
    page = write_html(report, folder / "report")
    page.write_text(machine_free(page.read_text(encoding="utf-8"), args.runs), encoding="utf-8")
    markdown = machine_free(render_markdown(report), args.runs).replace(
        "# Bias report", "## The report over these runs", 1
    )
    markdown = re.sub(r"\n## ", "\n### ", markdown.split("\n", 1)[1])
    document = [
        args.notes.read_text(encoding="utf-8").rstrip(),
        "",
        "## Wall time per task (seconds, one `lm_eval` call each: start-up, model loading, scoring, aggregation)",
        "",
        *timing_table([*args.runs, *args.timed]),
        "",
        "## The report over these runs",
        "",
        "Generated by `lm-eval-stereo report` over the runs below (with their samples: the paired comparisons need",
        "them); the results files are in `docs/real_models/results/`, the HTML report with its figures in",
        "`docs/real_models/report/`.",
        markdown,
    ]
    (args.out / "REAL_MODELS.md").write_text("\n".join(document) + "\n", encoding="utf-8")
    print(args.out / "REAL_MODELS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
