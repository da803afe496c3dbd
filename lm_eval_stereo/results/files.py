"""The files of a run as lm_eval 0.4.13 names them, and the guards every one of them passes before it is parsed.

Where lm_eval puts a run (``EvaluationTracker.save_results_aggregated`` and ``save_results_samples``):

- ``--output_path DIR`` (a folder): ``DIR/<model name>/results_<date>.json``, the samples beside it as
  ``samples_<task>_<date>.jsonl``;
- ``--output_path DIR/NAME.json`` (its file form): ``DIR/NAME_<date>.json``, the samples in ``DIR`` as
  ``samples_<task>_<date>.jsonl``.

``<date>`` is the time the run was saved, ``2026-01-01T12-30-00.123456`` (ISO format, ``:`` written as ``-``): a
``*_<date>.json`` file below a folder is read as a run as well as every ``results_*.json``, and one that is not lm_eval
results is skipped with a warning naming it, as any unreadable results file is.

Guards (a hostile or broken file is skipped and named with the reason; the other runs are still read):

- a results file larger than :data:`MAX_RESULTS_BYTES` is not read. lm_eval's results files hold the metrics and the
  configs of the tasks: a few KB per task, a few MB for hundreds of tasks; 64 MiB leaves a margin of ten and more,
  and bounds what parsing one file costs (some hundreds of MB of memory);
- JSON nested deeper than :data:`MAX_DEPTH` levels is refused, in a results file and in a samples line: lm_eval
  writes fewer than ten (``configs.<task>.metadata.facts.<name>``), and Python's parser stops near a thousand with a
  ``RecursionError``, which every later reader would meet again. Samples files are read a line at a time, without a
  size limit (their size grows with the documents of a task).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.whole_files import PART_SUFFIX

#: the largest results file read (bytes); see the module docstring
MAX_RESULTS_BYTES = 64 * 1024 * 1024
#: the deepest nesting of objects and lists read, in a results file or a samples line
MAX_DEPTH = 64
#: lm_eval's ``date_id``: ``datetime.now().isoformat()`` with ``:`` replaced by ``-``
DATE_ID = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
#: a results file of the file form of ``--output_path`` (``NAME_<date>.json``)
_FILE_FORM = re.compile(rf"^(?P<name>.+)_(?P<date>{DATE_ID})\.json$")


class UnreadableJson(ValueError):
    """Text that is no JSON (or no UTF-8); the message says where it breaks."""


class RefusedJson(UnreadableJson):
    """JSON the guards refuse to read: too large, or nested too deep; the message says which."""


def results_files_below(folder: Path) -> list[Path]:
    """The results files below ``folder``, in path order: every ``results_*.json`` and every ``NAME_<date>.json``
    (the file form of ``--output_path``); none inside a folder named ``.*.part`` (where lm_eval writes a run's files
    before they are renamed into place whole: :mod:`lm_eval_stereo.core.lm_eval_files`; a killed run leaves one)."""
    found = [
        file
        for file in folder.rglob("*.json")
        if (file.name.startswith("results_") or _FILE_FORM.match(file.name))
        and not any(_staging(part) for part in file.relative_to(folder).parts[:-1])
        and file.is_file()
    ]
    return sorted(found)


def _staging(name: str) -> bool:
    """Whether a folder named ``name`` holds files on their way to their place (``.<name>.part``)."""
    return name.startswith(".") and name.endswith(PART_SUFFIX)


def date_id(results_path: Path) -> str:
    """The ``<date>`` that names a run's samples files: the end of ``NAME_<date>.json``, else the name of a
    ``results_*.json`` after ``results_`` (a file written or renamed by hand)."""
    match = _FILE_FORM.match(results_path.name)
    return match["date"] if match else results_path.stem.removeprefix("results_")


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests objects and lists deeper than ``limit`` levels (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse(text: str) -> Any:
    """``text`` as JSON; :class:`UnreadableJson` when it is none, :class:`RefusedJson` when it nests deeper than
    :data:`MAX_DEPTH` levels."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise RefusedJson(f"nested deeper than {MAX_DEPTH} levels (JSON that no lm_eval writes)") from None
    except json.JSONDecodeError as exc:
        raise UnreadableJson(str(exc)) from None
    if too_deep(value):
        raise RefusedJson(f"nested deeper than {MAX_DEPTH} levels (JSON that no lm_eval writes)")
    return value


def read_results_text(path: Path) -> str:
    """The text of the results file ``path``; :class:`RefusedJson` when it is larger than :data:`MAX_RESULTS_BYTES`,
    :class:`UnreadableJson` when it is no UTF-8, OSError when it cannot be read."""
    with open(path, "rb") as handle:
        raw = handle.read(MAX_RESULTS_BYTES + 1)
    if len(raw) > MAX_RESULTS_BYTES:
        limit = MAX_RESULTS_BYTES // (1024 * 1024)
        raise RefusedJson(f"larger than {limit} MiB, the most a results file is read at (lm_eval writes a few MB)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableJson(f"not UTF-8 ({exc})") from None


def lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-blank lines of a samples file with their numbers (from 1), read one at a time."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line
