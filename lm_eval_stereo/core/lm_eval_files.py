"""lm_eval's own files of a run, ``results_*.json`` and ``samples_*.jsonl``, written whole or not at all, and a write
that failed the end of the run in one line naming the file and the reason.

lm_eval 0.4.13's ``EvaluationTracker`` writes the results with one ``write_text`` and each task's samples line by line
into their file, inside a ``try`` that logs "Could not save ..." and the exception's ``repr`` and goes on: a full disk
leaves half a results file and exit status 0, an ``--output_path`` turned read-only no results and exit status 0, room
for the results but not the samples a samples file cut after a few items. Around each of its two saves
(:func:`saved_whole`):

- lm_eval writes into a staging folder, ``.lm_eval_<token>.part`` (:data:`~lm_eval_stereo.core.whole_files.PART_SUFFIX`)
  in the folder ``--output_path`` names, its ``output_path`` pointed there for the call: the names and the layout are
  lm_eval's own, and what it logs names the real folder;
- what it wrote is checked whole (the results file is JSON; the samples file holds one line per sample), flushed to the
  disk and renamed into place, one atomic step: a reader finds the whole file or none (a run killed while it writes
  leaves a staging folder, which no reader takes for a run: :func:`lm_eval_stereo.results.files.results_files_below`);
- a write that failed (the exception lm_eval caught: its two log lines are left out) leaves nothing: the staging folder
  is removed, and a :class:`~lm_eval_stereo.core.whole_files.WriteError` names the file lm_eval meant to write and the
  reason. Under lm_eval's command line (:func:`run_files_checked`) the run goes on to its other files and its table, and
  then ends in one line (:class:`~lm_eval_stereo.core.errors.RunStop`, exit status 2); a caller of the tracker of its
  own gets the :class:`~lm_eval_stereo.core.whole_files.WriteError` at once.

lm_eval's logger is let down to warnings for the call (where ``--verbosity`` is quieter), so that the exception it
caught is seen; what it logs below the level asked for is still left out. A push to the Hugging Face Hub that fails
after the file was written whole is logged as lm_eval logs it; the samples push uploads the staging folder, which holds
the task's new file only (lm_eval uploads the run's whole folder). Files written whole are one of the changes the
plugin makes to lm_eval's own tasks too (lm_eval 0.4.13 has no extension point for how it writes them).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.errors import RunStop
from lm_eval_stereo.core.whole_files import PART_SUFFIX, WriteError

#: the logger of lm_eval's ``EvaluationTracker``
TRACKER_LOGGER = "lm_eval.loggers.evaluation_tracker"
#: the staging folder's name in this process: one per process, so that lm_eval's "Saving per-task samples to ..."
#: (logged once per text) reads the same for every task
STAGE_NAME = f".lm_eval_{secrets.token_hex(4)}{PART_SUFFIX}"

#: the writes that failed in the command in progress (:func:`run_files_checked`); None where none is
_failed: list[WriteError] | None = None


class _Caught(logging.Filter):
    """Holds the records lm_eval's tracker logs while it handles an exception (``caught``: each with its exception),
    leaves out those below the level asked for (``shown``), and writes ``real`` for ``stage`` in the rest."""

    def __init__(self, stage: str, real: str, shown: int) -> None:
        super().__init__()
        self.stage, self.real, self.shown = stage, real, shown
        self.outer = sys.exc_info()[1]
        self.caught: list[tuple[BaseException, logging.LogRecord]] = []

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self.stage in message:
            record.msg, record.args = message.replace(self.stage, self.real), None
        handled = sys.exc_info()[1]
        if handled is not None and handled is not self.outer:
            self.caught.append((handled, record))
            return False
        return record.levelno >= self.shown


@contextlib.contextmanager
def _watched(stage: str, real: str) -> Iterator[_Caught]:
    """lm_eval's tracker logger with a :class:`_Caught` filter, let down to warnings, while the block runs."""
    logger = logging.getLogger(TRACKER_LOGGER)
    caught = _Caught(stage, real, logger.getEffectiveLevel())
    level = logger.level
    logger.addFilter(caught)
    if caught.shown > logging.WARNING:
        logger.setLevel(logging.WARNING)
    try:
        yield caught
    finally:
        logger.removeFilter(caught)
        logger.setLevel(level)


#: the bytes read at a time where a samples file's lines are counted
CHUNK = 1 << 20


def _ended_lines(file: Path) -> tuple[int, bool]:
    """The lines of ``file`` (read a chunk at a time: samples files grow with a task's documents), and whether its
    last one is ended (an empty file's is)."""
    count, last = 0, b"\n"
    with open(file, "rb") as stream:
        while chunk := stream.read(CHUNK):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count, last == b"\n"


def _whole(file: Path, lines: int | None) -> bool:
    """Whether ``file`` was written whole: JSON (``lines`` None), or ``lines`` lines each ended."""
    try:
        if lines is None:
            json.loads(file.read_bytes())
            return True
        return _ended_lines(file) == (lines, True)
    except (OSError, ValueError):
        return False


def _sync(file: Path) -> None:
    with open(file, "rb") as handle:
        os.fsync(handle.fileno())


def _reason(caught: list[tuple[BaseException, logging.LogRecord]]) -> str:
    for exc, _ in caught:
        if isinstance(exc, OSError):
            return exc.strerror or str(exc)
    return f"{type(caught[0][0]).__name__}: {caught[0][0]}" if caught else "lm_eval wrote it in part"


def saved_whole(tracker: Any, save: Callable[[], Any], name: Callable[[Path, str], str], lines: int | None) -> Any:
    """Run ``save`` (one of the tracker's saves) into a staging folder and rename what it wrote into place whole (see
    the module docstring); its result. ``name(output_path, date_id)``: the name of the file it writes; ``lines``: the
    samples it writes (None: the results, JSON). An earlier samples file of that name, which lm_eval would append to,
    is carried into the staging folder first."""
    output = getattr(tracker, "output_path", None)
    if not output:
        return save()
    given = Path(output)
    base = given.parent if given.suffix == ".json" else given
    stage = base / STAGE_NAME
    folder = Path() if given.suffix == ".json" else Path(str(tracker.general_config_tracker.model_name_sanitized))
    shutil.rmtree(stage, ignore_errors=True)
    try:
        if lines is not None:
            lines += _carry_earlier(base / folder / name(given, getattr(tracker, "date_id", "?")), stage / folder)
        tracker.output_path = str(stage / given.name) if given.suffix == ".json" else str(stage)
        try:
            with _watched(str(stage), str(base)) as caught:
                result = save()
        finally:
            tracker.output_path = output
        target = base / folder / name(given, getattr(tracker, "date_id", "?"))
        try:
            _into_place(stage / folder / target.name, target, lines, caught)
        except WriteError as exc:
            _failure(exc)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return result


def _into_place(staged: Path, target: Path, lines: int | None, caught: _Caught) -> None:
    """``staged`` renamed onto ``target`` once it is whole; :class:`WriteError` naming ``target`` where it is not (the
    reason: the exception lm_eval caught) or cannot be renamed there."""
    if not _whole(staged, lines):
        raise WriteError(target, _reason(caught.caught))
    for _, record in caught.caught:  # the file was whole: what lm_eval caught came after it (a push to the Hub)
        if record.levelno >= caught.shown:
            logging.getLogger(TRACKER_LOGGER).handle(record)
    try:
        _sync(staged)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, target)
    except OSError as exc:
        raise WriteError(target, exc.strerror or str(exc)) from None


def _carry_earlier(earlier: Path, stage_folder: Path) -> int:
    """The earlier samples file lm_eval would append to, copied into the staging folder; its lines (0: none)."""
    if not earlier.is_file():
        return 0
    with contextlib.suppress(OSError):  # a copy that cannot be made is a file not whole, named as it
        stage_folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(earlier, stage_folder / earlier.name)
    return _ended_lines(earlier)[0]


def results_name(output_path: Path, date_id: str) -> str:
    """The name lm_eval gives a run's results file: ``results_<date>.json``, or ``NAME_<date>.json`` for the file form
    of ``--output_path`` (``DIR/NAME.json``)."""
    return f"{output_path.stem}_{date_id}.json" if output_path.suffix == ".json" else f"results_{date_id}.json"


def samples_name(task_name: str) -> Callable[[Path, str], str]:
    """The name lm_eval gives a task's samples file, ``samples_<task>_<date>.jsonl``, as :func:`saved_whole` asks it."""
    return lambda output_path, date_id: f"samples_{task_name}_{date_id}.jsonl"


def _failure(exc: WriteError) -> None:
    """Keep ``exc`` for the end of the command in progress, or raise it where none is."""
    if _failed is None:
        raise exc
    _failed.append(exc)


def failure_line(failed: list[WriteError]) -> str:
    """The one line of a run whose files could not all be written: the first, and how many more."""
    more = len(failed) - 1
    return f"{failed[0]}" + (f"; {more} more of this run's files could not be written either" if more else "")


@contextlib.contextmanager
def run_files_checked() -> Iterator[None]:
    """While lm_eval's command works, a write of its results or samples that failed is kept, the run going on to its
    other files and its table; at the end, :class:`~lm_eval_stereo.core.errors.RunStop` with :func:`failure_line`."""
    global _failed
    outer, _failed = _failed, []
    try:
        yield
        failed = _failed
    finally:
        _failed = outer
    if failed:
        raise RunStop(failure_line(failed))
