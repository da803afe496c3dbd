"""Files written whole or not at all, and only inside the folder they belong to.

Every file a command of the plugin writes (the report's page, figures and ``--json``, the export's records and
per-item files, the data cache and mirror, the leakage command's fits and graph, the generated task YAMLs) goes
through this module:

- its bytes go to a temporary ``.<name>.<random>.part`` file beside it, created exclusively (a link planted under that
  name is refused, never followed), flushed to the disk, then renamed onto the file: one atomic step on one file
  system, so a reader finds the earlier file or the whole new one, never part of one. A link planted where the file
  goes is replaced by the file, never written through;
- files that belong together (a record and its per-item file, a page and its figures: :func:`write_files`) are all
  written first and renamed into place only once every one is whole, so the earlier set stays until its replacement
  is whole;
- with ``within``, the file's folder must lie inside that folder once links are followed: a link on the way that
  leads outside (planted in a datastore folder, or a name from a results file that climbs out with ``..``) stops the
  write before any folder is made;
- any failure (a full disk, a read-only file system, a folder that cannot be made) removes the temporary files and
  raises :class:`WriteError`, naming the file and the reason, which each command prints as its one line. A process
  killed while writing leaves at most a ``.part`` file beside the target, which no reader takes for it.

A folder written by a library that saves several files (a model folder: :func:`whole_folder`) is made beside its
place under such a name and renamed into place once every file is in it.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

#: the suffix of a file on its way to its name
PART_SUFFIX = ".part"
#: how a library written in Rust (``tokenizers``, which saves a tokenizer) reports a failed write: a bare
#: ``Exception("No space left on device (os error 28)")``, no OSError
RUST_IO_ERROR = re.compile(r"\(os error \d+\)$")


class WriteError(Exception):
    """A file could not be written whole where it belongs: ``path`` and the ``reason``; nothing of it was left under
    its name (an earlier file there is unchanged)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path}: cannot be written ({reason})")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _inside(target: Path, within: Path) -> None:
    """Refuse ``target`` when it is not inside ``within`` as written (a ``..`` on the way: a name from a results file
    that climbs out), or its folder, links followed, is not (the nearest folder that exists on the way is checked,
    before any is made)."""
    try:
        climbs = ".." in target.relative_to(within).parts
    except ValueError:
        climbs = True
    if climbs:
        raise WriteError(target, f"not inside {within}: nothing is written there")
    root = within.resolve()
    folder = target.parent
    while folder != within and not folder.exists() and not folder.is_symlink() and folder != folder.parent:
        folder = folder.parent
    reached = folder.resolve()
    if not reached.is_relative_to(root):
        raise WriteError(target, f"{folder} leads to {reached}, outside {within}: nothing is written there")


def _part_beside(target: Path) -> tuple[Path, BinaryIO]:
    """A new, empty temporary file beside ``target`` (its folders made), opened for writing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        part = target.with_name(f".{target.name}.{secrets.token_hex(4)}{PART_SUFFIX}")
        try:
            return part, open(part, "xb")  # noqa: SIM115  (closed by the caller)
        except FileExistsError:
            continue


class PartFile:
    """The temporary file :func:`whole_file` writes: ``path`` (a ``.part`` file beside the target) and
    :meth:`write`, whose failure is a :class:`WriteError` naming the target."""

    def __init__(self, target: Path, path: Path, handle: BinaryIO) -> None:
        self.target, self.path, self._handle = target, path, handle

    def write(self, data: bytes) -> int:
        try:
            return self._handle.write(data)
        except OSError as exc:
            raise WriteError(self.target, _reason(exc)) from None

    def flush(self) -> None:
        """Hand what was written to the file (so that it can be read back by its path before the block ends)."""
        try:
            self._handle.flush()
        except OSError as exc:
            raise WriteError(self.target, _reason(exc)) from None

    def _finish(self) -> None:
        """Flush the bytes to the disk and close the file."""
        try:
            self._handle.flush()
            os.fsync(self._handle.fileno())
        except OSError as exc:
            raise WriteError(self.target, _reason(exc)) from None
        finally:
            self._close()

    def _close(self) -> None:
        with suppress(OSError):  # an abandoned file: what it could not flush is lost with it
            self._handle.close()


def _start(target: Path, within: Path | None) -> PartFile:
    if within is not None:
        _inside(target, within)
    try:
        return PartFile(target, *_part_beside(target))
    except OSError as exc:
        raise WriteError(target, _reason(exc)) from None


def _rename(part: PartFile) -> None:
    try:
        os.replace(part.path, part.target)
    except OSError as exc:
        raise WriteError(part.target, _reason(exc)) from None


@contextmanager
def whole_file(target: Path, *, within: Path | None = None) -> Iterator[PartFile]:
    """Write ``target`` through the :class:`PartFile` yielded: renamed onto ``target`` when the block ends, removed
    when it raises (whatever it raises; an error of the block's own, such as a source that cannot be read, passes
    through as it is). :class:`WriteError` when ``target`` cannot be written whole (see the module docstring)."""
    part = _start(Path(target), within)
    try:
        try:
            yield part
        except BaseException:
            part._close()
            raise
        part._finish()
        _rename(part)
    finally:
        part.path.unlink(missing_ok=True)


def write_files(files: Mapping[Path, bytes | str], *, within: Path | None = None) -> list[Path]:
    """Write every file of ``files`` (text as UTF-8), each whole, and rename them into place in their order only once
    all are written; the paths. :class:`WriteError` naming the first that could not be written, with none of them
    replaced (unless a rename itself fails, which a full disk does not cause)."""
    parts: list[PartFile] = []
    try:
        for target, content in files.items():
            part = _start(Path(target), within)
            parts.append(part)
            try:
                part.write(content.encode("utf-8") if isinstance(content, str) else content)
            except BaseException:
                part._close()
                raise
            part._finish()
        for part in parts:
            _rename(part)
    finally:
        for part in parts:
            part.path.unlink(missing_ok=True)
    return [part.target for part in parts]


def write_whole(target: Path, content: bytes | str, *, within: Path | None = None) -> Path:
    """Write one file whole (:func:`write_files`); its path."""
    return write_files({Path(target): content}, within=within)[0]


@contextmanager
def whole_folder(target: Path) -> Iterator[Path]:
    """A new ``.<name>.<random>.part`` folder beside ``target`` to fill in the block, renamed onto ``target`` (missing,
    or an empty folder) when the block ends, removed with what it holds when the block raises. :class:`WriteError`
    naming ``target`` and the reason when it cannot be made, filled (an ``OSError`` in the block, or a library's
    :data:`RUST_IO_ERROR`: a full disk) or renamed."""
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(f".{target.name}.{secrets.token_hex(4)}{PART_SUFFIX}")
        part.mkdir()
    except OSError as exc:
        raise WriteError(target, _reason(exc)) from None
    try:
        try:
            yield part
        except OSError as exc:
            raise WriteError(target, _reason(exc)) from None
        except Exception as exc:
            if not RUST_IO_ERROR.search(str(exc)):
                raise
            raise WriteError(target, str(exc)) from None
        try:
            if target.is_dir() and not target.is_symlink():
                target.rmdir()  # an empty folder given for it (one that is not empty refuses, named)
            os.replace(part, target)
        except OSError as exc:
            raise WriteError(target, _reason(exc)) from None
    finally:
        shutil.rmtree(part, ignore_errors=True)
