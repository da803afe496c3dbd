"""Data layer: pinned checksums, offline mirror, download cache, restricted unpickler, clear errors."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from lm_eval_runner import free_port, shared_data_dir
from loopback_server import serve_mirror

from lm_eval_stereo.core import registry, sources, upstream
from lm_eval_stereo.core.errors import ChecksumError, DataUnavailableError, MalformedDataError, NoNetworkError
from lm_eval_stereo.core.pins import Pin, git_blob_id, parse_pins
from lm_eval_stereo.core.readers import read_csv, read_jsonl
from lm_eval_stereo.core.safe_pickle import load_dataframe
from lm_eval_stereo.tasks.stereoset_multi import data as stereoset_data

SOURCE = "stereoset-multi"
PKL = stereoset_data.upstream_path("intersentence", "de")
JSONL = stereoset_data.upstream_path("intersentence", "de", ".jsonl")


def test_every_pinned_file_of_the_mirror_matches(monkeypatch):
    """Pins and sizes against the mirror; of the two files the mirror lacks, GEST's is pinned by its git blob id."""
    checked = 0
    for source in registry.SOURCES.values():
        for path, pin in [*source.files.items(), *source.mirror_files.items()]:
            local = shared_data_dir() / source.name / path
            if local.exists():
                assert pin.digest_of(local) == pin.digest and pin.size in (None, local.stat().st_size), local
                checked += 1
            else:
                assert (source.name, path) in {
                    ("gest", "data/gender_variants.csv"),
                    ("mbbq", "answer_detection.py"),
                }, "only these may be missing"
    # every pinned file of every registered benchmark's sources is checked but the two the mirror may lack
    assert checked >= sum(len(s.files) + len(s.mirror_files) for s in registry.SOURCES.values()) - 2 > 200
    assert "/883f005dd9d003a6974e498f435629ec46d931c7/" in registry.get_source(SOURCE).url(PKL)
    assert registry.get_source(SOURCE).url(PKL).startswith("https://raw.githubusercontent.com/slds-lmu/")
    variants = registry.get_source("gest").pin("data/gender_variants.csv")
    assert (variants.kind, variants.digest, variants.size) == (
        "git-blob",
        "fcbb290cc931675aa7820b0be5ea97c6b40c93a9",
        None,
    )
    assert not (shared_data_dir() / "gest" / "data" / "gender_variants.csv").exists()


def test_git_blob_ids_are_gits_own(tmp_path):
    """The blob ids of two GEST files as listed in the upstream tree at 7dd908c (``git ls-tree``)."""
    gest = shared_data_dir() / "gest" / "data"
    assert git_blob_id(gest / "gest.csv") == "b492feaa2d9acb02416b22fe73d97913201bf13e"
    assert git_blob_id(gest / "gest_1.1.csv") == "910fb858b1382e6f3c37a0c6ea77d779af8d55ff"
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert git_blob_id(empty) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob
    pin = Pin("git-blob", "b492feaa2d9acb02416b22fe73d97913201bf13e")
    assert pin.verify(gest / "gest.csv", "gest.csv") == gest / "gest.csv"
    flipped = tmp_path / "gest.csv"
    data = bytearray((gest / "gest.csv").read_bytes())
    data[100] ^= 1
    flipped.write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=r"expected git-blob b492feaa2d9acb02416b22fe73d97913201bf13e, got "):
        pin.verify(flipped, str(flipped))


def test_pin_tables_refuse_malformed_lines():
    assert parse_pins(f"{'a' * 64}  12  x/y.csv\ngit-blob:{'b' * 40}  -  z.csv") == {
        "x/y.csv": Pin("sha256", "a" * 64, 12),
        "z.csv": Pin("git-blob", "b" * 40, None),
    }
    for line, problem in [
        ("abc  1  x", "64 lowercase hex digits"),
        (f"md5:{'a' * 32}  1  x", "unknown pin kind 'md5'"),
        (f"{'a' * 64}  big  x", "size must be a number of bytes"),
        (f"{'a' * 64}  1", "a pin line is"),
    ]:
        with pytest.raises(ValueError, match=problem):
            parse_pins(line)
    with pytest.raises(ValueError, match="x is pinned twice"):
        parse_pins(f"{'a' * 64}  1  x\n{'b' * 64}  2  x")


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
    assert registry.get_source(SOURCE).mirror_files[intra].digest in message
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
    monkeypatch.setenv(upstream.BASE_URL_ENV, f"http://127.0.0.1:{free_port()}/")
    with pytest.raises(NoNetworkError) as info:
        stereoset_data.load_rows("fr")
    assert "LM_EVAL_STEREO_DATA_DIR" in str(info.value) and "lm-eval-stereo data mirror" in str(info.value)
    assert f"{upstream.base_url()}/slds-lmu/stereotypes-multi/883f005" in str(info.value)
    monkeypatch.setenv(sources.OFFLINE_ENV, "1")
    with pytest.raises(NoNetworkError, match=sources.OFFLINE_ENV):
        sources.fetch(SOURCE, PKL)
    assert not any(tmp_path.rglob("*.*")), "no file, partial or not, is left in the cache"


def test_download_verifies_caches_and_unpickles_to_the_mirror_rows(monkeypatch, tmp_path):
    """The network path over a loopback server: pickle downloaded, verified, cached, read with the restricted
    unpickler; the second fetch comes from the cache."""
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / "cache"))
    with serve_mirror(shared_data_dir(), tmp_path / "www") as server:
        monkeypatch.setenv(upstream.BASE_URL_ENV, server.url)
        frame = load_dataframe(sources.fetch(SOURCE, PKL))
        assert server.requests == [server.url_path(f"{SOURCE}/{PKL}")]
        assert sources.fetch(SOURCE, PKL) == tmp_path / "cache" / SOURCE / registry.get_source(SOURCE).commit / PKL
        assert len(server.requests) == 1, "the second fetch must come from the cache"
    mirror_rows = read_jsonl(shared_data_dir() / SOURCE / JSONL)
    pickled_rows = frame.drop(columns=[c for c in frame.columns if c.endswith("_labels")]).to_dict(orient="records")
    assert pickled_rows == mirror_rows


def test_download_with_wrong_checksum_is_not_cached(monkeypatch, tmp_path):
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / "cache"))
    with serve_mirror(shared_data_dir(), tmp_path / "www", {f"{SOURCE}/{PKL}": "truncated"}) as server:
        monkeypatch.setenv(upstream.BASE_URL_ENV, server.url)
        with pytest.raises(ChecksumError) as info:
            sources.fetch(SOURCE, PKL)
    assert registry.get_source(SOURCE).files[PKL].digest in str(info.value)
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))


def test_download_of_a_file_pinned_by_its_git_blob_id(monkeypatch, tmp_path):
    """How ``gender_variants.csv`` is checked: GEST's ``gest.csv`` pinned by its blob id instead of its sha256 is
    downloaded and cached; pinned by another blob id, it is refused and not cached."""
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / "cache"))
    gest = registry.get_source("gest")
    blob = Pin("git-blob", "b492feaa2d9acb02416b22fe73d97913201bf13e")
    with serve_mirror(shared_data_dir(), tmp_path / "www") as server:
        monkeypatch.setenv(upstream.BASE_URL_ENV, server.url)
        monkeypatch.setitem(registry.SOURCES, "gest", replace(gest, files={"data/gest.csv": blob}))
        cached = sources.fetch("gest", "data/gest.csv")
        assert cached.read_bytes() == (shared_data_dir() / "gest" / "data" / "gest.csv").read_bytes()
        cached.unlink()
        wrong = Pin("git-blob", "910fb858b1382e6f3c37a0c6ea77d779af8d55ff")  # gest_1.1.csv's
        monkeypatch.setitem(registry.SOURCES, "gest", replace(gest, files={"data/gest.csv": wrong}))
        with pytest.raises(
            ChecksumError, match="expected git-blob 910fb858b1382e6f3c37a0c6ea77d779af8d55ff, got b492f"
        ):
            sources.fetch("gest", "data/gest.csv")
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))


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
