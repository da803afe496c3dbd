"""Check, before anything is installed, that the demo's upstream data can be had (standard library only).

With ``LM_EVAL_STEREO_DATA_DIR`` set, the offline mirror must hold the folders the demo reads; without it, the
pinned upstream host (``$LM_EVAL_STEREO_BASE_URL``, default GitHub's raw-file host) must answer. Either way a failure is one line that says how to get the data. Used by
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
    "mbbq",
)
BASE_URL_ENV = "LM_EVAL_STEREO_BASE_URL"
#: a pinned upstream file, asked for under $LM_EVAL_STEREO_BASE_URL (default GitHub's raw-file host)
PINNED = "kinit-sk/gest/7dd908cae11720ee5d95e43a4ab94fb410c8b790/data/gest.csv"
HOW = (
    f"set {DATA_DIR_ENV} to an offline mirror laid out as <dir>/<source>/<upstream path> (a copy of the project's "
    "shared/data folder, or what `lm-eval-stereo data mirror DIR` writes on a machine with network; the Makefile "
    "uses ../shared/data when it exists), or allow downloads from raw.githubusercontent.com"
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
    base = (os.environ.get(BASE_URL_ENV, "").strip() or "https://raw.githubusercontent.com").rstrip("/")
    try:
        urllib.request.urlopen(urllib.request.Request(f"{base}/{PINNED}", method="HEAD"), timeout=5).close()
    except OSError as exc:
        print(f"no data: {DATA_DIR_ENV} is unset and the upstream host is unreachable ({exc}); {HOW}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
