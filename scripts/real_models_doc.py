"""Write docs/REAL_MODELS.md (an index) and one page per benchmark, docs/real_models/<benchmark>.md, from the
committed results of scripts/run_real_models.py.

    python scripts/real_models_doc.py [RUNS...] [--timed RUNS...]

The page is a function of what the repository holds: the results files in ``docs/real_models/results/<run>/`` (each
folder a run of ``scripts/run_real_models.py`` with its ``timings.json``), the hand-written
``docs/real_models/intro.md`` (set-up, no numbers that compare or interpret) and the paired tables of
``docs/real_models/paired_first_runs.md`` (computed while the samples were there; the samples are not committed).
Every number and every sentence that compares or interprets numbers is generated here: a headline against its ideal
from the report's verdict (its 95% CI), a model against a model only with the paired test's Holm-adjusted p, so that
text and data cannot drift apart (``tests/test_real_models_doc.py`` regenerates the page and compares).

RUNS (``--out`` folders of ``scripts/run_real_models.py``) are first copied into ``docs/real_models/results/`` (that
folder is rewritten; machine paths of the task YAMLs made relative, the samples left behind: they are large);
``option_loglikelihoods.json`` files (``scripts/option_loglikelihoods.py``) beside the results come too;
``--timed`` ones (e.g. the same tasks on fewer documents with ``hf`` and ``hf-prefix``) only add wall times and are
recorded in ``docs/real_models/results/timed.txt``. Without RUNS the page is rebuilt from the committed results.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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


def _cell(report: Report, task: str, label: str) -> Cell | None:
    return next((cell for cell in report.task_cells(task) if cell.row.label == label), None)


def _estimate(cell: Cell, name: str) -> str:
    from lm_eval_stereo.report.formatting import format_estimate

    return format_estimate(cell.estimate(name), None, stderr=False)


def _language(task: str) -> str:
    return task.rsplit("_", 1)[1]


def _name(label: str) -> str:
    return NAMES.get(label, label)


def _count(value: float) -> str:
    return f"{int(value):,}"


def _against_chance(cell: Cell, name: str, chance: float) -> str:
    """Where a directed metric's CI lies against chance."""
    estimate = cell.estimate(name)
    if estimate.low is not None and estimate.low > chance:
        return "above"
    if estimate.high is not None and estimate.high < chance:
        return "below"
    return "consistent"


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


def stereoset_findings(report: Report, labels: list[str], paired: dict) -> list[str]:
    from lm_eval_stereo.report.verdicts import describe

    tasks = [task for task in report.tasks if task.startswith("stereoset_multi_")]
    lines = []
    for label in labels:
        cells = {task: cell for task in tasks if (cell := _cell(report, task, label))}
        if not cells:
            continue
        lms = ", ".join(f"{_language(task)} {_estimate(cell, 'lms')}" for task, cell in cells.items())
        where = {"above": [], "consistent": [], "below": []}
        for task, cell in cells.items():
            where[_against_chance(cell, "lms", 50.0)].append(_language(task))
        said = []
        if where["above"]:
            said.append(f"the CI excludes 50 (above chance) in {', '.join(where['above'])}")
        if where["consistent"]:
            said.append(f"the CI includes 50 (consistent with chance) in {', '.join(where['consistent'])}")
        if where["below"]:
            said.append(f"the CI lies below 50 in {', '.join(where['below'])}")
        ss = "; ".join(
            f"{_language(task)} {_estimate(cell, 'ss')}: {describe(cell, 'ss')}" for task, cell in cells.items()
        )
        lines.append(
            f"- **StereoSet, {_name(label)}.** LMS (50: a related candidate preferred over the unrelated one no more "
            f"often than by chance) {lms}: {'; '.join(said)}. SS {ss}."
        )
        if where["consistent"]:
            lines.append(
                f"  Where the LMS CI includes 50 ({', '.join(where['consistent'])}), {_name(label)}'s LMS cannot be told "
                "from chance on this sample, so an SS near 50 there cannot be read as no preference for stereotypes "
                "(read SS together with LMS)."
            )
    a, b = FIRST_RUNS
    for metric in ("lms", "ss"):
        comparisons = [
            _paired_sentence(paired.get((task, metric)), a, b, _language(task), "higher")
            for task in tasks
            if _cell(report, task, a) and _cell(report, task, b)
        ]
        if comparisons:
            lines.append(
                f"- **StereoSet {metric.upper()}, the two models (paired, first runs).** "
                + "; ".join(comparisons)
                + "."
            )
    return lines


def gest_findings(report: Report, labels: list[str], paired: dict) -> list[str]:
    from lm_eval_stereo.report.verdicts import describe

    cells = {label: cell for label in labels if (cell := _cell(report, "gest_en", label))}
    if not cells:
        return []
    each = "; ".join(f"{_name(label)} {_estimate(cell, 'gs')}: {describe(cell, 'gs')}" for label, cell in cells.items())
    line = f"- **GEST (en), g_s against its ideal 1.** {each}."
    a, b = FIRST_RUNS
    if a in cells and b in cells:
        line += " " + _paired_sentence(paired.get(("gest_en", "gs")), a, b, "The two models' g_s", "higher") + "."
    return [line]


def eurogest_findings(report: Report, labels: list[str]) -> list[str]:
    """Per model, each EuroGEST language's g_s against its ideal 1 (the report's verdict from its 95% CI)."""
    from lm_eval_stereo.report.verdicts import describe

    tasks = sorted(task for task in report.tasks if re.fullmatch(r"eurogest_[a-z]+", task))
    lines = []
    for label in labels:
        cells = {task: cell for task in tasks if (cell := _cell(report, task, label))}
        if cells:
            each = "; ".join(
                f"{_language(task)} {_estimate(cell, 'gs')}: {describe(cell, 'gs')}" for task, cell in cells.items()
            )
            several = (
                f" Each verdict reads that language's own 95% CI, not adjusted for the {len(cells)} languages: were "
                f"every language unbiased, about {0.05 * len(cells):.1f} of them would still lie off 1 by chance."
                if len(cells) > 1
                else ""
            )
            lines.append(f"- **EuroGEST, g_s against its ideal 1, {_name(label)}.** {each}.{several}")
    return lines


def rubia_findings(report: Report, labels: list[str]) -> list[str]:
    """Per model, each RuBia domain's share of biased pairs against its ideal 0.5 (the report's verdict from its 95%
    CI), with the pairs scored and tied."""
    from lm_eval_stereo.report.verdicts import describe
    from lm_eval_stereo.tasks.rubia.data import DOMAINS

    tasks = [f"rubia_{domain}" for domain in DOMAINS if f"rubia_{domain}" in report.tasks]
    lines = []
    for label in labels:
        cells = {task: cell for task in tasks if (cell := _cell(report, task, label))}
        if not cells:
            continue
        each = "; ".join(
            f"{_language(task)} {_estimate(cell, 'biased')} of {_count(cell.values['count'])} pairs: "
            f"{describe(cell, 'biased')}"
            for task, cell in cells.items()
        )
        ties = sum(int(cell.values.get("ties", 0)) for cell in cells.values())
        flagged = sum(int(cell.values.get("boundary_mismatches", 0)) for cell in cells.values())
        lines.append(
            f"- **RuBia, share of pairs with PPL(pro-trope) < PPL(anti-trope) against its ideal 0.5, {_name(label)}.** "
            f"{each}. {ties} tied pair(s) (not biased, in the denominator), {flagged} sentence(s) scored off the "
            f"reference's tokens. Each verdict reads that domain's own 95% CI, not adjusted for the {len(cells)} domains."
        )
    return lines


def gerbbq_findings(report: Report, labels: list[str], paired: dict) -> list[str]:
    lines = []
    a, b = FIRST_RUNS
    chance = 1 / 3
    for task, context in (("gerbbq_mc_amb", "ambiguous"), ("gerbbq_mc_dis", "disambiguated")):
        cells = {label: cell for label in labels if (cell := _cell(report, task, label))}
        if not cells:
            continue
        words = {"above": "above", "below": "below", "consistent": "consistent with"}
        each = "; ".join(
            f"{_name(label)} {_estimate(cell, 'accuracy')}, {words[_against_chance(cell, 'accuracy', chance)]} "
            "the 1/3 of chance"
            for label, cell in cells.items()
        )
        line = f"- **GerBBQ+ as multiple choice ({task}, {context} contexts), accuracy.** {each} (95% CI)."
        if a in cells and b in cells:
            line += " " + _paired_sentence(paired.get((task, "accuracy")), a, b, "Between the models", "higher") + "."
        lines.append(line)
    if any(line.startswith("- **GerBBQ+ as multiple choice") for line in lines):
        lines.append(
            "  The paper's protocol is generative with an instruction-tuned model; `gerbbq_mc_*` is our addition and "
            "scores the answers by log-likelihood."
        )
    for task, context in (("gerbbq_amb", "ambiguous"), ("gerbbq_dis", "disambiguated")):
        for label in labels:
            cell = _cell(report, task, label)
            if cell is None or cell.document_counts is None:
                continue
            n = cell.document_counts[0]
            correct = round(cell.values["accuracy"] * n)
            undetermined = round(cell.values["undetermined"] * n)
            companion = cell.companion_figure("accuracy")
            # undetermined outputs are booked as "unbekannt": correct in ambiguous contexts, wrong otherwise
            undetermined_correct = undetermined if context == "ambiguous" else 0
            determinate = n - undetermined
            determinate_correct = correct - undetermined_correct
            if companion is None or not math.isclose(companion[1], determinate_correct / determinate):
                raise SystemExit(f"{task} {label}: accuracy over determinate answers does not add up")
            booked = (
                f'{undetermined_correct} of its {correct} correct answers are such outputs ("unbekannt" is the '
                "right answer in ambiguous contexts)"
                if undetermined_correct
                else f"they count as wrong (the answer is a person in {context} contexts)"
            )
            lines.append(
                f"- **GerBBQ+ generative ({task}), {_name(label)}.** Accuracy {_estimate(cell, 'accuracy')} over "
                f'{n} items, of which {undetermined} outputs name no answer and are booked as "unbekannt": '
                f"{booked}. Over the {determinate} determinate answers the accuracy is "
                f"{determinate_correct / determinate:.3f} ({determinate_correct} of {determinate})."
            )
    return lines


def kobbq_findings(report: Report, labels: list[str]) -> list[str]:
    """KoBBQ's accuracies against the 1/3 of chance and its diff-bias scores against 0, from their CIs."""
    from lm_eval_stereo.report.verdicts import describe

    words = {"above": "above", "below": "below", "consistent": "consistent with"}
    lines = []
    for task, how in (("kobbq", "by log-likelihood (ours)"), ("kobbq_gen", "generated (the paper's five prompts)")):
        for label in labels:
            cell = _cell(report, task, label)
            if cell is None:
                continue
            if all(math.isnan(cell.values.get(name, math.nan)) for name in ("acc_amb", "acc_dis")):
                lines.append(
                    f"- **KoBBQ {how} ({task}), {_name(label)}.** No answer is one of the choices: "
                    f"{_count(cell.values['out_of_choice'])} of {_count(cell.values['n_generations'])} are "
                    "out-of-choice, so every accuracy and diff-bias is undefined (0/0) and nothing is read from them."
                )
                continue
            accuracy = "; ".join(
                f"`{name}` {_estimate(cell, name)}, {words[_against_chance(cell, name, 1 / 3)]} the 1/3 of chance"
                for name in ("acc_amb", "acc_dis")
            )
            bias = "; ".join(
                f"`{name}` {_estimate(cell, name)}: {describe(cell, name)}" for name in ("bias_amb", "bias_dis")
            )
            line = f"- **KoBBQ {how} ({task}), {_name(label)}.** Accuracy {accuracy}. Diff-bias {bias}."
            if cell.values.get("out_of_choice"):
                line += (
                    f" {_count(cell.values['out_of_choice'])} of {_count(cell.values['n_generations'])} answers are "
                    "none of the choices (out-of-choice) and left out of every score."
                )
            lines.append(line)
    return lines


def s_jsd_findings(report: Report, labels: list[str]) -> list[str]:
    tasks = [task for task in report.tasks if re.fullmatch(r"s_jsd_[a-z]+", task)]
    rows = []
    shares: dict[str, list[str]] = {label: [] for label in labels}
    for task in tasks:
        cells = [(label, cell) for label in labels if (cell := _cell(report, task, label))]
        entries = []
        for label, cell in cells:
            scored, unscored = cell.values["shared_tokens"], cell.values.get("unscorable_tokens", 0)
            share = unscored / (scored + unscored) if scored + unscored else float("nan")
            entries.append(f"{_count(scored)} / {_count(unscored)} ({100 * share:.1f}%)")
            if share > 0.1:
                shares[label].append(f"{_language(task)} {100 * share:.0f}%")
        rows.append(f"| {_language(task)} | " + " | ".join(entries) + " |")
    if not rows:
        return []
    heavy = "; ".join(
        f"{_name(label)} leaves out more than 10% of the shared tokens in {', '.join(found)}"
        if found
        else f"{_name(label)} leaves out at most 10% in every language"
        for label, found in shares.items()
    )
    return [
        "- **S_JSD: which shared tokens are scored.** A causal model is asked for each shared token through text; a "
        "token that is a byte piece of a character cannot be asked for alone and is left out (`unscorable_tokens`). "
        "What a language's S_JSD rests on is the share left out, not the number scored: "
        f"{heavy}. Scored / left out (share left out) over the 212 pairs:",
        "",
        "  | language | " + " | ".join(_name(label) for label in labels) + " |",
        "  |---|" + "---:|" * len(labels),
        *(f"  {row}" for row in rows),
        "",
    ]


def _defined(cell: Cell, name: str) -> bool:
    value = cell.values.get(name)
    return isinstance(value, float) and math.isfinite(value)


def mbbq_findings(report: Report, labels: list[str]) -> list[str]:
    """Per model and protocol: each language's accuracies against the 1/3 of chance and its bias scores against 0
    (the report's verdicts, 95% CIs), beside the control set's accuracy of the same language."""
    from lm_eval_stereo.report.verdicts import describe

    lines = []
    for label in labels:
        for prefix, protocol in (("mbbq", "log-likelihood"), ("mbbq_gen", "generation")):
            cells = {
                _language(task): cell
                for task in report.tasks
                if re.fullmatch(rf"{prefix}_[a-z]+", task) and (cell := _cell(report, task, label))
            }
            if not cells:
                continue
            words = {"above": "above", "below": "below", "consistent": "consistent with"}
            parts = []
            for lang, cell in cells.items():
                control = _cell(report, f"{prefix}_control_{lang}", label)
                undefined = "undefined: no scored answer of that kind in the sample"
                accuracies = ", ".join(
                    (
                        f"{name} {_estimate(cell, name)} ({words[_against_chance(cell, name, 1 / 3)]} chance"
                        if _defined(cell, name)
                        else f"{name} ({undefined}"
                    )
                    + (f"; control set {_estimate(control, name)}" if control and _defined(control, name) else "")
                    + ")"
                    for name in ("acc_amb", "acc_dis")
                )
                biases = "; ".join(
                    f"{name} {_estimate(cell, name)}: {describe(cell, name)}"
                    if _defined(cell, name)
                    else f"{name} ({undefined})"
                    for name in ("bias_amb", "bias_dis")
                )
                undetermined = cell.values.get("undetermined")
                extra = f"; undetermined {undetermined:.3f} of answers" if undetermined else ""
                parts.append(f"{lang}: {accuracies}; {biases}{extra}")
            lines.append(f"- **MBBQ ({protocol}), {_name(label)}.** " + ". ".join(parts) + ".")
    return lines


#: the per-option log-likelihoods written beside a run's results by scripts/option_loglikelihoods.py
OPTIONS_FILE = "option_loglikelihoods.json"
#: EsBBQ's and CaBBQ's choices before their wordings of "unknown": the two people (lm_eval's ``doc_to_choice``)
PEOPLE = 2


@dataclass
class OptionContest:
    """What the likeliest option was on one task's logged rows: a person or a wording of "unknown"."""

    rows: int
    templates: int
    wordings: int  # the wordings of "unknown" among the choices
    ambiguous: int
    ambiguous_unknown: int  # ambiguous rows whose likeliest option is a wording of "unknown" (the right answer)
    disambiguated: int
    disambiguated_right: int
    disambiguated_unknown: int
    margins: list[float]  # per ambiguous row, sorted: the likelier person minus the likeliest wording (nats)
    people: list[float]  # per ambiguous row, sorted: the likelier person's log-likelihood
    unknowns: list[float]  # per ambiguous row, sorted: the likeliest wording's log-likelihood
    wording: str  # the wording of "unknown" most often the likeliest of them on the ambiguous rows
    wording_count: int


def option_contest(task: str, results_file: Path) -> OptionContest | None:
    """The contest of options on ``task``'s rows, from the file beside its results (None without one)."""
    options = results_file.parent / OPTIONS_FILE
    rows = json.loads(options.read_text(encoding="utf-8")).get(task) if options.exists() else None
    if not rows:
        return None
    choices = json.loads(results_file.read_text(encoding="utf-8"))["configs"][task]["doc_to_choice"]
    wordings = re.findall(r"'([^']*)'", choices)  # after the two people, unquoted: ``[ans0, ans1, '...', ...]``
    ambiguous = [row["loglikelihoods"] for row in rows if row["context_condition"] == "ambig"]
    disambiguated = [row for row in rows if row["context_condition"] == "disambig"]

    def picked(lls: list[float]) -> int:
        return max(range(len(lls)), key=lls.__getitem__)

    def best_unknown(lls: list[float]) -> int:
        return max(range(PEOPLE, len(lls)), key=lls.__getitem__)

    favourite, count = Counter(best_unknown(lls) for lls in ambiguous).most_common(1)[0]
    return OptionContest(
        rows=len(rows),
        templates=len({row.get("template_id") for row in rows}),
        wordings=len(wordings),
        ambiguous=len(ambiguous),
        ambiguous_unknown=sum(picked(lls) >= PEOPLE for lls in ambiguous),
        disambiguated=len(disambiguated),
        disambiguated_right=sum(picked(row["loglikelihoods"]) == row["label"] for row in disambiguated),
        disambiguated_unknown=sum(picked(row["loglikelihoods"]) >= PEOPLE for row in disambiguated),
        margins=sorted(max(lls[:PEOPLE]) - lls[best_unknown(lls)] for lls in ambiguous),
        people=sorted(max(lls[:PEOPLE]) for lls in ambiguous),
        unknowns=sorted(lls[best_unknown(lls)] for lls in ambiguous),
        wording=wordings[favourite - PEOPLE],
        wording_count=count,
    )


def _median(values: list[float]) -> float:
    """The median of sorted values."""
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _nats(margins: list[float]) -> str:
    """A median margin with its range, in nats."""
    return f"{_median(margins):+.1f} nats (median; {margins[0]:+.1f} to {margins[-1]:+.1f})"


def lm_eval_bias_findings(report: Report, labels: list[str]) -> list[str]:
    """EsBBQ/CaBBQ Age's accuracies read from the options' log-likelihoods, where the run kept them
    (:data:`OPTIONS_FILE`): how often a wording of "unknown" is the likeliest option and by how many nats; the file
    must reproduce the results' accuracies."""
    lines = []
    languages = {"esbbq_age": ("EsBBQ", "Spanish"), "cabbq_age": ("CaBBQ", "Catalan")}
    for label in labels:
        contests = {}
        for task, (name, _) in languages.items():
            cell = _cell(report, task, label)
            contest = option_contest(task, Path(cell.run.path)) if cell else None
            if contest is None:
                continue
            accuracies = (
                contest.ambiguous_unknown / contest.ambiguous,
                contest.disambiguated_right / contest.disambiguated,
            )
            if accuracies != (cell.values["acc_ambig"], cell.values["acc_disambig"]):
                raise SystemExit(f"{task}: {OPTIONS_FILE} does not reproduce the results' accuracies")
            contests[task] = contest
            lines.append(
                f"- **{name} Age ({task}), {_name(label)}: `acc_ambig` {accuracies[0]:.3f} and `acc_disambig` "
                f"{accuracies[1]:.3f}, recomputed from the options' logged log-likelihoods.** Its {contest.rows} rows "
                f"come from {contest.templates} template{'s' if contest.templates > 1 else ''}. lm_eval's task picks "
                f"the option with the highest summed log-likelihood (not normalised by length) among the {PEOPLE} "
                f'people and {contest.wordings} wordings of "unknown". In {contest.ambiguous_unknown} of the '
                f'{contest.ambiguous} ambiguous rows a wording of "unknown" is the likeliest option. The likelier '
                f"person minus the likeliest wording of \"unknown\" ('{contest.wording}' in {contest.wording_count} "
                f"of these rows) is {_nats(contest.margins)}. In the {contest.disambiguated} disambiguated rows, a "
                f'wording of "unknown" is picked in {contest.disambiguated_unknown} and the right person in '
                f"{contest.disambiguated_right}."
            )
        if len(contests) < len(languages):
            continue
        signs = {task: {margin > 0 for margin in contest.margins} for task, contest in contests.items()}
        if all(len(sign) == 1 for sign in signs.values()) and len(set.union(*signs.values())) == 2:
            winner = {task: "a person" if sign == {True} else 'a wording of "unknown"' for task, sign in signs.items()}
            lines.append(
                f"- **Why `acc_ambig` differs between the two languages ({_name(label)}).** The rows are translations "
                "of each other (paired by key), with the same prompt layout and labels; what differs is the options' "
                "wording. The margin keeps one sign within each language: "
                + " and ".join(
                    f"in every ambiguous {languages[task][1]} row, {winner[task]} is the likeliest option"
                    for task in languages
                )
                + ". So each figure records which surface form the model finds likelier in that language on "
                + ("this one template" if max(c.templates for c in contests.values()) == 1 else "these templates")
                + ", not how often it reads the ambiguity. The rows' redirection is not the cause: the offline rows "
                "give lm_eval's unchanged YAML the fields it reads (`tests/test_lm_eval_bias.py`)."
            )
            es, ca = contests["esbbq_age"], contests["cabbq_age"]
            moved = abs(_median(es.people) - _median(ca.people)) > abs(_median(es.unknowns) - _median(ca.unknowns))
            if es.wording == ca.wording and moved:
                lines[-1] += (
                    f" The likeliest wording of \"unknown\" is the same string in both languages, '{es.wording}', at a "
                    f"median of {_median(es.unknowns):.1f} nats in Spanish and {_median(ca.unknowns):.1f} in Catalan; "
                    f"the likelier person is at {_median(es.people):.1f} and {_median(ca.people):.1f}: what moves "
                    "between the languages is the likelihood of the people's wording."
                )
    return lines


def count_findings(report: Report, labels: list[str]) -> list[str]:
    """Counts the results record (no statistic): boundary mismatches, leaks, undetermined outputs."""
    lines = []
    boundaries = []
    for task in report.tasks:
        for label in labels:
            cell = _cell(report, task, label)
            if cell is not None and cell.values.get("boundary_mismatches"):
                boundaries.append(f"{_name(label)} {task} {_count(cell.values['boundary_mismatches'])}")
    if boundaries:
        lines.append(
            "- **Context/continuation splits the tokenizer merges** (`boundary_mismatches`: scored as lm_eval's `hf` "
            "backend splits them, counted; every other run counts 0 or predates the count): "
            + "; ".join(boundaries)
            + "."
        )
    leaks = []
    for task in (t for t in report.tasks if re.fullmatch(r"stereotype_leakage_[a-z]+", t)):
        found = [
            f"{_name(label)} {cell.values['n_leaks']:g}" for label in labels if (cell := _cell(report, task, label))
        ]
        leaks.append(f"{_language(task)}: {', '.join(found)}")
    if leaks:
        lines.append(
            "- **Stereotype leakage, leaks found** (`n_leaks`; the regression is not a per-item statistic and has no "
            "bootstrap CI, so no comparison is drawn): " + "; ".join(leaks) + "."
        )
    generative = []
    for task in report.tasks:
        for label in labels:
            cell = _cell(report, task, label)
            if cell is None or cell.document_counts is None:
                continue
            n = cell.document_counts[0]
            if task.startswith("sexist_statements") and "undetermined" in cell.values:
                undetermined = round(cell.values["undetermined"] * n)
                generative.append(
                    f"{task}: {undetermined} of {n} statements undetermined, so `combined_sexism` "
                    f"{_estimate(cell, 'combined_sexism')} rests on {n - undetermined} answers"
                )
            elif task.startswith("gest_mt_") and "detection_yield" in cell.values:
                generative.append(
                    f"{task}: `detection_yield` {cell.values['detection_yield']:g} ({_count(cell.values['undetected'])} "
                    f"of {n} translations without a detectable gender)"
                )
            elif "unmatched" in cell.values:
                generative.append(
                    f"{task}: `unmatched` {_count(cell.values['unmatched'])} (generations naming neither trait), "
                    f"regression converged: {'yes' if cell.values.get('fit_converged') else 'no'}"
                )
    if generative:
        lines.append(
            "- **Generative tasks, SmolLM2 only (first 50 documents, chat template), what the scores rest on:** "
            + "; ".join(generative)
            + "."
        )
    return lines


#: each benchmark's sentences, by its folder name: the first section of its page, ``docs/real_models/<name>.md`` (a
#: new benchmark's section is one line here)
BENCHMARK_FINDINGS: dict[str, Callable[[Report, list[str], dict], list[str]]] = {
    "stereoset_multi": stereoset_findings,
    "gest": gest_findings,
    "eurogest": lambda report, labels, paired: eurogest_findings(report, labels),
    "rubia": lambda report, labels, paired: rubia_findings(report, labels),
    "german_gender_bias": gerbbq_findings,
    "kobbq": lambda report, labels, paired: kobbq_findings(report, labels),
    "s_jsd": lambda report, labels, paired: s_jsd_findings(report, labels),
    "mbbq": lambda report, labels, paired: mbbq_findings(report, labels),
    "lm_eval_bias": lambda report, labels, paired: lm_eval_bias_findings(report, labels),
}


def findings(report: Report, paired_file: Path) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """What the statistics say: the section's opening, each benchmark's sentences (:data:`BENCHMARK_FINDINGS`) and
    the counts across benchmarks."""
    labels = [row.label for row in report.rows]
    paired, languages, significant = first_runs_tables(paired_file)
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
    per_benchmark = {name: said(report, labels, paired) for name, said in BENCHMARK_FINDINGS.items()}
    return opening, per_benchmark, count_findings(report, labels)


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


def render(results: Path, notes: Path, paired_file: Path, html: Path | None = None) -> tuple[str, dict[str, str]]:
    """The index page over the runs in ``results`` and one page per benchmark (by folder name); with ``html``, the
    HTML report and its figures written there."""
    import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
    from lm_eval_stereo.core.registry import benchmarks
    from lm_eval_stereo.report import build_report, render_markdown

    runs, timed = run_folders(results)
    report = build_report([str(run.resolve()) for run in runs])
    folders = local_models(report)
    if html is not None:
        from lm_eval_stereo.report.html import write_html

        page = write_html(report, html)
        page.write_text(machine_free(page.read_text(encoding="utf-8"), results, folders), encoding="utf-8")
    markdown = machine_free(render_markdown(report, details=True), results, folders)
    markdown = re.sub(r"\n## ", "\n### ", markdown.split("\n", 1)[1])
    sections = _sections(markdown)
    tasks = {heading for heading, _ in sections if _owner(heading) is not None}
    columns = timing_columns([*runs, *timed])
    made = ", ".join(f"`{label}`" for label in sorted(folders.values()))
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
