"""The ``--use_cache`` database as data: what is in the file, and whose answers it holds, read without unpickling.

lm_eval 0.4.13's ``CachingLM`` keeps its answers in an SQLite file through ``sqlitedict``: table ``unnamed``, one row
per request hash, each answer a **pickle**, which Python runs as code when lm_eval reads it. A cache file is therefore
to be trusted like code: use only one written on this machine by a run of yours (docs/RUNNING.md says so). What can
be checked before lm_eval opens the file is checked here (:func:`inspect`), with ``sqlite3`` and JSON only:

- that it is an SQLite database (its 16-byte header), whole (``PRAGMA quick_check``), and lm_eval's answer cache (no
  table but ``unnamed`` and :data:`RECORD_TABLE`);
- whose answers it holds: the plugin's record (:func:`write`), a JSON object of texts in a table of its own
  (:data:`RECORD_TABLE`), never a pickle, naming the backend under :data:`BACKEND` beside the model arguments (an API
  model's own ``model=`` among them); a record of another shape is refused, and the pickled record older plugins
  kept among the answers (:data:`OLD_RECORD_KEY`) is not read. A record of an earlier version named the backend
  ``model``, where an API model's ``model=`` argument replaced it: it is compared in that form
  (:func:`differences`).

A problem is a :class:`CacheFileError` whose message names the file, what is wrong and what to do.

lm_eval reads and writes the answers through an :class:`AnswerCache` (installed by
:mod:`lm_eval_stereo.hooks.answer_cache`): it never keeps an unanswered request, hands each answer it serves to the
backend where the backend accounts for them, and keeps the answers of the plugin's view of a backend under keys of
their own (:data:`PLUGIN_KEYS`, :mod:`lm_eval_stereo.models.router`), apart from lm_eval's answers to the same
request: the two may differ (a cut text, a marked score).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.answer_cache_faults import AnswerCacheUnwritable, writing
from lm_eval_stereo.core.unanswered import Unanswered

#: the table of lm_eval's answers (``sqlitedict``'s default table)
ANSWERS_TABLE = "unnamed"
#: the plugin's table of one row: the JSON record of whose answers the file holds
RECORD_TABLE = "lm_eval_stereo_answers_of"
#: the record's fact naming the backend (``--model``)
BACKEND = "backend"
#: the fact that named the backend in the records of earlier versions (now an API model's ``model=`` argument)
EARLIER_BACKEND = "model"
#: the key under which older plugins pickled their record among the answers
OLD_RECORD_KEY = "lm_eval_stereo:answers_of"
#: the prefix of the keys of the answers the plugin's view of a backend gave (lm_eval's own keys: a sha256 in hex)
PLUGIN_KEYS = "lm_eval_stereo/"
#: the first bytes of every SQLite 3 database
SQLITE_HEADER = b"SQLite format 3\x00"
#: seconds to wait for a database another process is writing
LOCK_TIMEOUT = 30.0
#: what the user can do about a file that cannot be used
ADVICE = "give this run its own --use_cache path (one per backend and model), or delete that file"


class CacheFileError(ValueError):
    """A ``--use_cache`` file that cannot be used; the message names it, what is wrong and what to do."""


@dataclass(frozen=True)
class CacheFile:
    """What a ``--use_cache`` file holds: ``answers`` (rows of lm_eval's answers), ``record`` (whose answers they
    are, None where no record was kept) and ``old_record`` (a pickled record of an older plugin, not read)."""

    path: str
    answers: int = 0
    record: dict[str, str] | None = None
    old_record: bool = False


def _refuse(path: str, problem: str) -> CacheFileError:
    return CacheFileError(f"--use_cache: {path} {problem}: {ADVICE}")


def _record(path: str, rows: list[tuple]) -> dict[str, str]:
    """The one row of :data:`RECORD_TABLE` as a record, or a :class:`CacheFileError` naming its shape."""
    if len(rows) != 1:
        raise _refuse(path, f"has {len(rows)} records of whose answers it holds, not one")
    try:
        record = json.loads(rows[0][0])
    except (TypeError, ValueError):
        record = None
    if not isinstance(record, dict) or not all(isinstance(v, str) for v in record.values()):
        record = None
    if record is None or not ({BACKEND, EARLIER_BACKEND} & record.keys()):
        raise _refuse(path, "has a record of whose answers it holds that is no JSON object of texts naming the backend")
    return record


def inspect(path: str) -> CacheFile:
    """What the ``--use_cache`` file at ``path`` holds (nothing where it does not exist yet or is empty), read with
    ``sqlite3`` alone; a file that is no whole answer cache, or whose record is malformed, is a
    :class:`CacheFileError`."""
    file = Path(path)
    if not file.exists():
        return CacheFile(path)
    if not file.is_file():
        raise _refuse(path, "is not a file")
    with open(file, "rb") as stream:
        header = stream.read(len(SQLITE_HEADER))
    if not header:
        return CacheFile(path)
    if header != SQLITE_HEADER:
        raise _refuse(path, "is not an SQLite database (lm_eval's --use_cache files are)")
    try:
        # read-write, never created: a transaction a killed run left is rolled back, as lm_eval's opening would
        connection = sqlite3.connect(f"{file.resolve().as_uri()}?mode=rw", uri=True, timeout=LOCK_TIMEOUT)
        try:
            (check,) = connection.execute("PRAGMA quick_check(1)").fetchone()
            if check != "ok":
                raise _refuse(path, f"is a damaged SQLite database ({check})")
            tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            foreign = sorted(tables - {ANSWERS_TABLE, RECORD_TABLE})
            if foreign:
                raise _refuse(path, f"is an SQLite database but no lm_eval answer cache (tables {', '.join(foreign)})")
            if ANSWERS_TABLE not in tables:
                return CacheFile(path)
            query = f'SELECT COUNT(*), SUM(key = ?) FROM "{ANSWERS_TABLE}"'
            rows, old = connection.execute(query, (OLD_RECORD_KEY,)).fetchone()
            record = None
            if RECORD_TABLE in tables:
                record = _record(path, connection.execute(f'SELECT record FROM "{RECORD_TABLE}"').fetchall())
        finally:
            connection.close()
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            raise _refuse(path, f"is in use by another process ({exc})") from None
        raise _refuse(path, f"cannot be read as an SQLite database ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise _refuse(path, f"is a damaged SQLite database ({exc})") from None
    return CacheFile(path, answers=rows - (old or 0), record=record, old_record=bool(old))


def write(path: str, record: dict[str, str]) -> None:
    """Keep ``record`` (whose answers the file at ``path`` holds) in its table, as JSON."""
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.execute(f'CREATE TABLE IF NOT EXISTS "{RECORD_TABLE}" (record TEXT NOT NULL)')
            connection.execute(f'DELETE FROM "{RECORD_TABLE}"')
            connection.execute(f'INSERT INTO "{RECORD_TABLE}" VALUES (?)', (json.dumps(record, sort_keys=True),))
    finally:
        connection.close()


def folder_fingerprint(folder: Path) -> str:
    """A fingerprint of the files of a model folder (names, sizes and modification times, not contents: cheap for
    weights of any size): new weights saved over the same folder give another."""
    import hashlib

    digest = hashlib.sha256()
    for file in sorted(path for path in folder.rglob("*") if path.is_file()):
        status = file.stat()
        digest.update(f"{file.relative_to(folder).as_posix()}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    return f"files-sha256:{digest.hexdigest()[:16]}"


def earlier_form(facts: dict[str, str]) -> dict[str, str]:
    """``facts`` as an earlier version recorded them: the backend under :data:`EARLIER_BACKEND`, which a model argument
    of that name replaced."""
    rest = {key: value for key, value in facts.items() if key != BACKEND}
    return {EARLIER_BACKEND: facts.get(BACKEND, "?"), **rest}


def differences(recorded: dict[str, str], ours: dict[str, str]) -> list[str]:
    """``key=theirs (this run: ours)`` for every fact of two records that differs, the backend first (a record of an
    earlier version, without :data:`BACKEND`, compared with :func:`earlier_form` of ours)."""
    if BACKEND not in recorded:
        ours = earlier_form(ours)
    keys = sorted(set(recorded) | set(ours), key=lambda key: (key not in (BACKEND, EARLIER_BACKEND), key))
    return [
        f"{key}={recorded.get(key, '(not set)')} (this run: {ours.get(key, '(not set)')})"
        for key in keys
        if recorded.get(key) != ours.get(key)
    ]


class AnswerCache:
    """lm_eval's request cache (a ``SqliteDict``) that never stores an unanswered request
    (:class:`~lm_eval_stereo.core.unanswered.Unanswered`, so that a resumed run asks again), tells the backend
    (``served``) of every answer it serves, reads and writes its keys with ``prefix`` before them (the plugin's
    view: :data:`PLUGIN_KEYS`), and names its file in the one line that ends the run where an answer cannot be
    stored (:mod:`lm_eval_stereo.core.answer_cache_faults`)."""

    def __init__(self, store: Any, served: Any = None, prefix: str = "") -> None:
        self._store = store
        self._served = served
        self._prefix = prefix
        #: an answer could not be stored: the run is ending, and the answers still coming (concurrent requests in
        #: flight) are not stored, nor raise again
        self._unwritable = False

    @property
    def store(self) -> Any:
        """The ``SqliteDict`` it reads and writes."""
        return self._store

    def __setitem__(self, key: str, value: Any) -> None:
        if isinstance(value, Unanswered) or self._unwritable:
            return
        try:
            with writing(self._store):
                self._store[self._prefix + key] = value
        except AnswerCacheUnwritable:
            self._unwritable = True
            raise

    def commit(self, blocking: bool = True) -> None:
        """Hand what was stored to the file (lm_eval's ``CachingLM`` calls it after each request type)."""
        with writing(self._store):
            self._store.commit(blocking=blocking)

    def __getitem__(self, key: str) -> Any:
        value = self._store[self._prefix + key]
        if self._served is not None:
            self._served(value)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._prefix + key in self._store

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._store, attr)
