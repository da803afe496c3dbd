"""A small file system a test mounts (a tmpfs, as root can here), to fill or turn read-only under a command, and its
stand-in where none can be mounted: :mod:`disk_faults`, which injects the ``OSError`` the kernel would raise
(``ENOSPC``, ``EROFS``) into every file and folder opened for writing below a folder. :attr:`Disk.mounted` says
which a test got."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from lm_eval_runner import run_command
from suite_tools import mount_tmpfs

CLI = str(Path(sys.executable).parent / "lm-eval-stereo")
INJECTING = Path(__file__).with_name("disk_faults.py")
#: the name of the file that fills the disk
FILLER = "filler"


@dataclass
class Disk:
    """A small file system at ``root`` (``mounted``), or, where none can be mounted, a folder whose writes
    :mod:`disk_faults` refuses once :meth:`fill` or :meth:`read_only` is called."""

    root: Path
    mounted: bool
    fault: str = ""

    def fill(self, leave: int = 0) -> None:
        """Fill the disk to its last byte (unbuffered writes, each smaller than the last that did not fit), then give
        back ``leave`` bytes (whole pages of the file system)."""
        if not self.mounted:
            self.fault = "ENOSPC"
            return
        handle = os.open(self.root / FILLER, os.O_WRONLY | os.O_CREAT)
        try:
            size = 1 << 16
            while size:
                try:
                    os.write(handle, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    size //= 2
            if leave:
                os.ftruncate(handle, max(os.lseek(handle, 0, os.SEEK_END) - leave, 0))
        finally:
            os.close(handle)

    def empty(self) -> None:
        """Give back what :meth:`fill` took."""
        (self.root / FILLER).unlink(missing_ok=True)

    def read_only(self) -> None:
        if not self.mounted:
            self.fault = "EROFS"
            return
        subprocess.run(["mount", "-o", "remount,ro", str(self.root)], check=True)

    def writable(self) -> None:
        """Undo :meth:`read_only` on a mounted disk."""
        subprocess.run(["mount", "-o", "remount,rw", str(self.root)], check=True)

    def command(self, *args: str | Path) -> list[str]:
        """``lm-eval-stereo ARGS`` on this disk (through :mod:`disk_faults` where it is not mounted and faulty)."""
        command = (
            [CLI] if self.mounted or not self.fault else [sys.executable, str(INJECTING), self.fault, str(self.root)]
        )
        return [*command, *map(str, args)]

    def run(self, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """:meth:`command`, run to its end: a child of the fork server of the tests' environment
        (:func:`lm_eval_runner.run_command`, which has imported torch and lm_eval); with ``env`` (a test's own
        variables, which would need a fork server of their own) a fresh process."""
        if env is not None:
            return subprocess.run(
                self.command(*args), capture_output=True, text=True, env={**os.environ, **env}, timeout=300
            )
        if self.mounted or not self.fault:
            return run_command(*args)
        return run_command(self.fault, self.root, *args, script=INJECTING)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    """A 2 MB disk (:class:`Disk`), unmounted when the test ends."""
    root = tmp_path / "disk"
    root.mkdir()
    mounted = mount_tmpfs(root, "2m")
    yield Disk(root, mounted)
    if mounted:
        subprocess.run(["umount", "-l", str(root)], check=False)


def contents(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (links not followed) by relative path, with its bytes."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink() and not path.name.startswith(FILLER)
    }
