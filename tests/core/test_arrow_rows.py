"""core/arrow_rows.py: rows made in code, kept as an Arrow file in the datasets cache so that a map over them is cached
as over the hub's rows; the same rows whether made, read back, or held in memory when the cache cannot hold them."""

from __future__ import annotations

import logging
import os

import datasets
import pytest

from lm_eval_stereo.core import arrow_rows

ROWS = [
    {"text": "Der Arzt", "label": 0, "info": {"ans0": ["er", "m"]}, "groups": ["m"]},
    {"text": "Die Ärztin", "label": 2, "info": {"ans0": ["sie", "f"]}, "groups": []},
]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "datasets"))
    return tmp_path / "datasets"


def made(calls: list[int]):
    def rows():
        calls.append(1)
        return ROWS

    return rows


def test_rows_are_made_once_then_read_back_the_same_and_backed_by_a_file(cache):
    calls: list[int] = []
    first = arrow_rows.file_backed_dataset("k1", made(calls))
    again = arrow_rows.file_backed_dataset("k1", made(calls))
    assert calls == [1]  # the second call reads the cache
    assert first.to_list() == again.to_list() == ROWS
    assert first.cache_files and first.cache_files[0]["filename"].startswith(str(cache / "lm_eval_stereo" / "k1"))
    other = arrow_rows.file_backed_dataset("k2", made(calls))
    assert calls == [1, 1] and other.to_list() == ROWS  # another key: made again
    assert not list((cache / "lm_eval_stereo").glob("*.part-*"))


#: the rows :func:`upper` was called on
MAPPED: list[str] = []


def upper(row: dict) -> dict:
    MAPPED.append(row["text"])
    return {"text": row["text"].upper()}


def test_a_map_over_the_rows_runs_once_across_loads(cache):
    """What lm_eval's process_docs gets: the second map over a fresh load reads the first one's result."""
    MAPPED.clear()
    for _ in range(2):
        dataset = arrow_rows.file_backed_dataset("k", lambda: ROWS)
        assert dataset.map(upper)["text"] == ["DER ARZT", "DIE ÄRZTIN"]
    assert MAPPED == ["Der Arzt", "Die Ärztin"]
    in_memory = datasets.Dataset.from_list(ROWS)  # what the rows were before: mapped on every call
    for _ in range(2):
        in_memory.map(upper)
    assert len(MAPPED) == 6


def test_a_cache_that_cannot_be_written_keeps_the_rows_in_memory_with_a_warning(cache, caplog):
    cache.mkdir()
    (cache / "lm_eval_stereo").write_text("a file where the folder goes")
    with caplog.at_level(logging.WARNING, logger=arrow_rows.__name__):
        dataset = arrow_rows.file_backed_dataset("k", lambda: ROWS)
    assert dataset.to_list() == ROWS and not dataset.cache_files
    (record,) = caplog.records
    assert "cannot hold" in record.getMessage() and "set HF_DATASETS_CACHE" in record.getMessage()


def test_rows_another_process_saved_first_are_read_and_a_killed_processs_part_is_replaced(cache, monkeypatch):
    folder = arrow_rows.cache_folder("k")
    stale = folder.with_name(f"{folder.name}.part-{os.getpid()}")
    stale.mkdir(parents=True)
    (stale / "half.arrow").write_bytes(b"half")
    theirs = [{"text": "saved first", "label": 1, "info": {"ans0": ["x", "y"]}, "groups": []}]
    save = datasets.Dataset.save_to_disk

    def save_after_the_other(self, path, **kwargs):
        save(datasets.Dataset.from_list(theirs), str(folder))  # the other process wins the race
        return save(self, path, **kwargs)

    monkeypatch.setattr(datasets.Dataset, "save_to_disk", save_after_the_other)
    assert arrow_rows.file_backed_dataset("k", lambda: ROWS).to_list() == theirs
    assert not stale.exists()


def test_the_key_follows_what_the_rows_are_made_of():
    pins = {"files": [["bbq", "data/Age.jsonl", "ab" * 32]], "code": "cd" * 32}
    assert arrow_rows.rows_key(pins) == arrow_rows.rows_key(dict(reversed(pins.items())))
    assert arrow_rows.rows_key(pins) != arrow_rows.rows_key({**pins, "code": "ce" * 32})
