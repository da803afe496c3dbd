"""The sentences on docs/REAL_MODELS.md of lm_eval's own bias tasks (:mod:`lm_eval_stereo.core.findings`): EsBBQ's and
CaBBQ's accuracies read from the options' log-likelihoods that ``scripts/option_loglikelihoods.py`` keeps beside a
run's results."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from lm_eval_stereo.core.findings import FindingsKit

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


def findings(kit: FindingsKit) -> list[str]:
    """EsBBQ/CaBBQ Age's accuracies read from the options' log-likelihoods, where the run kept them
    (:data:`OPTIONS_FILE`): how often a wording of "unknown" is the likeliest option and by how many nats; the file
    must reproduce the results' accuracies."""
    lines = []
    languages = {"esbbq_age": ("EsBBQ", "Spanish"), "cabbq_age": ("CaBBQ", "Catalan")}
    for label in kit.labels:
        contests = {}
        for task, (name, _) in languages.items():
            cell = kit.cell(task, label)
            contest = option_contest(task, kit.results_file(cell)) if cell else None
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
                f"- **{name} Age ({task}), {kit.name(label)}: `acc_ambig` {accuracies[0]:.3f} and `acc_disambig` "
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
                f"- **Why `acc_ambig` differs between the two languages ({kit.name(label)}).** The rows are translations "
                "of each other (paired by key), with the same prompt layout and labels; what differs is the options' "
                "wording. The margin keeps one sign within each language: "
                + " and ".join(
                    f"in every ambiguous {languages[task][1]} row, {winner[task]} is the likeliest option"
                    for task in languages
                )
                + ". So each figure records which surface form the model finds likelier in that language on "
                + ("this one template" if max(c.templates for c in contests.values()) == 1 else "these templates")
                + ", not how often it reads the ambiguity. The rows' redirection is not the cause: the offline rows "
                "give lm_eval's unchanged YAML the fields it reads (`tests/benchmarks/lm_eval_bias/test_lm_eval_bias.py`)."
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
