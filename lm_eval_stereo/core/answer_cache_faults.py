"""An answer cache (``--use_cache``) that cannot be opened or written: one line naming the file, and the answers it
already holds kept for the run that resumes.

lm_eval 0.4.13's ``CachingLM`` keeps its answers in an SQLite file through ``sqlitedict``, which runs every statement
in a thread of its own: a file it cannot open (a read-only folder) fails in that thread, with a traceback and a page
of log lines on the console; a write that fails (the disk full) raises a bare ``sqlite3.OperationalError`` from deep
in the scoring, named by no path. Here:

- before lm_eval opens the file (:func:`check_writable`), its folder is made and the database opened, created where
  missing, and a write tried and rolled back: a folder that is read-only or a disk that is full stops the run in one
  line naming the file, before the first request;
- every write of an answer goes through :func:`writing`: a failure (the disk filled while the run worked, the folder
  turned read-only) is an :class:`AnswerCacheUnwritable` naming the file and the reason, which ends the run in its one
  line (:class:`~lm_eval_stereo.core.errors.RunStop`). SQLite commits each answer as it is stored, so every answer
  stored before the failure stays in the file, and the same command resumes from them;
- ``sqlitedict``'s log of its thread's error (a traceback, line by line) is left out (:func:`quiet_sqlitedict`): the
  error itself reaches the caller, which says it in one line.

A cache that cannot be used is one of the changes the plugin makes to lm_eval's own tasks too: a clear line where
lm_eval ends in a trace.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.errors import RunStop, quiet_requests_in_flight

#: what the user can do about a cache that cannot be written
ADVICE = (
    "free space there or make it writable and run the same command again (the answers it holds are kept), or give "
    "another --use_cache path"
)
#: the table a write is tried on and rolled back (never kept)
PROBE_TABLE = "lm_eval_stereo_probe"
#: sqlitedict's logger of its statements' thread, whose errors reach the caller too
SQLITEDICT_THREAD_LOGGER = "sqlitedict.SqliteMultithread"


class AnswerCacheUnwritable(RunStop):
    """An answer that could not be stored in the ``--use_cache`` file; the message names the file and the reason."""


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__


def check_writable(path: str, lock_timeout: float) -> str | None:
    """The reason the ``--use_cache`` file at ``path`` cannot take an answer (its folder cannot be made, the database
    cannot be opened or created, or a write tried on it fails: a read-only folder, a full disk), else None. The write
    is rolled back; a database it had to create is left empty, as lm_eval would create it. ``lock_timeout``: seconds
    to wait for another run that writes the same file."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, timeout=lock_timeout, isolation_level=None)
        try:
            connection.execute("BEGIN")
            connection.execute(f'CREATE TABLE "{PROBE_TABLE}" (x)')
            connection.execute("ROLLBACK")
        finally:
            connection.close()
    except (OSError, sqlite3.Error) as exc:
        return _reason(exc)
    return None


def unwritable_line(path: str, reason: str) -> str:
    """The one line of a ``--use_cache`` file that cannot be written."""
    return f"--use_cache: {path} cannot be written ({reason}): {ADVICE}"


@contextmanager
def writing(store: Any) -> Iterator[None]:
    """A write (or commit) of lm_eval's ``SqliteDict`` ``store``; a failure is an :class:`AnswerCacheUnwritable`
    naming its file."""
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        quiet_requests_in_flight()
        raise AnswerCacheUnwritable(unwritable_line(str(getattr(store, "filename", "?")), _reason(exc))) from None


class _Reraised(logging.Filter):
    """Drops the records of sqlitedict's thread: each error it logs is raised to the caller too."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


def quiet_sqlitedict() -> None:
    """Leave sqlitedict's log of its thread's errors out of the console, once per process (see the module
    docstring)."""
    logger = logging.getLogger(SQLITEDICT_THREAD_LOGGER)
    if not any(isinstance(existing, _Reraised) for existing in logger.filters):
        logger.addFilter(_Reraised())
