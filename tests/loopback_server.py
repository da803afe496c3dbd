"""A loopback HTTP server (127.0.0.1) that serves a copy of the offline mirror under the upstream URL layout.

``serve_mirror(mirror, folder)`` lays out ``folder/<repo>/<commit>/<upstream path>`` (links to the mirror's files of
every pinned source, as GitHub's raw-file host serves them) and serves it (``link_mirror`` lays out a mirror, some
files withheld); ``LM_EVAL_STEREO_BASE_URL`` pointed at
:attr:`Loopback.url` makes the data layer download from it. Faults per file (``"<source>/<path>"``):

- ``truncated``: a shorter file, honestly announced (its own Content-Length);
- ``closes``: the full length announced, the connection closed after half of the bytes;
- ``stalls``: the full length announced, half of the bytes sent, then nothing until the server stops.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lm_eval_stereo.core.registry import SOURCES

FAULTS = ("truncated", "closes", "stalls")


@dataclass
class Loopback:
    """The running server: its base URL, the URL paths requested so far, and the faults in force."""

    url: str
    folder: Path
    requests: list[str] = field(default_factory=list)
    faults: dict[str, str] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    def url_path(self, name: str) -> str:
        """``/<repo>/<commit>/<path>`` of ``"<source>/<path>"``."""
        source, _, path = name.partition("/")
        return f"/{SOURCES[source].repo}/{SOURCES[source].commit}/{path}"


def link_mirror(mirror: Path, folder: Path, *, withheld: Iterable[str] = (), upstream_layout: bool = False) -> Path:
    """Links in ``folder`` to the mirror's pinned files but the ``withheld`` ones (``"<source>/<path>"``), laid out
    as a mirror (``<source>/<path>``) or as the upstream host serves them (``<repo>/<commit>/<path>``)."""
    withheld = set(withheld)
    for source in SOURCES.values():
        for path in [*source.files, *source.mirror_files]:
            original = mirror / source.name / path
            if original.is_file() and f"{source.name}/{path}" not in withheld:
                where = Path(source.repo, source.commit) if upstream_layout else Path(source.name)
                link = folder / where / path
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(original)
    return folder


def _handler(server: Loopback) -> type[BaseHTTPRequestHandler]:
    by_url = {server.url_path(name): fault for name, fault in server.faults.items()}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
            """Quiet: the tests read :attr:`Loopback.requests`."""

        def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
            self.do_GET(body=False)

        def do_GET(self, body: bool = True) -> None:  # noqa: N802 (http.server's name)
            path = urllib.parse.unquote(self.path)
            server.requests.append(path)
            file = server.folder / path.lstrip("/")
            if not file.is_file():
                self.send_error(404, "Not Found")
                return
            content = file.read_bytes()
            if not body:
                self.send_response(200)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                return
            fault = by_url.get(path)
            sent = content[: len(content) // 2] if fault else content
            self.send_response(200)
            self.send_header("Content-Length", str(len(sent) if fault == "truncated" else len(content)))
            self.end_headers()
            self.wfile.write(sent)
            self.wfile.flush()
            if fault == "stalls":
                server.stop.wait()
            self.close_connection = True

    return Handler


@contextmanager
def serve_mirror(
    mirror: Path, folder: Path, faults: dict[str, str] | None = None, withheld: Iterable[str] = ()
) -> Iterator[Loopback]:
    """Serve ``mirror`` (laid out into ``folder``; the ``withheld`` files answer 404) on 127.0.0.1 until the block
    ends."""
    unknown = {fault for fault in (faults or {}).values() if fault not in FAULTS}
    if unknown:
        raise ValueError(f"unknown fault(s) {unknown}; known: {FAULTS}")
    link_mirror(mirror, folder, withheld=withheld, upstream_layout=True)
    loopback = Loopback(url="", folder=folder, faults=dict(faults or {}))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(loopback))
    httpd.daemon_threads = True
    loopback.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield loopback
    finally:
        loopback.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()
