"""``lm-eval-stereo report ... --html DIR``, killed (SIGKILL, by itself) in the middle of writing its page.

``python report_killed_mid_write.py ARGS...`` runs ``lm-eval-stereo ARGS...`` with ``open`` wrapped: the first write
to a file opened for writing in DIR whose name holds ``index.html`` (the page, or a temporary file on its way to
becoming the page) writes half of its text, flushes it to disk and kills the process, as an out-of-memory killer or a
scheduler's time limit would.
"""

from __future__ import annotations

import builtins
import io
import os
import signal
import sys
from pathlib import Path
from typing import Any


class HalfThenKilled:
    """A text file whose first ``write`` stores half of the text and then kills the process."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def write(self, text: str) -> int:
        self.handle.write(text[: len(text) // 2])
        self.handle.flush()
        os.fsync(self.handle.fileno())
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("SIGKILL did not end the process")

    def __enter__(self) -> HalfThenKilled:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handle, name)


def main() -> None:
    folder = Path(sys.argv[sys.argv.index("--html") + 1]).resolve()
    opened = io.open

    def open_page_to_be_killed(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = opened(file, mode, *args, **kwargs)
        if isinstance(file, (str, os.PathLike)) and ("w" in mode or "x" in mode):
            path = Path(file).resolve()
            if path.parent == folder and "index.html" in path.name:
                return HalfThenKilled(handle)
        return handle

    builtins.open = io.open = open_page_to_be_killed
    from lm_eval_stereo.cli import main as cli

    sys.exit(cli(sys.argv[1:]))


if __name__ == "__main__":
    main()
