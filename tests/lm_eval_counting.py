"""lm_eval's command line with the log-likelihood requests that reach the model counted.

``python lm_eval_counting.py COUNT_FILE ARGS...`` runs ``lm_eval ARGS...`` (the plugin registered as for plain
``lm_eval``) with ``HFLM.loglikelihood`` (the entry point of ``--model hf`` and ``--model hf-prefix``) wrapped: each
call appends the number of requests it is given to COUNT_FILE, one line per call, before the model scores them. With
``--use_cache`` lm_eval answers the cached requests itself and passes only the others to the model.
"""

from __future__ import annotations

import sys
from pathlib import Path


def calls(count_file: Path) -> int:
    """How many requests reached the model, by the lines a run wrote (0 when it wrote none)."""
    return sum(int(line) for line in count_file.read_text().split()) if count_file.exists() else 0


def main() -> None:
    count_file = Path(sys.argv[1])
    from lm_eval.models.huggingface import HFLM

    scored = HFLM.loglikelihood

    def counted(self: HFLM, requests: list, *args: object, **kwargs: object) -> list:
        with open(count_file, "a", encoding="utf-8") as out:
            out.write(f"{len(requests)}\n")
        return scored(self, requests, *args, **kwargs)

    HFLM.loglikelihood = counted
    from lm_eval.__main__ import cli_evaluate

    sys.argv = ["lm_eval", *sys.argv[2:]]
    cli_evaluate()


if __name__ == "__main__":
    main()
