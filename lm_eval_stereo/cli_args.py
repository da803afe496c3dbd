"""The arguments of the ``lm-eval-stereo`` commands, checked before any work starts.

Every problem with a path, model or option argument ends the command with exit status 2 and one line,
``lm-eval-stereo <command>: error: argument <name>: <what is wrong>``, never a traceback: :class:`Parser` is argparse
with its errors on one line (no usage block), and the ``type=`` checks below say what is wrong with a path (missing,
unreadable, of the wrong kind, not writable). They only look: nothing is created or changed.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, NoReturn


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line on stderr, with exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def fail(self, argument: str, message: str) -> NoReturn:
        """End the command for a problem found after parsing (e.g. a folder that holds no tokenizer)."""
        self.error(f"argument {argument}: {message}")


def _kind(path: Path) -> str:
    """ "file", "folder", "missing" or the name of another kind of file system entry."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):  # NotADirectoryError: a file on the way (``a_file/x``)
        return "broken link" if path.is_symlink() else "missing"
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{path}: cannot be read ({exc.strerror})") from None
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    return "special file (FIFO, socket or device)"


def _readable(path: Path, kind: str) -> None:
    try:
        if kind == "folder":
            next(os.scandir(path), None)
        else:
            with path.open("rb") as handle:
                handle.read(1)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{path}: cannot be read ({exc.strerror})") from None


def input_path(text: str) -> Path:
    """An existing, readable file or folder."""
    path = Path(text)
    kind = _kind(path)
    if kind == "missing":
        raise argparse.ArgumentTypeError(f"{path}: no such file or folder")
    if kind not in ("file", "folder"):
        raise argparse.ArgumentTypeError(f"{path}: a {kind}, not a file or folder")
    _readable(path, kind)
    return path


def input_folder(text: str) -> Path:
    """An existing, readable folder."""
    path = input_path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path}: a file, not a folder")
    return path


def _writable_folder(folder: Path, path: Path) -> None:
    """Whether a file can be created in ``folder`` (on the way to ``path``): one is, and is removed at once."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        where = "" if folder == path else f" in {folder}"
        raise argparse.ArgumentTypeError(f"{path}: cannot write{where} ({exc.strerror})") from None


def output_file(text: str) -> Path:
    """A file that can be written: in an existing, writable folder, and not itself a folder."""
    path = Path(text)
    kind = _kind(path)
    if kind == "folder":
        raise argparse.ArgumentTypeError(f"{path}: a folder, not a file")
    if kind not in ("file", "missing"):
        raise argparse.ArgumentTypeError(f"{path}: a {kind}, not a file")
    parent = path.parent
    parent_kind = _kind(parent)
    if parent_kind == "missing":
        raise argparse.ArgumentTypeError(f"{path}: the folder {parent} does not exist")
    if parent_kind != "folder":
        raise argparse.ArgumentTypeError(f"{path}: {parent} is a {parent_kind}, not a folder")
    if kind == "file" and not path.is_symlink():
        try:
            path.open("ab").close()
        except OSError as exc:
            raise argparse.ArgumentTypeError(f"{path}: cannot be written ({exc.strerror})") from None
    else:  # a new file, or a link the file will replace (never written through: core/whole_files)
        _writable_folder(parent, path)
    return path


def output_folder(text: str, *, empty: bool = False) -> Path:
    """A folder that can be written (created with its parents if missing); with ``empty``, a new or empty one."""
    path = Path(text)
    kind = _kind(path)
    if kind not in ("folder", "missing"):
        raise argparse.ArgumentTypeError(f"{path}: a {kind}, not a folder")
    if kind == "folder":
        if empty and any(path.iterdir()):
            raise argparse.ArgumentTypeError(f"{path}: not empty; give a new or empty folder")
        _writable_folder(path, path)
        return path
    ancestor = path.parent
    while _kind(ancestor) == "missing":
        ancestor = ancestor.parent
    if (ancestor_kind := _kind(ancestor)) != "folder":
        raise argparse.ArgumentTypeError(f"{path}: {ancestor} is a {ancestor_kind}, not a folder")
    _writable_folder(ancestor, path)
    return path


def empty_output_folder(text: str) -> Path:
    """A new or empty folder that can be written."""
    return output_folder(text, empty=True)


def json_object(text: str) -> dict[str, Any]:
    """A JSON object given on the command line."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg} at character {exc.pos}): {text}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object such as '{{\"key\": 1}}', got {text}")
    return value


def positive_int(text: str) -> int:
    """An integer above 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number above 0, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a whole number above 0, got {text}")
    return value


def limit(text: str) -> float:
    """lm_eval's ``--limit``: a number of documents (>= 1) or a share of them (0 < x < 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of documents or a share below 1, got {text!r}") from None
    if not value > 0 or (value > 1 and not value.is_integer()):
        raise argparse.ArgumentTypeError(f"expected a whole number of documents or a share in (0, 1), got {text}")
    return value
