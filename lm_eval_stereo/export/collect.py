"""What one run publishes: the headlines of its tasks (:mod:`.headlines`), the logged items of its plugin tasks, and
every omission with its reason.

Items come from lm_eval's ``--log_samples`` file beside the results; a samples file that cannot be read, or holds
fewer items than the results counted documents (a truncated file), is not used, and that is said."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lm_eval_stereo.core.metrics import MetricSet
from lm_eval_stereo.export.distance import Distances
from lm_eval_stereo.export.headlines import Headline, Omission, lm_eval_headlines, plugin_headlines
from lm_eval_stereo.results.declarations import Declaration
from lm_eval_stereo.results.lm_eval_tasks import hidden_tasks
from lm_eval_stereo.results.run import Run

Items = list[dict[str, Any]]


@dataclass(frozen=True)
class TaskItems:
    """The logged items of one plugin task (sorted by key, as the task computed its metrics) and its metric set."""

    task: str
    metric_set: MetricSet
    items: Items
    #: the document of each item as lm_eval logged it (JSON), by item key
    documents: dict[str, str]
    #: the key of each item of ``items`` (the field the task recorded, :meth:`Run.logged`)
    keys: tuple[str, ...] = ()


@dataclass
class RunExport:
    run: Run
    headlines: list[Headline] = field(default_factory=list)
    omissions: list[Omission] = field(default_factory=list)
    item_sets: list[TaskItems] = field(default_factory=list)

    @property
    def has_plugin_task(self) -> bool:
        return any(headline.benchmark is not None for headline in self.headlines) or bool(self.item_sets)


def logged_items(run: Run, task: str) -> tuple[list[str] | None, str]:
    """The keys of the plugin items of ``task`` (sorted) as the run read them once (:meth:`Run.logged`), or None and
    why (empty: not logged)."""
    logged = run.logged(task)
    if logged.error is not None:
        return None, f"samples file unreadable ({logged.error}): no distance CI, no per-item lines"
    if logged.items is None:
        return None, ""
    documents = run.document_counts(task)
    if documents is not None and len(logged.items) + len(logged.skipped) != documents[0]:
        malformed = f" and {len(logged.skipped)} malformed line(s) ({logged.skipped[0]})" if logged.skipped else ""
        return None, (
            f"{logged.path.name} holds {len(logged.items)} items{malformed}, the results {documents[0]} documents "
            "(truncated?): no distance CI, no per-item lines"
        )
    return sorted(logged.items), ""


def _nothing_to_publish(run: Run, task: str, declaration: Declaration) -> str:
    """Why a plugin task or group has no result in the record: its metric sets declare no headline with the seeded
    bootstrap's interval (the leakage regression), a group has no aggregate of its own, or the results hold none of
    its headlines."""
    sets = declaration.metric_sets
    if sets and not any(m.headline and m.interval == "bootstrap" for s in sets for m in s.metrics):
        ids = ", ".join(sorted({s.id for s in sets}))
        return f"no result: {ids} declares no headline with a bootstrap interval (nothing to rank)"
    if run.members(task):
        return "no result of its own: a group without an aggregate (its members are published or counted)"
    return "no result: the results hold none of its declared headlines"


def collect(run: Run, tasks: list[str]) -> RunExport:
    """Headlines, items and omissions of ``tasks`` of ``run`` (members of lm_eval's own groups left to the group)."""
    export = RunExport(run)
    hidden = hidden_tasks(run)
    for task in (task for task in tasks if task not in hidden):
        declaration = run.declaration(task)
        if declaration is None:
            headlines, omitted = lm_eval_headlines(run, task)
            export.headlines += headlines
            export.omissions += omitted
            continue
        keys, why = logged_items(run, task) if not run.members(task) else (None, "")
        if why:
            export.omissions.append(Omission(task, "", why, "no per-item lines"))
        logged = run.logged(task) if keys else None
        items = [logged.items[key] for key in keys] if logged and logged.items and keys else None
        metric_set = declaration.metric_set
        distances = Distances(items, metric_set) if items and metric_set is not None else None
        if logged is not None and logged.skipped:  # the distance's interval would rest on other items than the run's
            distances = None
            why = f"{len(logged.skipped)} malformed samples line(s) skipped ({logged.skipped[0]}"
            why = f"{why}): no distance CI, no per-item line for them"
            export.omissions.append(Omission(task, "", why, "no per-item lines"))
        headlines, omitted = plugin_headlines(run, task, declaration, distances)
        export.headlines += headlines
        export.omissions += omitted
        if not headlines and not omitted:
            export.omissions.append(
                Omission(task, "", _nothing_to_publish(run, task, declaration), "nothing to publish")
            )
        if any(omission.untrusted_items for omission in omitted):
            why = "no per-item lines: the logged items are not the run's"
            export.omissions.append(Omission(task, "", why, "no per-item lines"))
        elif items and metric_set is not None and logged is not None:
            if metric_set.item_score is not None:
                export.item_sets.append(TaskItems(task, metric_set, items, logged.documents, tuple(keys)))
            else:
                reason = f"no per-item lines: {metric_set.id} declares no item score"
                export.omissions.append(Omission(task, "", reason, "no per-item lines"))
    return export
