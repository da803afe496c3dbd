"""Which run each task of a model comes from: the run selection of one report or export, computed once.

:func:`select_runs` orders the runs (:data:`TIE_RULE`), tells each model's runs apart by the recorded facts that
change the numbers (:func:`setting_keys`), picks per model, setting and task the newest run, and says which runs it
kept apart and which it left out on a tie: a :class:`RunSelection`, which the report and the export read instead of
computing any of it again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lm_eval_stereo.results.run import Finding, Run

#: per run (by ``id``): its model and the recorded facts that tell it apart from the model's other runs
SettingKeys = dict[int, tuple[str, str]]
#: the tasks a run offers to the selection (default: all of them)
OfferedTasks = Callable[[Run], list[str]]

#: how the selection orders runs of one model and task: by lm_eval's ``date``, a tie by the results file's path
TIE_RULE = "the newest date wins; on equal dates the results file whose path sorts last"


@dataclass(frozen=True)
class RunSelection:
    """One report's or export's runs: ``runs`` oldest first, their :data:`SettingKeys`, the ``chosen`` runs (oldest
    first, each with the tasks it contributes; every run with all its tasks under ``all_runs``), and the warnings of
    the runs ``kept_apart`` and ``tied`` (none under ``all_runs``, where no run replaces another)."""

    runs: list[Run]
    keys: SettingKeys
    chosen: list[tuple[Run, list[str]]]
    kept_apart: list[Finding]
    tied: list[Finding]

    def key(self, run: Run) -> str:
        """The model and the facts that tell ``run`` apart as one key (:func:`setting_key`)."""
        return setting_key(self.keys, run)

    def apart(self, run: Run) -> str:
        """The recorded facts that tell ``run`` apart from its model's other runs (``model_dtype=...``; empty: none)."""
        return self.keys[id(run)][1]

    @property
    def warnings(self) -> list[Finding]:
        """The runs kept apart, then the runs left out on a tie."""
        return self.kept_apart + self.tied


def select_runs(runs: list[Run], all_runs: bool = False, tasks: OfferedTasks | None = None) -> RunSelection:
    """The selection of ``runs`` (``tasks``: the tasks a run offers, default all of them): per model
    (:attr:`Run.identity`, with the recorded facts that tell its runs apart: :func:`setting_keys`) and task the
    newest run, so each task of a model comes from one run; with ``all_runs`` every run with all its tasks."""
    ordered = oldest_first(runs)
    offered = {id(run): (tasks(run) if tasks is not None else run.tasks) for run in ordered}
    keys = setting_keys(ordered, offered)
    if all_runs:
        chosen = [(run, offered[id(run)]) for run in ordered if offered[id(run)] or tasks is None]
        return RunSelection(ordered, keys, chosen, [], [])
    chosen = _newest(ordered, offered, keys)
    return RunSelection(ordered, keys, chosen, _kept_apart(ordered, keys), _tied(runs, offered, keys, chosen))


def _fact_text(value: str) -> str:
    """A recorded fact as a label shows it (a hash by its first 12 characters)."""
    return value[:12] if len(value) == 64 and all(c in "0123456789abcdef" for c in value) else value


def setting_keys(runs: list[Run], offered: dict[int, list[str]]) -> SettingKeys:
    """Per run (by ``id``) its model (:attr:`Run.identity`) and the recorded facts (:attr:`Run.number_facts`) that tell it
    apart from the other runs of its model: those on which two runs of the model that offer the same task
    (``offered``, by run ``id``) differ (a float32 and a bfloat16 run, another chat template, ``hf`` and
    ``hf-prefix``), as ``model_dtype=torch.bfloat16`` (empty where none differ). The report and the export keep such
    runs apart, named by these facts, instead of letting the newer replace the older; facts that differ only between
    runs of different tasks do not."""
    by_identity: dict[str, list[Run]] = {}
    for run in runs:
        by_identity.setdefault(run.identity, []).append(run)
    keys: SettingKeys = {}
    for identity, group in by_identity.items():
        differing: set[str] = set()
        for task in {task for run in group for task in offered[id(run)]}:
            holders = [run.number_facts for run in group if task in offered[id(run)]]
            names = {name for facts in holders for name in facts}
            differing |= {name for name in names if len({facts[name] for facts in holders if name in facts}) > 1}
        for run in group:
            facts = run.number_facts
            apart = ", ".join(f"{name}={_fact_text(facts.get(name, '?'))}" for name in sorted(differing))
            keys[id(run)] = (identity, apart)
    return keys


def setting_key(keys: SettingKeys, run: Run) -> str:
    """The model and the facts that tell ``run`` apart (:func:`setting_keys`) as one key."""
    identity, apart = keys[id(run)]
    return f"{identity} [{apart}]" if apart else identity


def oldest_first(runs: list[Run]) -> list[Run]:
    """The runs by date (then path: :data:`TIE_RULE`), oldest first."""
    return sorted(runs, key=lambda run: (run.date, str(run.path)))


def _newest(ordered: list[Run], offered: dict[int, list[str]], keys: SettingKeys) -> list[tuple[Run, list[str]]]:
    """Per setting key and task the newest of ``ordered`` (oldest first): each run with the tasks it contributes
    (runs contributing none left out)."""
    newest: dict[tuple[str, str], Run] = {}
    for run in ordered:  # oldest first: a newer run replaces an older one's tasks
        for task in offered[id(run)]:
            newest[(setting_key(keys, run), task)] = run
    chosen = [(run, [task for task in offered[id(run)] if newest[(setting_key(keys, run), task)] is run])
              for run in ordered]  # fmt: skip
    return [(run, tasks) for run, tasks in chosen if tasks]


def _kept_apart(ordered: list[Run], keys: SettingKeys) -> list[Finding]:
    """A warning per model whose runs the selection keeps apart because they differ in a recorded fact that changes
    the numbers (:func:`setting_keys`): the facts, and per setting its results files (the first named)."""
    by_identity: dict[str, dict[str, list[Run]]] = {}
    for run in ordered:
        if keys[id(run)][1]:
            by_identity.setdefault(run.identity, {}).setdefault(keys[id(run)][1], []).append(run)
    findings = []
    for identity, settings in by_identity.items():
        files = "; ".join(
            f"[{apart}]: {group[0].path}" + (f" and {len(group) - 1} more" if len(group) > 1 else "")
            for apart, group in settings.items()
        )
        message = f"{identity}: runs kept apart, one row each, as they differ in what changes the numbers: {files}"
        findings.append(Finding("", "", "runs kept apart", message))
    return findings


def _tied(
    runs: list[Run], offered: dict[int, list[str]], keys: SettingKeys, chosen: list[tuple[Run, list[str]]]
) -> list[Finding]:
    """A warning for each run (in the order given) that the selection leaves out for a task because another run of
    the same model has the same date (:data:`TIE_RULE` decided), naming both files and the tasks."""
    kept_for = {(setting_key(keys, run), task): run for run, names in chosen for task in names}
    left: dict[tuple[int, int], list[str]] = {}
    for run in runs:
        for task in offered[id(run)]:
            kept = kept_for.get((setting_key(keys, run), task))
            if kept is not None and kept is not run and kept.date == run.date:
                left.setdefault((id(kept), id(run)), []).append(task)
    by_id = {id(run): run for run in runs}
    return [
        Finding(
            "", "", "tied runs",
            f"{by_id[kept].path} and {by_id[out].path}: one model ({by_id[kept].identity}), the same date: "
            f"{', '.join(names)} taken from {by_id[kept].path} ({TIE_RULE}); {by_id[out].path} left out",
        )
        for (kept, out), names in left.items()
    ]  # fmt: skip
