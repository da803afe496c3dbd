"""Check, before anything is installed, that the demo's upstream data can be had (standard library only).

With ``LM_EVAL_STEREO_DATA_DIR`` set, the offline mirror must hold the folders the demo reads; without it, the
pinned upstream host must answer. Either way a failure is one line that says how to get the data. Used by
``make demo``; exit status 0 when the data is reachable, 1 otherwise.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

DATA_DIR_ENV = "LM_EVAL_STEREO_DATA_DIR"
DEMO_SOURCES = (
    "stereoset-multi",
    "gest",
    "german-gender-bias",
    "s_jsd-multilingual",
    "crows-pairs",
    "stereotype-leakage",
)
UPSTREAM = "https://raw.githubusercontent.com/kinit-sk/gest/7dd908cae11720ee5d95e43a4ab94fb410c8b790/README.md"
HOW = (
    f"set {DATA_DIR_ENV} to an offline mirror laid out as <dir>/<source>/<upstream path> (a copy of the project's "
    "shared/data folder; the Makefile uses ../shared/data when it exists), or allow downloads from "
    "raw.githubusercontent.com"
)


def main() -> int:
    configured = os.environ.get(DATA_DIR_ENV, "").strip()
    if configured:
        root = Path(configured).expanduser()
        missing = [name for name in DEMO_SOURCES if not (root / name).is_dir()]
        if missing:
            print(f"no data: {DATA_DIR_ENV}={root} lacks {', '.join(missing)}; {HOW}", file=sys.stderr)
            return 1
        return 0
    try:
        urllib.request.urlopen(urllib.request.Request(UPSTREAM, method="HEAD"), timeout=5).close()
    except OSError as exc:
        print(f"no data: {DATA_DIR_ENV} is unset and the upstream host is unreachable ({exc}); {HOW}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
