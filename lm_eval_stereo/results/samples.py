"""The logged items of a task: lm_eval's ``--log_samples`` file ``samples_<task>_<timestamp>.jsonl`` beside
``results_<timestamp>.json``, read once per run and task (:meth:`lm_eval_stereo.results.run.Run.logged`).

A plugin task logs its whole item under its first metric (:mod:`lm_eval_stereo.core.summary`); an item is keyed by
the field the task recorded in its config metadata (``key_field``), or for results written before tasks recorded it
by :func:`lm_eval_stereo.results.legacy.item_key`. The document lm_eval logged beside each item is kept as JSON.
lm_eval's own tasks that a benchmark declares log no plugin item: the declaration turns their lines into items
(:func:`read_lm_eval_logged`), and :class:`Recomputed` holds what those items add to lm_eval's numbers
(:mod:`lm_eval_stereo.results.recomputed`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lm_eval_stereo.results.files import UnreadableJson, date_id, lines, parse

Items = dict[str, dict[str, Any]]
KeyOf = Callable[[Mapping[str, Any]], Any]


def samples_path(results_path: Path, task: str) -> Path:
    """Where lm_eval's ``--log_samples`` put the samples of ``task`` for the results file ``results_path`` (either
    form of ``--output_path``: :func:`lm_eval_stereo.results.files.date_id`)."""
    return results_path.parent / f"samples_{task}_{date_id(results_path)}.jsonl"


@dataclass(frozen=True)
class Logged:
    """What a task's samples file holds: ``items`` by key (None when there is no file, it could not be read, or its
    samples carry no plugin item: not a plugin task), the logged ``documents`` as JSON by item key, and the
    ``error`` that made the file unreadable (None when it was read, or is absent), and the malformed lines
    ``skipped`` (``path:line: why``)."""

    path: Path
    exists: bool
    items: Items | None = None
    documents: dict[str, str] = field(default_factory=dict)
    error: Exception | None = None
    skipped: tuple[str, ...] = ()

    def sorted_items(self) -> list[dict[str, Any]]:
        """The items sorted by key, as the task computed its metrics (empty without items)."""
        return [self.items[key] for key in sorted(self.items)] if self.items else []


def read_items(
    path: Path, key_of: KeyOf, key_name: str, expected: bool = False
) -> tuple[Items | None, dict[str, str], list[str]]:
    """The plugin items of a samples file by key, their logged documents (None when no line carries an item: not a
    plugin task, unless ``expected``: a plugin task's file, whose lines must carry one) and the malformed lines skipped
    (``path:line: why``); ``key_of`` gives an item's key, ``key_name`` names it. ValueError naming the first malformed
    line when no line gave an item."""
    items: Items = {}
    documents: dict[str, str] = {}
    skipped: list[tuple[int, str]] = []
    without_item: list[tuple[int, str]] = []
    for number, line in lines(path):
        try:
            sample = parse(line)
        except UnreadableJson as exc:
            skipped.append((number, f"{path}:{number}: not a JSON line ({exc})"))
            continue
        names = sample.get("metrics") if isinstance(sample, dict) else None
        item = sample.get(names[0]) if isinstance(names, list) and names and isinstance(names[0], str) else None
        if not isinstance(item, dict):
            why = "no logged item (a sample object with its metrics' item)"
            if item is not None:
                why = f"the logged item under {names[0]!r} is {type(item).__name__}, not an object"
            without_item.append((number, f"{path}:{number}: {why}"))
            continue
        key = key_of(item)
        if key is None or str(key) in items:
            why = f"the item has no {key_name}" if key is None else f"its {key_name} {key!r} was logged before"
            skipped.append((number, f"{path}:{number}: {why}"))
            continue
        items[str(key)] = item
        documents[str(key)] = json.dumps(sample.get("doc"), sort_keys=True)
    malformed = sorted(skipped + without_item) if expected else skipped
    if not items and malformed:
        raise ValueError(f"{malformed[0][1]} (and {len(malformed) - 1} more malformed lines; no item read)")
    if not items:
        return None, {}, []
    return items, documents, [why for _, why in sorted(skipped + without_item)]


def read_lm_eval_logged(path: Path, items_of: Callable[[list[dict[str, Any]]], Items]) -> Logged:
    """The samples file of one of lm_eval's own tasks that a benchmark declares: its lines, turned into items by the
    declaration's ``items_of`` (:class:`~lm_eval_stereo.core.registry.LmEvalTasks`); an unreadable file is its
    ``error``."""
    if not path.is_file():
        return Logged(path, False)
    try:
        samples = []
        for number, line in lines(path):
            try:
                samples.append(parse(line))
            except UnreadableJson as exc:
                raise ValueError(f"{path}:{number}: not a JSON line ({exc})") from None
        items = items_of(samples)
        docs = {sample.get("doc_id"): sample.get("doc") for sample in samples}
        documents = {key: json.dumps(docs.get(item.get("doc_id")), sort_keys=True) for key, item in items.items()}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError) as exc:
        return Logged(path, True, error=exc)
    return Logged(path, True, items, documents)


def read_logged(path: Path, key_of: KeyOf, key_name: str, expected: bool = False) -> Logged:
    """The samples file at ``path`` read once (:class:`Logged`; an unreadable file is its ``error``, not raised;
    ``expected``: a plugin task's file, :func:`read_items`)."""
    if not path.is_file():
        return Logged(path, False)
    try:
        items, documents, skipped = read_items(path, key_of, key_name, expected)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return Logged(path, True, error=exc)
    return Logged(path, True, items, documents, skipped=tuple(skipped))


#: what a task without its logged samples is told
NO_SAMPLES = "its 95% CI needs the logged samples: rerun lm_eval with --log_samples"


@dataclass(frozen=True)
class Recomputed:
    """``values``: what the logged samples add to lm_eval's results of one task (interval bounds, undefined
    resamples, bootstrap standard errors, declared figures lm_eval does not report); ``figures``: the recomputed
    point estimates of lm_eval's own metrics; ``note``: why intervals are missing (empty where none is)."""

    values: dict[str, float] = field(default_factory=dict)
    figures: dict[str, float] = field(default_factory=dict)
    note: str = ""
