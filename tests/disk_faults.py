"""``python disk_faults.py ERRNO FOLDER ARGS...``: ``lm-eval-stereo ARGS...`` on a disk that is full (``ENOSPC``) or
read-only (``EROFS``) below ``FOLDER``.

The stand-in of :mod:`test_files_written_whole` for machines where the test cannot mount a small file system (not
root); where it can, the test runs the command on a real one instead. What the kernel would do is injected: on a full
disk a file opens but no byte can be written to it, and a new folder cannot be made (a disk such as ext4 needs a block
for it); on a read-only one no file opens for writing and no folder is made. Each refusal is the ``OSError`` the
kernel raises.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import sys
from pathlib import Path
from typing import Any


def main() -> None:
    code, folder, *args = sys.argv[1:]
    number = getattr(errno, code)
    root = Path(folder).resolve()

    def below(path: Any) -> bool:
        return isinstance(path, (str, os.PathLike)) and Path(os.path.abspath(path)).is_relative_to(root)

    def refuse(path: Any) -> OSError:
        return OSError(number, os.strerror(number), str(path))

    opened, made = io.open, os.mkdir

    class Full:
        """A file on the full disk: it takes no byte."""

        def __init__(self, handle: Any, name: Any) -> None:
            self.handle, self.name_ = handle, name

        def write(self, data: Any) -> int:
            if data:
                raise refuse(self.name_)
            return 0

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def __getattr__(self, name: str) -> Any:
            return getattr(self.handle, name)

    def open_refused(file: Any, mode: str = "r", *more: Any, **kwargs: Any) -> Any:
        if not (any(flag in mode for flag in "wxa+") and below(file)):
            return opened(file, mode, *more, **kwargs)
        if number == errno.EROFS:
            raise refuse(file)
        return Full(opened(file, mode, *more, **kwargs), file)

    def mkdir_refused(path: Any, *more: Any, **kwargs: Any) -> None:
        if below(path) and not os.path.isdir(path):
            raise refuse(path)
        made(path, *more, **kwargs)

    builtins.open = io.open = open_refused
    os.mkdir = mkdir_refused
    from lm_eval_stereo.cli import main as cli

    sys.exit(cli(args))


if __name__ == "__main__":
    main()
