"""Where the files of an upstream source (:class:`~lm_eval_stereo.core.upstream.Source`, declared by the benchmark
that reads it and looked up by name in the registry, :func:`~lm_eval_stereo.core.registry.get_source`) come from.

Files are resolved in this order:

1. the offline mirror ``$LM_EVAL_STEREO_DATA_DIR/<source>/<upstream path>`` when that variable is set
   (it replaces the network completely: a missing file there is an error);
2. the cache ``$LM_EVAL_STEREO_CACHE/<source>/<commit>/<upstream path>`` (default ``$XDG_CACHE_HOME/lm_eval_stereo``
   or ``~/.cache/lm_eval_stereo``);
3. a download from ``$LM_EVAL_STEREO_BASE_URL/<repo>/<commit>/<upstream path>`` (default base
   ``https://raw.githubusercontent.com``; point it at any host that serves the same layout), written into the cache
   only when complete and verified (:mod:`lm_eval_stereo.core.download`).

Every file is checked against its pin (:mod:`lm_eval_stereo.core.pins`: its sha256, or its git blob id where no
sha256 is known) before it is used; a mismatch raises :class:`~lm_eval_stereo.core.errors.ChecksumError` and the file
is never read. ``lm-eval-stereo data`` lists, fetches, mirrors and verifies these files
(:mod:`lm_eval_stereo.datastore`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lm_eval_stereo.core import download
from lm_eval_stereo.core.errors import CacheWriteError, DataUnavailableError, NoNetworkError
from lm_eval_stereo.core.pins import sha256_of
from lm_eval_stereo.core.registry import get_source
from lm_eval_stereo.core.upstream import Source
from lm_eval_stereo.core.whole_files import PartFile, WriteError, whole_file

__all__ = ["cache_file", "cache_path", "fetch", "in_mirror", "sha256_of"]

logger = logging.getLogger(__name__)

DATA_DIR_ENV = "LM_EVAL_STEREO_DATA_DIR"
CACHE_ENV = "LM_EVAL_STEREO_CACHE"
OFFLINE_ENV = "LM_EVAL_STEREO_OFFLINE"
DOWNLOAD_TIMEOUT_S = 60


def mirror_dir() -> Path | None:
    """The offline mirror directory, or None when ``LM_EVAL_STEREO_DATA_DIR`` is unset."""
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    value = os.environ.get(CACHE_ENV, "").strip()
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "lm_eval_stereo"


def cache_path(source: Source, path: str) -> Path:
    """Where the cache keeps ``path`` of ``source`` (whether or not it is there)."""
    return cache_dir() / source.name / source.commit / path


def in_mirror(source_name: str, path: str) -> bool:
    """True when an offline mirror is configured and holds ``path`` of ``source_name``."""
    root = mirror_dir()
    return root is not None and (root / source_name / path).is_file()


def _mirror_file(root: Path, source: Source, path: str) -> Path:
    """``path`` in the mirror ``root``; DataUnavailableError when it is missing or a directory."""
    candidate = root / source.name / path
    if candidate.is_dir():
        raise DataUnavailableError(
            f"{candidate} in the offline mirror {DATA_DIR_ENV}={root} is a directory; expected the file "
            f"{source.url(path)} there."
        )
    if not candidate.is_file():
        raise DataUnavailableError(
            f"{candidate} is missing from the offline mirror {DATA_DIR_ENV}={root}. "
            f"Copy {source.url(path)} there, or unset {DATA_DIR_ENV} to download it."
        )
    return candidate


def fetch(source_name: str, path: str) -> Path:
    """Return a local, verified copy of ``path`` from source ``source_name``: the mirror's when one is set, else the
    cache's (downloaded first if needed)."""
    source = get_source(source_name)
    pin = source.pin(path)
    root = mirror_dir()
    if root is not None:
        candidate = _mirror_file(root, source, path)
        return pin.verify(candidate, str(candidate))
    return cache_file(source_name, path)


def cache_file(source_name: str, path: str, progress: download.Progress | None = None) -> Path:
    """``path`` of ``source_name`` in the cache, verified: already there, else copied from the offline mirror when one
    is set, else downloaded. ``progress`` is called with the number of bytes as they are read."""
    source = get_source(source_name)
    pin = source.pin(path)
    target = cache_path(source, path)
    if target.is_file():
        if pin.digest_of(target) == pin.digest:
            if progress is not None:
                progress(target.stat().st_size)
            return target
        logger.warning("cached %s does not match its pin %s; fetching it again", target, pin)
        target.unlink()
    root = mirror_dir()
    origin = _mirror_file(root, source, path) if root is not None else None
    try:
        with whole_file(target) as part:  # made first: a cache that cannot hold the file stops before any download
            _copy_or_download(source, path, origin, part, progress)
    except WriteError as exc:
        raise CacheWriteError(
            f"the download cache {cache_dir()} cannot hold {exc.path} ({exc.reason}): point {CACHE_ENV} at a "
            f"writable directory with room for it (default ~/.cache/lm_eval_stereo), or set {DATA_DIR_ENV} to an "
            "offline mirror."
        ) from None
    return target


def _copy_or_download(
    source: Source, path: str, origin: Path | None, part: PartFile, progress: download.Progress | None
) -> None:
    """``path`` of ``source`` into ``part``: copied from the mirror file ``origin``, else downloaded."""
    pin = source.pin(path)
    if origin is not None:
        try:
            with open(origin, "rb") as stream:
                return download.fill(part, stream, pin, str(origin), progress=progress)
        except OSError as exc:
            raise DataUnavailableError(f"{origin} cannot be read ({exc.strerror or exc})") from None
    how_to_fix = (
        f"Set {DATA_DIR_ENV} to an offline mirror laid out as <dir>/{source.name}/{path} "
        "(`lm-eval-stereo data mirror DIR` writes one on a machine with network; "
        "or a copy of the project's shared/data folder)."
    )
    url = source.url(path)
    if os.environ.get(OFFLINE_ENV, "").strip() not in ("", "0"):
        raise NoNetworkError(f"{url} cannot be downloaded: {OFFLINE_ENV} is set. {how_to_fix}")
    logger.info("downloading %s", url)
    download.download(url, part, pin, timeout=DOWNLOAD_TIMEOUT_S, how_to_fix=how_to_fix, progress=progress)
