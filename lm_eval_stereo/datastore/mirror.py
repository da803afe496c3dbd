"""The offline mirror layout ``<dir>/<source>/<upstream path>``: written from the download cache, and verified.

A mirror written here holds every pinned upstream file and, for sources whose benchmark declares a
``mirror_converter`` (multilingual StereoSet), the converted copies the data layer prefers (JSON lines instead of
pickles), each checked against its own pin. Every file is written through a ``.part`` file and renamed once verified,
so an interrupted run leaves no partial file under a name the data layer reads; files already in place with their
pinned bytes are kept.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from lm_eval_stereo.core import download, sources
from lm_eval_stereo.core.errors import DataError
from lm_eval_stereo.core.pins import Pin
from lm_eval_stereo.core.upstream import Source
from lm_eval_stereo.core.whole_files import WriteError, whole_file
from lm_eval_stereo.datastore.catalogue import PinnedFile, users


@dataclass
class Outcome:
    """What a mirror command found or wrote: files in place with their pinned bytes, and one line per problem."""

    files: int = 0
    size: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, file: Path) -> None:
        self.files += 1
        self.size += file.stat().st_size


def _alternatives(source: Source, path: str) -> list[str]:
    """The converted copies that may stand in for ``path`` in a mirror (same stem, other suffix)."""
    stem = Path(path).with_suffix("")
    return [copy for copy in source.mirror_files if Path(copy).with_suffix("") == stem]


def _matches(file: Path, pin: Pin) -> bool:
    return file.is_file() and pin.digest_of(file) == pin.digest


def _place(stream: BinaryIO, root: Path, target: Path, pin: Pin, where: str) -> Path:
    """``target`` (inside the mirror ``root``) with the bytes of ``stream``, unless it already matches ``pin``."""
    if not _matches(target, pin):
        with whole_file(target, within=root) as part:
            download.fill(part, stream, pin, where)
    return target


def _uncached(files: Sequence[PinnedFile]) -> tuple[set[PinnedFile], list[str]]:
    """The files the cache lacks, and the problem lines naming them (one per source that lacks them all)."""
    absent = {entry for entry in files if not sources.cache_path(entry.source, entry.path).is_file()}
    problems = []
    for source in {entry.source.name: entry.source for entry in files}.values():
        of_source = [entry for entry in files if entry.source is source]
        missing = [entry for entry in of_source if entry in absent]
        fix = f"run `lm-eval-stereo data fetch --benchmarks {','.join(users(source))}` first"
        if missing and len(missing) == len(of_source):
            problems.append(f"{source.name}: none of its {len(missing)} files is in the cache; {fix}")
        else:
            problems += [f"{entry.name}: not in the cache {sources.cache_dir()}; {fix}" for entry in missing]
    return absent, problems


def _copy(entry: PinnedFile, root: Path, outcome: Outcome) -> None:
    """One cached file into the mirror, with its converted copies (converted only when one is missing or wrong)."""
    source, cached = entry.source, sources.cache_path(entry.source, entry.path)
    entry.pin.verify(cached, str(cached))
    with open(cached, "rb") as stream:
        outcome.add(_place(stream, root, root / source.name / entry.path, entry.pin, str(cached)))
    copies = {path: root / source.name / path for path in _alternatives(source, entry.path)}
    converter = source.mirror_converter
    if converter is not None and not all(_matches(file, source.mirror_files[path]) for path, file in copies.items()):
        for path, content in converter(entry.path, cached).items():
            where = f"the converted copy {source.name}/{path}"
            _place(io.BytesIO(content), root, copies[path], source.mirror_files[path], where)
    for file in copies.values():
        outcome.add(file)


def write_mirror(root: Path, files: Sequence[PinnedFile]) -> Outcome:
    """Copy each file from the cache to ``root/<source>/<path>`` (and its converted copies); problems name the
    file: not in the cache, cached with other bytes, or a copy whose bytes differ from its pin; a file the mirror
    cannot hold (the disk full, the folder read-only) ends the copying, named with the reason."""
    absent, problems = _uncached(files)
    outcome = Outcome(problems=problems)
    for entry in files:
        if entry in absent:
            continue
        try:
            _copy(entry, root, outcome)
        except WriteError as exc:  # a full disk, a read-only folder: every other file would fail the same way
            outcome.problems.append(f"{exc}; the mirror stops here")
            break
        except (DataError, OSError) as exc:
            outcome.problems.append(f"{entry.name}: {exc}")
    return outcome


def _check(file: Path, pin: Pin) -> str | None:
    actual = pin.digest_of(file)
    return None if actual == pin.digest else f"{file}: does not match its pin {pin} (it has {pin.kind}:{actual})"


def verify_mirror(root: Path, selected: Iterable[Source]) -> Outcome:
    """Check every pinned file of the sources in the mirror ``root``: present (as itself or as a converted copy) and
    matching its pin. One problem line per missing or wrong file (per source folder when the whole folder is
    missing)."""
    outcome = Outcome()
    for source in selected:
        folder = root / source.name
        if not folder.is_dir():
            outcome.problems.append(f"{folder}: missing (the {len(source.files)} pinned files of {source.name})")
            continue
        for path, pin in source.files.items():
            copies = [(folder / copy, source.mirror_files[copy]) for copy in _alternatives(source, path)]
            present = [(file, p) for file, p in [(folder / path, pin), *copies] if file.is_file()]
            if not present:
                also = f" (nor its copy {', '.join(file.name for file, _ in copies)})" if copies else ""
                kind = "a folder, not a file" if (folder / path).is_dir() else "missing"
                outcome.problems.append(f"{folder / path}: {kind}{also}")
            for file, file_pin in present:
                problem = _check(file, file_pin)
                if problem:
                    outcome.problems.append(problem)
                else:
                    outcome.add(file)
    return outcome
