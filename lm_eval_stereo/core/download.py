"""Put a file into the download cache whole and verified, or not at all.

The bytes go to a temporary ``.<name>.<random>.part`` file beside the target; only when every announced byte arrived
and the pin matches is it renamed to the target (an atomic step on one file system). On any failure, an interrupted
transfer included, the ``.part`` file is removed, so the cache never holds a partial or unverified file under a name
the data layer reads. Where the data comes from (mirror, cache, which URL) is :mod:`lm_eval_stereo.core.sources`'
business.
"""

from __future__ import annotations

import http.client
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from lm_eval_stereo.core.errors import DataUnavailableError, NoNetworkError
from lm_eval_stereo.core.pins import CHUNK, Pin

Progress = Callable[[int], object]


def new_part(target: Path) -> Path:
    """An empty ``.part`` file beside ``target`` (its folders created); OSError when the folder cannot hold it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    os.close(handle)
    return Path(name)


def fill(
    part: Path,
    stream: BinaryIO,
    target: Path,
    pin: Pin,
    where: str,
    *,
    length: int | None = None,
    progress: Progress | None = None,
) -> Path:
    """Copy ``stream`` into ``part``, check the byte count against ``length`` and the digest against ``pin``, then
    rename ``part`` to ``target``. ``part`` is removed on any failure."""
    try:
        received = 0
        with open(part, "wb") as out:
            while chunk := stream.read(CHUNK):
                out.write(chunk)
                received += len(chunk)
                if progress is not None:
                    progress(len(chunk))
        if length is not None and received != length:
            raise DataUnavailableError(f"{where}: the transfer stopped after {received:,} of {length:,} bytes")
        pin.verify(part, where)
        part.replace(target)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return target


def download(
    url: str, part: Path, target: Path, pin: Pin, *, timeout: float, how_to_fix: str, progress: Progress | None = None
) -> Path:
    """Download ``url`` into ``target`` through ``part`` (see :func:`fill`).

    A host that does not answer raises :class:`NoNetworkError`; an HTTP error, a timeout or a connection lost
    mid-file raises :class:`DataUnavailableError`; a wrong digest raises ``ChecksumError``. Each message names the
    URL and ends with ``how_to_fix``.
    """
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            announced = response.headers.get("Content-Length")
            length = int(announced) if announced and announced.isdigit() else None
            return fill(part, response, target, pin, url, length=length, progress=progress)
    except urllib.error.HTTPError as exc:
        raise DataUnavailableError(f"could not download {url} (HTTP {exc.code} {exc.reason}). {how_to_fix}") from None
    except urllib.error.URLError as exc:
        raise NoNetworkError(f"could not reach {url} ({exc.reason}). {how_to_fix}") from None
    except DataUnavailableError as exc:
        raise DataUnavailableError(f"could not download {exc}. {how_to_fix}") from None
    except (OSError, http.client.HTTPException) as exc:  # a timeout or a lost connection while reading, a full disk
        raise DataUnavailableError(f"could not download {url} ({exc}). {how_to_fix}") from None
    finally:
        part.unlink(missing_ok=True)
