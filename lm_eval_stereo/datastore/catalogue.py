"""Which pinned files each benchmark reads (the sources the registered benchmarks declare), and where the cache keeps
them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from lm_eval_stereo.core import registry, sources
from lm_eval_stereo.core.pins import Pin
from lm_eval_stereo.core.upstream import Source


def benchmark_sources() -> dict[str, tuple[str, ...]]:
    """Benchmark folder name -> the names of the sources it reads, from the benchmark registry."""
    return {bench.name: tuple(source.name for source in bench.sources) for bench in registry.benchmarks()}


def benchmark_names() -> tuple[str, ...]:
    """The benchmark folder names (``--benchmarks``), in the registry's order."""
    return tuple(benchmark_sources())


class Cached(Enum):
    """Whether the cache holds a file: verified, absent, or present with other bytes than pinned."""

    YES = "yes"
    NO = "no"
    MISMATCH = "mismatch"


@dataclass(frozen=True, eq=False)
class PinnedFile:
    """One upstream file of a source, with its pin (compared and hashed by identity)."""

    source: Source
    path: str
    pin: Pin

    @property
    def name(self) -> str:
        """``<source>/<path>``: how the command's messages name the file."""
        return f"{self.source.name}/{self.path}"

    def cached(self) -> Cached:
        """Whether the cache holds this file with its pinned bytes (hashes it when present)."""
        file = sources.cache_path(self.source, self.path)
        if not file.is_file():
            return Cached.NO
        return Cached.YES if self.pin.digest_of(file) == self.pin.digest else Cached.MISMATCH


def selected_sources(benchmarks: Iterable[str] | None = None) -> list[Source]:
    """The sources the benchmarks read (every benchmark when None), in the registry's order."""
    mapping = benchmark_sources()
    wanted = {name for benchmark in (benchmarks or mapping) for name in mapping[benchmark]}
    return [source for name, source in registry.SOURCES.items() if name in wanted]


def pinned_files(selected: Sequence[Source]) -> list[PinnedFile]:
    """Every upstream file of the sources, in pin-table order."""
    return [PinnedFile(source, path, pin) for source in selected for path, pin in source.files.items()]


def users(source: Source) -> list[str]:
    """The benchmarks that read ``source``."""
    return [benchmark for benchmark, names in benchmark_sources().items() if source.name in names]
