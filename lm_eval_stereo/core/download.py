"""Put a file into the download cache whole and verified, or not at all.

The bytes go to the temporary file of :func:`~lm_eval_stereo.core.whole_files.whole_file` beside the target; only
when every announced byte arrived and the pin matches is it renamed to the target. On any failure, an interrupted
transfer included, the temporary file is removed, so the cache never holds a partial or unverified file under a name
the data layer reads; a file that cannot be written (a full disk) is a
:class:`~lm_eval_stereo.core.whole_files.WriteError` naming it. Where the data comes from (mirror, cache, which URL)
is :mod:`lm_eval_stereo.core.sources`' business.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import BinaryIO

from lm_eval_stereo.core.errors import DataUnavailableError, NoNetworkError
from lm_eval_stereo.core.pins import CHUNK, Pin
from lm_eval_stereo.core.whole_files import PartFile

Progress = Callable[[int], object]


def fill(
    part: PartFile,
    stream: BinaryIO,
    pin: Pin,
    where: str,
    *,
    length: int | None = None,
    progress: Progress | None = None,
) -> None:
    """Copy ``stream`` into ``part``, then check the byte count against ``length`` and the digest against ``pin``
    (:class:`DataUnavailableError`, ``ChecksumError`` naming ``where``; the caller's ``whole_file`` then removes the
    part)."""
    received = 0
    while chunk := stream.read(CHUNK):
        part.write(chunk)
        received += len(chunk)
        if progress is not None:
            progress(len(chunk))
    if length is not None and received != length:
        raise DataUnavailableError(f"{where}: the transfer stopped after {received:,} of {length:,} bytes")
    part.flush()
    pin.verify(part.path, where)


def download(
    url: str, part: PartFile, pin: Pin, *, timeout: float, how_to_fix: str, progress: Progress | None = None
) -> None:
    """Download ``url`` into ``part`` (see :func:`fill`).

    A host that does not answer raises :class:`NoNetworkError`; an HTTP error, a timeout or a connection lost
    mid-file raises :class:`DataUnavailableError`; a wrong digest raises ``ChecksumError``. Each message names the
    URL and ends with ``how_to_fix``. A write that fails is the part's ``WriteError``, raised as it is.
    """
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            announced = response.headers.get("Content-Length")
            length = int(announced) if announced and announced.isdigit() else None
            fill(part, response, pin, url, length=length, progress=progress)
    except urllib.error.HTTPError as exc:
        raise DataUnavailableError(f"could not download {url} (HTTP {exc.code} {exc.reason}). {how_to_fix}") from None
    except urllib.error.URLError as exc:
        raise NoNetworkError(f"could not reach {url} ({exc.reason}). {how_to_fix}") from None
    except DataUnavailableError as exc:
        raise DataUnavailableError(f"could not download {exc}. {how_to_fix}") from None
    except (OSError, http.client.HTTPException) as exc:  # a timeout or a lost connection while reading
        raise DataUnavailableError(f"could not download {url} ({exc}). {how_to_fix}") from None
