"""Exceptions raised by the data layer, each message saying what went wrong and how to fix it, and :func:`fail`, the
plugin's one-line end of a run."""

from __future__ import annotations

import sys
from typing import NoReturn


def fail(message: str) -> NoReturn:
    """End the run with ``lm-eval-stereo: message`` on stderr, exit status 2 (the plugin's one-line errors)."""
    sys.stderr.write(f"lm-eval-stereo: {message}\n")
    raise SystemExit(2)


class RunStop(BaseException):
    """A problem found while a run works that ends it in one line (:func:`fail`, where lm_eval's command line ran it;
    the message is that line): a :class:`BaseException`, as :class:`SystemExit` is, so that no retry loop (lm_eval's
    API models', tenacity's, the plugin's served backends') takes it for a failed request and asks again, and no
    handler of lm_eval's that logs and goes on (``except Exception``) swallows it."""


def quiet_requests_in_flight() -> None:
    """Silence lm_eval's API models' log as a :class:`RunStop` ends the run: each request still in flight would be
    logged as failed and "retrying"."""
    import logging

    logging.getLogger("lm_eval.models.api_models").disabled = True


class DataError(RuntimeError):
    """Base class of every data problem the plugin reports to the user."""


class DataUnavailableError(DataError):
    """A source file is neither in the offline mirror nor in the cache and cannot be downloaded."""


class NoNetworkError(DataUnavailableError):
    """Nothing can be downloaded here (downloads forbidden, or the host does not answer): every other download would
    fail the same way."""


class CacheWriteError(DataUnavailableError):
    """The download cache cannot hold a file (a full disk, a read-only folder): every other file would fail the same
    way."""


class ChecksumError(DataError):
    """A file's digest (sha256, or git blob id) differs from the pinned one; the file is never used."""

    def __init__(self, where: str, expected: str, actual: str, kind: str = "sha256") -> None:
        self.where, self.expected, self.actual = where, expected, actual
        super().__init__(
            f"checksum mismatch for {where}: expected {kind} {expected}, got {actual}. "
            "The file was not used. If it comes from LM_EVAL_STEREO_DATA_DIR, replace it with the upstream "
            "file at the pinned commit; if it was downloaded, delete the cache entry and retry."
        )


class MalformedDataError(DataError):
    """A file is readable but a row or column does not have the expected shape."""

    def __init__(self, file: str, problem: str, row: int | None = None, field: str | None = None) -> None:
        self.file, self.row, self.field, self.problem = file, row, field, problem
        where = file
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {problem}")


class ModelFolderError(DataError):
    """A local model folder the model arguments name cannot give what a task needs (a tokenizer that encodes text)."""


class OptionError(ValueError):
    """A task option (``--metadata``) is unknown or has an invalid value; the message names the option."""
