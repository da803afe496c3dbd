"""What each upstream file must be: its pin (sha256, or git blob id where no sha256 is known) and its size.

A pin table is written one file per line, ``<digest>  <size>  <path>``: the digest is a bare sha256 (64 hex digits)
or ``git-blob:<sha1>`` for a file whose bytes were never seen here but whose git blob id is known from the upstream
tree; the size is in bytes, ``-`` where unknown. A git blob id is the sha1 of ``blob <size>\\0`` followed by the
content, as ``git hash-object`` computes it, so it checks the bytes just as a sha256 does.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from lm_eval_stereo.core.errors import ChecksumError

SHA256 = "sha256"
GIT_BLOB = "git-blob"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Pin:
    """The digest a file must have (``kind`` sha256 or git-blob) and its size in bytes (None: not known)."""

    kind: str
    digest: str
    size: int | None = None

    def __post_init__(self) -> None:
        lengths = {SHA256: 64, GIT_BLOB: 40}
        if self.kind not in lengths:
            raise ValueError(f"unknown pin kind {self.kind!r}; expected {SHA256} or {GIT_BLOB}")
        if len(self.digest) != lengths[self.kind] or any(c not in "0123456789abcdef" for c in self.digest):
            raise ValueError(f"a {self.kind} pin has {lengths[self.kind]} lowercase hex digits, got {self.digest!r}")

    def __str__(self) -> str:
        return f"{self.kind}:{self.digest}"

    def digest_of(self, file: Path) -> str:
        """``file``'s digest of this pin's kind."""
        return sha256_of(file) if self.kind == SHA256 else git_blob_id(file)

    def verify(self, file: Path, where: str) -> Path:
        """``file`` when its digest is the pinned one; :class:`ChecksumError` naming ``where`` otherwise."""
        actual = self.digest_of(file)
        if actual != self.digest:
            raise ChecksumError(where, self.digest, actual, kind=self.kind)
        return file


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def git_blob_id(path: Path) -> str:
    """git's object id of a file: sha1 of ``blob <size>\\0`` + its bytes (``git hash-object``)."""
    with open(path, "rb") as handle:
        size = Path(path).stat().st_size
        digest = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def parse_pins(table: str) -> dict[str, Pin]:
    """``{path: Pin}`` from ``<digest>  <size>  <path>`` lines (blank lines ignored); a malformed line raises
    ValueError naming it."""
    pins: dict[str, Pin] = {}
    for line in table.strip().splitlines():
        fields = line.split(maxsplit=2)
        if len(fields) != 3:
            raise ValueError(f"a pin line is '<digest>  <size>  <path>', got {line!r}")
        digest, size, path = fields
        kind, _, value = digest.rpartition(":")
        if size != "-" and not size.isdigit():
            raise ValueError(f"size must be a number of bytes or '-', got {size!r} in {line!r}")
        if path in pins:
            raise ValueError(f"{path} is pinned twice")
        pins[path] = Pin(kind or SHA256, value, None if size == "-" else int(size))
    return pins
