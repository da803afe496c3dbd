"""Write docs/REAL_MODELS.md (an index) and one page per benchmark, docs/real_models/<benchmark>.md, from the
committed results of scripts/run_real_models.py.

    python scripts/real_models_doc.py [RUNS...] [--timed RUNS...]

The page is a function of what the repository holds: the results files in ``docs/real_models/results/<run>/`` (each
folder a run of ``scripts/run_real_models.py`` with its ``timings.json``), the hand-written
``docs/real_models/intro.md`` (set-up, no numbers that compare or interpret) and the paired tables of
``docs/real_models/paired_first_runs.md`` (computed while the samples were there; the samples are not committed).
Every number and every sentence that compares or interprets numbers is generated here: a headline against its ideal
from the report's verdict (its 95% CI), a model against a model only with the paired test's Holm-adjusted p, so that
text and data cannot drift apart (``tests/real_models/test_real_models_doc.py`` regenerates the page and compares).

RUNS (``--out`` folders of ``scripts/run_real_models.py``) are first copied into ``docs/real_models/results/`` (that
folder is rewritten; machine paths of the task YAMLs made relative, the samples left behind: they are large);
``option_loglikelihoods.json`` files (``scripts/option_loglikelihoods.py``) beside the results come too;
``--timed`` ones (e.g. the same tasks on fewer documents with ``hf`` and ``hf-prefix``) only add wall times and are
recorded in ``docs/real_models/results/timed.txt``. Without RUNS the page is rebuilt from the committed results.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from option_loglikelihoods import OUTPUT as OPTIONS_FILE

from lm_eval_stereo.core.findings import language_code

if TYPE_CHECKING:
    from lm_eval_stereo.report.model import Cell, Report

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
RESULTS = DOCS / "real_models" / "results"
#: where the results files are shown on the page: their place in the repository
SHOWN = "docs/real_models/results/"
#: runs that only add wall times (not reported), unless ``timed.txt`` in the results says otherwise
TIMED = ("real-runs-sample",)
#: the models of the first runs' paired tables (A, B), as paired_first_runs.md says
FIRST_RUNS = ("gemma3", "smollm2")
#: names in prose; the report names a local model folder by its folder name
NAMES = {"gemma3": "Gemma 3 270M", "smollm2": "SmolLM2-135M-Instruct"}
ALPHA = 0.05


def relative_paths(text: str) -> str:
    """Machine paths of a task YAML (``config_source``) as paths inside the repository."""
    return re.sub(r'"/[^"]*?/(lm_eval_stereo/tasks/[^"]+)"', r'"\1"', text)


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
            if (options := results.parent / OPTIONS_FILE).exists():  # per-option log-likelihoods, no upstream text
                shutil.copy(options, destination.parent / OPTIONS_FILE)
        shutil.copy(run / "timings.json", target / run.name / "timings.json")


def run_folders(results: Path) -> tuple[list[Path], list[Path]]:
    """(reported runs, only-timed runs) among the folders of ``results``."""
    listed = results / "timed.txt"
    timed = set(listed.read_text(encoding="utf-8").split()) if listed.exists() else set(TIMED)
    runs = sorted(path for path in results.iterdir() if (path / "timings.json").exists())
    return [run for run in runs if run.name not in timed], [run for run in runs if run.name in timed]


def timing_columns(runs: list[Path]) -> dict[str, dict[str, dict]]:
    columns: dict[str, dict[str, dict]] = {}
    for run in runs:
        timings = json.loads((run / "timings.json").read_text(encoding="utf-8"))
        for key, timing in timings.items():
            model, backend, task = key.split("/")
            columns.setdefault(f"{model} {backend} (limit {timing['limit'] or 'all'})", {})[task] = timing
    return columns


def timing_table(columns: dict[str, dict[str, dict]]) -> list[str]:
    """Per task: wall time of each (run, model, backend), seconds, with the documents per task."""
    tasks = sorted({task for column in columns.values() for task in column})
    names = sorted(columns)
    lines = ["| task | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for task in tasks:
        cells = [f"{columns[name][task]['seconds']:.0f}" if task in columns[name] else "" for name in names]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(t['seconds'] for t in columns[name].values()):.0f}**" for name in names]
    lines.append("| **total** | " + " | ".join(totals) + " |")
    return lines


def backend_timing(columns: dict[str, dict[str, dict]], models: list[str]) -> str:
    """``hf`` against ``hf-prefix`` on the tasks both timed with the same limit, per model."""
    parts = []
    for model in models:
        pairs = [
            (name, name.replace(f"{model} hf ", f"{model} hf-prefix ", 1))
            for name in sorted(columns)
            if name.startswith(f"{model} hf (")
        ]
        for hf, prefix in pairs:
            shared = sorted(set(columns[hf]) & set(columns.get(prefix, {})))
            if not shared:
                continue
            slow = sum(columns[hf][task]["seconds"] for task in shared)
            fast = sum(columns[prefix][task]["seconds"] for task in shared)
            limit = hf.rsplit("(", 1)[1].rstrip(")")
            parts.append(
                f"{NAMES.get(model, model)}: {slow:.0f} s with `hf` against {fast:.0f} s with `hf-prefix` "
                f"({slow / fast:.1f}×) on the same {len(shared)} tasks, {limit}"
            )
    if not parts:
        return ""
    return (
        "Wall time, `hf` against `hf-prefix` (sums of the table below; one machine shared with other work, so upper "
        "bounds, not a benchmark): " + "; ".join(parts) + "."
    )


@dataclass(frozen=True)
class Paired:
    """One row of a paired table of paired_first_runs.md, as written there."""

    task: str
    metric: str
    difference: str
    p: str
    p_holm: str
    significant: bool

    @property
    def holm(self) -> float:
        return 0.0 if self.p_holm.startswith("<") else float(self.p_holm)


def first_runs_tables(path: Path) -> tuple[dict[tuple[str, str], Paired], int, int]:
    """The model-vs-model rows of paired_first_runs.md by (task, metric); with the number of rows of its language
    tables and how many of those are significant after Holm."""
    models: dict[tuple[str, str], Paired] = {}
    languages = significant = 0
    section = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or cells[0] in {"task", "model"} or set(cells[0]) <= {"-"}:
            continue
        if section.startswith("## Model vs model"):
            task, metric, _, difference, p, p_holm = cells[:6]
            models[(task, metric)] = Paired(task, metric, difference, p, p_holm, difference.endswith("*"))
        elif section.startswith("## Language vs language"):
            languages += 1
            significant += cells[4].endswith("*")
    return models, languages, significant


def _name(label: str) -> str:
    return NAMES.get(label, label)


@dataclass(frozen=True)
class PageKit:
    """What these pages lend a benchmark's findings (:class:`~lm_eval_stereo.core.findings.FindingsKit`): the report
    over the committed runs, the first runs' paired tables by (task, metric), the models' names in prose."""

    report: Report
    paired: dict[tuple[str, str], Paired]

    @property
    def tasks(self) -> list[str]:
        return self.report.tasks

    @property
    def labels(self) -> list[str]:
        return [row.label for row in self.report.rows]

    def cell(self, task: str, label: str) -> Cell | None:
        return next((cell for cell in self.report.task_cells(task) if cell.row.label == label), None)

    def estimate(self, cell: Cell, name: str) -> str:
        from lm_eval_stereo.report.formatting import format_estimate

        return format_estimate(cell.estimate(name), None, stderr=False)

    def describe(self, cell: Cell, name: str) -> str:
        from lm_eval_stereo.report.verdicts import describe

        return describe(cell, name)

    def against_chance(self, cell: Cell, name: str, chance: float) -> Literal["above", "below", "consistent"]:
        estimate = cell.estimate(name)
        if estimate.low is not None and estimate.low > chance:
            return "above"
        if estimate.high is not None and estimate.high < chance:
            return "below"
        return "consistent"

    def compared(self, task: str, metric: str, what: str, higher: str) -> str | None:
        """The first runs' models (:data:`FIRST_RUNS`) compared (:func:`_paired_sentence`), where both ran ``task``."""
        a, b = FIRST_RUNS
        if self.cell(task, a) is None or self.cell(task, b) is None:
            return None
        return _paired_sentence(self.paired.get((task, metric)), a, b, what, higher)

    def name(self, label: str) -> str:
        return _name(label)

    def count(self, value: float) -> str:
        return f"{int(value):,}"

    def results_file(self, cell: Cell) -> Path:
        return Path(cell.run.path)


def _paired_sentence(row: Paired | None, a: str, b: str, what: str, higher: str) -> str:
    """A model comparison from its paired test: a difference only where Holm's p < 0.05."""
    if row is None:
        return f"{what}: no paired comparison (the samples of these runs were not kept)"
    a_name, b_name = _name(a), _name(b)
    stats = f"{a_name} − {b_name} {row.difference.rstrip(' *')}, p {row.p}, p_holm {row.p_holm}"
    if row.holm < ALPHA:
        sign = row.difference.lstrip()[0]
        first, second = (a_name, b_name) if sign == "+" else (b_name, a_name)
        return f"{what}: {higher} for {first} than for {second} ({stats})"
    return f"{what}: no significant difference between the models after Holm ({stats})"


def count_findings(kit: PageKit) -> list[str]:
    """Counts the results record (no statistic): boundary mismatches, leaks, undetermined outputs."""
    lines = []
    boundaries = []
    for task in kit.tasks:
        for label in kit.labels:
            cell = kit.cell(task, label)
            if cell is not None and cell.values.get("boundary_mismatches"):
                boundaries.append(f"{kit.name(label)} {task} {kit.count(cell.values['boundary_mismatches'])}")
    if boundaries:
        lines.append(
            "- **Context/continuation splits the tokenizer merges** (`boundary_mismatches`: scored as lm_eval's `hf` "
            "backend splits them, counted; every other run counts 0 or predates the count): "
            + "; ".join(boundaries)
            + "."
        )
    leaks = []
    for task in (t for t in kit.tasks if re.fullmatch(r"stereotype_leakage_[a-z]+", t)):
        found = [
            f"{kit.name(label)} {cell.values['n_leaks']:g}" for label in kit.labels if (cell := kit.cell(task, label))
        ]
        leaks.append(f"{language_code(task)}: {', '.join(found)}")
    if leaks:
        lines.append(
            "- **Stereotype leakage, leaks found** (`n_leaks`; the regression is not a per-item statistic and has no "
            "bootstrap CI, so no comparison is drawn): " + "; ".join(leaks) + "."
        )
    generative = []
    for task in kit.tasks:
        for label in kit.labels:
            cell = kit.cell(task, label)
            if cell is None or cell.document_counts is None:
                continue
            n = cell.document_counts[0]
            if task.startswith("sexist_statements") and "undetermined" in cell.values:
                undetermined = round(cell.values["undetermined"] * n)
                generative.append(
                    f"{task}: {undetermined} of {n} statements undetermined, so `combined_sexism` "
                    f"{kit.estimate(cell, 'combined_sexism')} rests on {n - undetermined} answers"
                )
            elif task.startswith("gest_mt_") and "detection_yield" in cell.values:
                generative.append(
                    f"{task}: `detection_yield` {cell.values['detection_yield']:g} ({kit.count(cell.values['undetected'])} "
                    f"of {n} translations without a detectable gender)"
                )
            elif "unmatched" in cell.values:
                generative.append(
                    f"{task}: `unmatched` {kit.count(cell.values['unmatched'])} (generations naming neither trait), "
                    f"regression converged: {'yes' if cell.values.get('fit_converged') else 'no'}"
                )
    if generative:
        lines.append(
            "- **Generative tasks, SmolLM2 only (first 50 documents, chat template), what the scores rest on:** "
            + "; ".join(generative)
            + "."
        )
    return lines


def findings(report: Report, paired_file: Path) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """What the statistics say: the section's opening, each benchmark's sentences (the findings its declaration names,
    :mod:`lm_eval_stereo.core.findings`) by its folder name, and the counts across benchmarks."""
    from lm_eval_stereo.core.registry import benchmarks

    paired, languages, significant = first_runs_tables(paired_file)
    kit = PageKit(report, paired)
    comparisons = len(paired)
    opening = [
        "## What the statistics say",
        "",
        "Generated from the results files by `scripts/real_models_doc.py`: a headline against its ideal from its 95% "
        "bootstrap CI (the report's verdict), a directed metric against chance from its CI, and a model against the "
        "other only from the paired test, with the Holm-adjusted p over all "
        f"{comparisons} model comparisons of [real_models/paired_first_runs.md](real_models/paired_first_runs.md) "
        f"(computed while the first runs' samples were there; it also holds {languages} language comparisons, "
        f"{significant} of them significant after Holm); a difference is stated only where p_holm < {ALPHA}.",
    ]
    per_benchmark = {bench.name: bench.findings(kit) for bench in benchmarks() if bench.findings is not None}
    return opening, per_benchmark, count_findings(kit)


def local_models(report: Report) -> dict[str, str]:
    """``pretrained`` paths of local model folders and the name the report gives each."""
    found = {}
    for row in report.rows:
        pretrained = str((row.model_args or {}).get("pretrained", ""))
        if pretrained.startswith((".", "/", "~")) or pretrained.count("/") > 1:
            found[pretrained] = row.label
    return found


def machine_free(text: str, results: Path, folders: dict[str, str]) -> str:
    """``text`` with the results folder as its place in the repository and local model folders by their names."""
    text = text.replace(f"{results.resolve()}/", SHOWN).replace(f"{results}/", SHOWN)
    for path, label in sorted(folders.items(), key=lambda item: -len(item[0])):
        text = text.replace(f"pretrained={path}", f"pretrained={label}").replace(f"({path})", f"({label})")
    return text


def _sections(markdown: str) -> list[tuple[str, str]]:
    """The report's markdown as (heading, text) sections at its ``### `` headings (the text before the first: "")."""
    parts = re.split(r"\n(?=### )", markdown)
    return [("", parts[0])] + [(part.split("\n", 1)[0][4:], part) for part in parts[1:]]


#: where a line of the report's summary or provenance names its task: a summary row ``| ... (task) |``, a footnote
#: ``- †n model · task: ...``, a provenance row ``| model | task | ...``
_ROW_TASK = (
    re.compile(r"^\| [^|]*\(([\w.-]+)\) \|"),
    re.compile(r"^- †\d+ [^·]+ · ([\w.-]+):"),
    re.compile(r"^\| [^|]+ \| ([\w.-]+) \|"),
)


def _row_task(line: str) -> str | None:
    return next((found.group(1) for pattern in _ROW_TASK if (found := pattern.match(line))), None)


def _row_task_in(text: str) -> bool:
    """Whether ``text`` holds a row or footnote of a task."""
    return any(_row_task(line) is not None for line in text.split("\n") if not line.startswith("|---"))


def _rows_of(text: str, owns: Callable[[str], bool]) -> str:
    """``text`` (the summary or the provenance) with only the rows and footnotes of the tasks ``owns`` accepts; a
    table's header (the line above its ``|---`` line) is kept where a row of the table is."""
    lines = text.split("\n")
    kept: list[str] = []
    header: list[str] = []
    for at, line in enumerate(lines):
        if at + 1 < len(lines) and lines[at + 1].startswith("|---") or line.startswith("|---"):
            header = [line] if not line.startswith("|---") else [*header, line]
            continue
        task = _row_task(line)
        if task is None:
            kept.append(line)
        elif owns(task):
            kept += header + [line]
            header = []
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def benchmark_page(
    bench_name: str, title: str, said: list[str], sections: list[tuple[str, str]], tasks: set[str]
) -> str:
    """One benchmark's page: its sentences, its rows of the report's summary, its tasks' details and provenance."""
    owned = {task for task in tasks if _owner(task) == bench_name}
    lines = [
        f"# Real models: {title}",
        "",
        "Generated by `scripts/real_models_doc.py` from the committed results (the models, how they were run, and the "
        "other benchmarks: [REAL_MODELS.md](../REAL_MODELS.md)).",
        "",
    ]
    if said:
        lines += ["## What the statistics say", "", *said, ""]
    for heading, text in sections:
        if heading == "Summary":
            lines += ["## Summary", "", _rows_of(text.split("\n", 1)[1], owned.__contains__), ""]
    if any(heading in owned for heading, _ in sections):
        explained = next(text.split("\n", 1)[1].strip() for heading, text in sections if heading == "Details")
        lines += ["## Details", "", explained, ""]
        lines += [
            f"### {heading}\n\n{text.split(chr(10), 1)[1].strip()}\n" for heading, text in sections if heading in owned
        ]
    for heading, text in sections:
        if heading == "Provenance":
            lines += ["## Provenance", "", _rows_of(text.split("\n", 1)[1], owned.__contains__), ""]
    return "\n".join(lines).rstrip() + "\n"


def _owner(task: str) -> str | None:
    """The folder name of the benchmark a task of these runs belongs to, by its name (the runs predate the recorded
    declaration) or as one of lm_eval's own tasks a benchmark declares, None for none."""
    from lm_eval_stereo.core.registry import benchmark_by_task_name, lm_eval_task

    bench = benchmark_by_task_name(task) or next(iter(lm_eval_task(task) or ()), None)
    return bench.name if bench is not None else None


def report_sections(report: Report, results: Path, folders: dict[str, str], html: Path | None) -> list[tuple[str, str]]:
    """The report's markdown over the runs as sections (:func:`_sections`), machine paths left out; with ``html``,
    the HTML report and its figures written there first."""
    from lm_eval_stereo.report import render_markdown

    if html is not None:
        from lm_eval_stereo.report.html import write_html

        page = write_html(report, html)
        page.write_text(machine_free(page.read_text(encoding="utf-8"), results, folders), encoding="utf-8")
    markdown = machine_free(render_markdown(report, details=True), results, folders)
    return _sections(re.sub(r"\n## ", "\n### ", markdown.split("\n", 1)[1]))


def report_part(sections: list[tuple[str, str]], tasks: set[str], folders: dict[str, str]) -> list[str]:
    """The index's section on the report: what it is, its sections other than those the benchmark pages hold, and
    the summary and provenance rows of the tasks no benchmark declares."""
    made = ", ".join(f"`{label}`" for label in sorted(folders.values()))
    return [
        "## The report over these runs",
        "",
        "Generated by `lm-eval-stereo report` over the committed results files in `docs/real_models/results/` (the "
        "HTML report with its figures in `docs/real_models/report/`). The samples were not kept, so the paired "
        "comparisons are those of [real_models/paired_first_runs.md](real_models/paired_first_runs.md)."
        + (
            f" Models {made} are local folders written by `lm-eval-stereo real-model NAME DIR` (the float32 model "
            "of the pinned wheel); the report names each by its folder name, as `pretrained` below does."
            if folders
            else ""
        )
        + " Its summary, details and provenance are on each benchmark's page.",
        *[
            text
            for heading, text in sections
            if heading not in ("Results", "Summary", "Details", "Provenance") and heading not in tasks
        ],
        *[  # the rows of tasks no benchmark declares (lm_eval's own), where the report has any
            f"### {heading}\n\n{rows}\n"
            for heading, text in sections
            if heading in ("Summary", "Provenance")
            and _row_task_in(rows := _rows_of(text.split("\n", 1)[1], lambda task: _owner(task) is None))
        ],
    ]


def render(results: Path, notes: Path, paired_file: Path, html: Path | None = None) -> tuple[str, dict[str, str]]:
    """The index page over the runs in ``results`` and one page per benchmark (by folder name); with ``html``, the
    HTML report and its figures written there."""
    import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
    from lm_eval_stereo.core.registry import benchmarks
    from lm_eval_stereo.report import build_report

    runs, timed = run_folders(results)
    report = build_report([str(run.resolve()) for run in runs])
    folders = local_models(report)
    sections = report_sections(report, results, folders, html)
    tasks = {heading for heading, _ in sections if _owner(heading) is not None}
    columns = timing_columns([*runs, *timed])
    opening, per_benchmark, across = findings(report, paired_file)
    titles = {bench.name: bench.title for bench in benchmarks()}
    said = [name for name, lines in per_benchmark.items() if lines]
    titles |= {name: name for name in said if name not in titles}  # a section of tasks no benchmark declares
    shown = sorted({*(_owner(task) for task in tasks), *said}, key=list(titles).index)
    pages = {name: benchmark_page(name, titles[name], per_benchmark.get(name, []), sections, tasks) for name in shown}
    index = [f"- [{titles[name]}](real_models/{name}.md)" for name in shown]
    document = [
        notes.read_text(encoding="utf-8").rstrip(),
        "",
        backend_timing(columns, [row.label for row in report.rows]),
        "",
        *opening,
        "",
        "Per benchmark, with its rows of the report's summary, its tasks' details and their provenance:",
        "",
        *index,
        "",
        "Across benchmarks:",
        "",
        *across,
        "",
        "## Wall time per task (seconds, one `lm_eval` call each: start-up, model loading, scoring, aggregation)",
        "",
        *timing_table(columns),
        "",
        *report_part(sections, tasks, folders),
    ]
    return "\n".join(document).rstrip() + "\n", pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="runs to copy into the results first (reported and timed)")
    parser.add_argument("--timed", nargs="*", type=Path, default=[], help="runs to copy, only timed")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--notes", type=Path, default=DOCS / "real_models" / "intro.md")
    parser.add_argument("--paired", type=Path, default=DOCS / "real_models" / "paired_first_runs.md")
    parser.add_argument("--out", type=Path, default=DOCS, help="folder of REAL_MODELS.md and real_models/report/")
    parser.add_argument("--no-html", action="store_true", help="only the markdown page")
    args = parser.parse_args(argv)
    if args.runs or args.timed:
        copy_results([*args.runs, *args.timed], args.results)
        (args.results / "timed.txt").write_text("".join(f"{run.name}\n" for run in args.timed), encoding="utf-8")
    html = None if args.no_html else args.out / "real_models" / "report"
    index, pages = render(args.results, args.notes, args.paired, html)
    (args.out / "REAL_MODELS.md").write_text(index, encoding="utf-8")
    (args.out / "real_models").mkdir(parents=True, exist_ok=True)
    for name, page in pages.items():
        (args.out / "real_models" / f"{name}.md").write_text(page, encoding="utf-8")
    if html is not None:  # docs/REPORT.md's figure: the report's StereoSet figure over these runs
        shutil.copy(html / "stereoset.png", args.out / "report_stereoset.png")
    print(args.out / "REAL_MODELS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
