"""What an upstream data source is: a repository pinned at a commit, its licence and citation, and per file its pin.

Each benchmark declares its own sources beside it (its folder's ``sources.py``) and lists them in its
:class:`~lm_eval_stereo.core.registry.Benchmark`; the registry looks them up by name, and
:mod:`lm_eval_stereo.core.sources` fetches, verifies and caches their files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lm_eval_stereo.core.pins import Pin

BASE_URL_ENV = "LM_EVAL_STEREO_BASE_URL"
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"

#: ``(upstream path, its verified local file) -> {mirror path: bytes}``: the converted copies an offline mirror holds
#: in place of an upstream file (none: ``{}``)
Converter = Callable[[str, Path], dict[str, bytes]]


def base_url() -> str:
    """``$LM_EVAL_STEREO_BASE_URL`` without a trailing slash, else GitHub's raw-file host."""
    return (os.environ.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL).rstrip("/")


@dataclass(frozen=True)
class Source:
    """One upstream repository pinned at a commit.

    ``files`` pins the upstream files by path. ``mirror_files`` pins converted files that an offline mirror may hold
    instead of an upstream file (same stem, other suffix); ``mirror_converter``, declared by the benchmark, makes them
    from an upstream path and its verified local file. ``rehost`` is False where the licence allows no re-hosting: a
    mirror of it is for one's own use. ``citation`` is the paper the data comes with, written ``Surnames (year). Title.
    Venue.`` (the README's benchmark table and citations are generated from it, ``scripts/readme_tables.py``).
    """

    name: str
    repo: str
    commit: str
    licence: str
    citation: str
    files: Mapping[str, Pin]
    mirror_files: Mapping[str, Pin] = field(default_factory=dict)
    mirror_converter: Converter | None = None
    rehost: bool = True

    def url(self, path: str) -> str:
        """Where ``path`` is downloaded from (under ``$LM_EVAL_STEREO_BASE_URL``)."""
        return f"{base_url()}/{self.repo}/{self.commit}/{path}"

    def pin(self, path: str) -> Pin:
        """The pin of an upstream or mirror file; KeyError for any other path."""
        if path in self.files:
            return self.files[path]
        if path in self.mirror_files:
            return self.mirror_files[path]
        raise KeyError(f"{path!r} is not a known file of source {self.name!r}")
