"""What one run publishes: the headlines of its tasks (:mod:`.headlines`), the logged items of its plugin tasks, and
every omission with its reason.

Items come from lm_eval's ``--log_samples`` file beside the results; a samples file that cannot be read, or holds
fewer items than the results counted documents (a truncated file), is not used, and that is said."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.metrics import MetricSet
from lm_eval_stereo.export.distance import Distances
from lm_eval_stereo.export.headlines import Headline, Omission, lm_eval_headlines, plugin_headlines
from lm_eval_stereo.report.capability import hidden_tasks
from lm_eval_stereo.report.comparisons import load_items, samples_path
from lm_eval_stereo.report.declarations import declaration_of
from lm_eval_stereo.report.runs import Run

Items = list[dict[str, Any]]


@dataclass(frozen=True)
class TaskItems:
    """The logged items of one plugin task (sorted by key, as the task computed its metrics) and its metric set."""

    task: str
    metric_set: MetricSet
    items: Items
    #: the document of each item as lm_eval logged it (JSON), by item key
    documents: dict[str, str]


@dataclass
class RunExport:
    run: Run
    headlines: list[Headline] = field(default_factory=list)
    omissions: list[Omission] = field(default_factory=list)
    item_sets: list[TaskItems] = field(default_factory=list)

    @property
    def has_plugin_task(self) -> bool:
        return any(headline.benchmark is not None for headline in self.headlines) or bool(self.item_sets)


def logged_documents(path: Path) -> dict[str, str]:
    """The logged document of each plugin item of a samples file that :func:`load_items` read, as JSON by key."""
    documents = {}
    for line in filter(str.strip, path.read_text(encoding="utf-8").splitlines()):
        sample = json.loads(line)
        item = sample[sample["metrics"][0]]
        documents[str(item.get("key", item.get("id")))] = json.dumps(sample.get("doc"), sort_keys=True)
    return documents


def logged_items(run: Run, task: str) -> tuple[Items | None, str]:
    """The plugin items of ``task`` from its samples file, sorted by key, or None and why (empty: not logged)."""
    path = samples_path(run, task)
    if not path.is_file():
        return None, ""
    try:
        found = load_items(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"samples file unreadable ({exc}): no distance CI, no per-item lines"
    if found is None:
        return None, ""
    documents = run.items(task)
    if documents is not None and len(found) != documents[0]:
        return None, (
            f"{path.name} holds {len(found)} items, the results {documents[0]} documents (truncated?): "
            "no distance CI, no per-item lines"
        )
    return [found[key] for key in sorted(found)], ""


def collect(run: Run, tasks: list[str]) -> RunExport:
    """Headlines, items and omissions of ``tasks`` of ``run`` (members of lm_eval's own groups left to the group)."""
    export = RunExport(run)
    hidden = hidden_tasks(run)
    for task in (task for task in tasks if task not in hidden):
        declaration = declaration_of(run, task)
        if declaration is None:
            headlines, omitted = lm_eval_headlines(run, task)
            export.headlines += headlines
            export.omissions += omitted
            continue
        items, why = logged_items(run, task) if not run.members(task) else (None, "")
        if why:
            export.omissions.append(Omission(task, "", why))
        if items:
            declaration = declaration_of(run, task, items) or declaration
        metric_set = declaration.metric_set
        distances = Distances(items, metric_set) if items and metric_set is not None else None
        headlines, omitted = plugin_headlines(run, task, declaration, distances)
        export.headlines += headlines
        export.omissions += omitted
        if any(omission.untrusted_items for omission in omitted):
            export.omissions.append(Omission(task, "", "no per-item lines: the logged items are not the run's"))
        elif items and metric_set is not None:
            if metric_set.item_score is not None:
                documents = logged_documents(samples_path(run, task))
                export.item_sets.append(TaskItems(task, metric_set, items, documents))
            else:
                reason = f"no per-item lines: {metric_set.id} declares no item score"
                export.omissions.append(Omission(task, "", reason))
    return export
