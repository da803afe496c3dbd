"""Rows made in code as a dataset backed by an Arrow file in the ``datasets`` cache, as rows loaded from the hub are.

lm_eval runs a task's ``process_docs`` (a ``Dataset.map``) each time it asks for the task's documents, five times in a
run of BBQ. ``datasets`` caches a map's result on disk only for a dataset backed by a file, so over rows held in memory
(``Dataset.from_list``) every call maps every row again: 12 of the 15 CPU-seconds of a 4-document ``bbq`` run on the
tiny model. Saved once under ``$HF_DATASETS_CACHE/lm_eval_stereo/<key>`` and read back, the rows are the same rows
(Arrow keeps them as they are) and the map runs once, as it does for the hub's rows.

The key names what the rows are made of (the pins of the files they are read from and the code that converts them):
rows of another key are never read. The folder is written under another name and renamed when whole, so a run never
reads half of one. A cache that cannot be written leaves the rows in memory, with a warning: the same rows, slower.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import datasets

logger = logging.getLogger(__name__)

#: the folder of the ``datasets`` cache that holds these datasets
CACHE_FOLDER = "lm_eval_stereo"


def rows_key(made_of: Any) -> str:
    """A key for rows made of ``made_of`` (any JSON value: pins, options, the converting code's digest)."""
    return hashlib.sha256(json.dumps(made_of, sort_keys=True).encode()).hexdigest()[:32]


def cache_folder(key: str) -> Path:
    """Where the dataset of ``key`` is kept (whether or not it is there)."""
    import datasets

    return Path(datasets.config.HF_DATASETS_CACHE) / CACHE_FOLDER / key


def file_backed_dataset(key: str, rows: Callable[[], list[dict[str, Any]]]) -> datasets.Dataset:
    """The dataset of ``rows()`` backed by an Arrow file in the cache: read from the cache when ``key`` is there, else
    made, saved and read back; held in memory when the cache cannot hold it."""
    import datasets

    folder = cache_folder(key)
    if (folder / "state.json").is_file():
        return datasets.load_from_disk(str(folder))
    dataset = datasets.Dataset.from_list(rows())
    part = folder.with_name(f"{folder.name}.part-{os.getpid()}")
    shutil.rmtree(part, ignore_errors=True)  # left by a process of the same id that was killed
    bars_shown = not datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()  # a second or two, once: no bar in the run's log
    try:
        dataset.save_to_disk(str(part))
        part.rename(folder)
    except OSError as exc:  # a full or read-only disk; or another process saved the same rows first
        shutil.rmtree(part, ignore_errors=True)
        if not (folder / "state.json").is_file():
            logger.warning(
                "the datasets cache cannot hold %s (%s): its rows stay in memory, and lm_eval maps them again each "
                "time it asks for them (the same rows, slower); set HF_DATASETS_CACHE to a writable folder",
                folder,
                exc.strerror or exc,
            )
            return dataset
    finally:
        if bars_shown:
            datasets.enable_progress_bars()
    return datasets.load_from_disk(str(folder))
