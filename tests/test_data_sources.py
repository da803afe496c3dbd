"""Data layer: pinned checksums, offline mirror, download cache, restricted unpickler, clear errors."""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from lm_eval_runner import shared_data_dir

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import ChecksumError, DataUnavailableError, MalformedDataError
from lm_eval_stereo.core.readers import read_csv, read_jsonl
from lm_eval_stereo.core.safe_pickle import load_dataframe
from lm_eval_stereo.tasks.stereoset_multi import data as stereoset_data

SOURCE = "stereoset-multi"
PKL = stereoset_data.upstream_path("intersentence", "de")
JSONL = stereoset_data.upstream_path("intersentence", "de", ".jsonl")


def test_every_pinned_file_of_the_mirror_matches(monkeypatch):
    for source in sources.SOURCES.values():
        for path, expected in source.files.items():
            local = shared_data_dir() / source.name / path
            if local.exists():
                assert sources.sha256_of(local) == expected, local
    assert "/883f005dd9d003a6974e498f435629ec46d931c7/" in sources.get_source(SOURCE).url(PKL)


def test_mirror_file_with_wrong_checksum_is_refused(tmp_path, monkeypatch):
    intra = stereoset_data.upstream_path("intrasentence", "de", ".jsonl")
    target = tmp_path / SOURCE / intra
    target.parent.mkdir(parents=True)
    target.write_text('{"id": "tampered"}\n')
    monkeypatch.setenv(sources.DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(ChecksumError) as info:
        stereoset_data.load_rows("de")
    message = str(info.value)
    assert str(target) in message
    assert sources.get_source(SOURCE).mirror_files[intra] in message
    assert sources.sha256_of(target) in message


def test_missing_mirror_file_names_the_path_and_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv(sources.DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(DataUnavailableError) as info:
        sources.fetch(SOURCE, PKL)
    assert str(tmp_path / SOURCE / PKL) in str(info.value)
    assert sources.DATA_DIR_ENV in str(info.value)


def test_no_network_and_no_mirror_says_which_variable_to_set(monkeypatch, tmp_path):
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path))

    def refuse(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(sources.urllib.request, "urlopen", refuse)
    with pytest.raises(DataUnavailableError) as info:
        stereoset_data.load_rows("fr")
    assert "LM_EVAL_STEREO_DATA_DIR" in str(info.value)
    assert "raw.githubusercontent.com/slds-lmu/stereotypes-multi/883f005" in str(info.value)
    monkeypatch.setenv(sources.OFFLINE_ENV, "1")
    with pytest.raises(DataUnavailableError, match=sources.OFFLINE_ENV):
        sources.fetch(SOURCE, PKL)


def _serve(monkeypatch, payload: bytes, calls: list[str]):
    class Response(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def urlopen(url, timeout):
        calls.append(url)
        return Response(payload)

    monkeypatch.setattr(sources.urllib.request, "urlopen", urlopen)


def test_download_verifies_caches_and_unpickles_to_the_mirror_rows(monkeypatch, tmp_path):
    """The network path: pickle downloaded, checksum-verified, cached, read with the restricted unpickler."""
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path))
    calls: list[str] = []
    _serve(monkeypatch, (shared_data_dir() / SOURCE / PKL).read_bytes(), calls)
    frame = load_dataframe(sources.fetch(SOURCE, PKL))
    assert len(calls) == 1 and calls[0] == sources.get_source(SOURCE).url(PKL)
    sources.fetch(SOURCE, PKL)
    assert len(calls) == 1, "the second fetch must come from the cache"
    mirror_rows = read_jsonl(shared_data_dir() / SOURCE / JSONL)
    pickled_rows = frame.drop(columns=[c for c in frame.columns if c.endswith("_labels")]).to_dict(orient="records")
    assert pickled_rows == mirror_rows


def test_download_with_wrong_checksum_is_not_cached(monkeypatch, tmp_path):
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path))
    _serve(monkeypatch, b"not the pickle", [])
    with pytest.raises(ChecksumError) as info:
        sources.fetch(SOURCE, PKL)
    assert sources.get_source(SOURCE).files[PKL] in str(info.value)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_pickle_only_mirror_goes_through_the_restricted_unpickler(tmp_path, monkeypatch):
    for test in ("intrasentence", "intersentence"):
        path = stereoset_data.upstream_path(test, "tr")
        (tmp_path / SOURCE / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared_data_dir() / SOURCE / path, tmp_path / SOURCE / path)
    monkeypatch.setenv(sources.DATA_DIR_ENV, str(tmp_path))
    from_pickles = stereoset_data.load_rows("tr")
    monkeypatch.setenv(sources.DATA_DIR_ENV, str(shared_data_dir()))
    assert from_pickles == stereoset_data.load_rows("tr")
    assert len(from_pickles) == 2106 + 2123


def test_restricted_unpickler_refuses_foreign_globals(tmp_path):
    evil = tmp_path / "evil.pkl"
    evil.write_bytes(pickle.dumps(os.system))
    with pytest.raises(MalformedDataError, match="not allowed"):
        load_dataframe(evil)
    not_a_frame = tmp_path / "list.pkl"
    not_a_frame.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(MalformedDataError, match="expected a pandas DataFrame"):
        load_dataframe(not_a_frame)


def test_row_errors_name_file_row_and_field(tmp_path, monkeypatch):
    good = json.loads((shared_data_dir() / SOURCE / JSONL).read_text().splitlines()[0])
    rows = [good, {**good, "c2_gold_label": "neutral"}]

    def fake_raw_rows(test, lang):
        return (rows if test == "intersentence" else []), "fake.jsonl"

    monkeypatch.setattr(stereoset_data, "_raw_rows", fake_raw_rows)
    with pytest.raises(MalformedDataError) as info:
        stereoset_data.load_rows("de")
    assert (info.value.file, info.value.row, info.value.field) == ("fake.jsonl", 2, "c1_gold_label")
    rows[1] = {**good, "c3_sentence": ""}
    with pytest.raises(MalformedDataError, match=r"fake.jsonl, row 2, field 'c3_sentence'"):
        stereoset_data.load_rows("de")
    with pytest.raises(ValueError, match="en, de, fr, es, tr"):
        stereoset_data.load_rows("xx")


def test_readers_report_malformed_rows(tmp_path: Path):
    csv_file = tmp_path / "t.csv"
    csv_file.write_text("a;b\n1;2\n3;4;5\n", encoding="utf-8")
    with pytest.raises(MalformedDataError, match=r"t.csv, row 3: more fields"):
        read_csv(csv_file, required=["a", "b"], delimiter=";")
    with pytest.raises(MalformedDataError, match=r"missing column\(s\) c") as info:
        read_csv(csv_file, required=["a", "c"], delimiter=";")
    assert info.value.field == "c"
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(MalformedDataError, match=r"t.jsonl, row 2: invalid JSON"):
        read_jsonl(jsonl)
    jsonl.write_text('{"a": 1}\n{"b": 2}\n')
    with pytest.raises(MalformedDataError, match=r"row 2, field 'a'"):
        read_jsonl(jsonl, required=["a"])


def test_tiny_models_are_reproducible(tmp_path):
    """The same seed gives byte-identical weights and tokenizers (tokenizer training must not break ties at random)."""
    from lm_eval_stereo.local_models.tiny import BUILDERS

    for kind, build in BUILDERS.items():
        first, second = build(tmp_path / f"{kind}_1", seed=0), build(tmp_path / f"{kind}_2", seed=0)
        for name in ("model.safetensors", "tokenizer.json"):
            assert sources.sha256_of(first / name) == sources.sha256_of(second / name), (kind, name)
        other = build(tmp_path / f"{kind}_3", seed=1)
        assert sources.sha256_of(other / "model.safetensors") != sources.sha256_of(first / "model.safetensors")
