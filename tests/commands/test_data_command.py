"""``lm-eval-stereo data list|fetch|mirror|verify``: the pinned files listed, fetched over a real (loopback) HTTP
server or copied from the mirror, written as a mirror and verified; faults leave no partial file; bad input is one
line with exit status 2."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lm_eval_runner import REPO, free_port, shared_data_dir
from loopback_server import link_mirror, serve_mirror

from lm_eval_stereo.cli import main
from lm_eval_stereo.core import registry, sources, upstream
from lm_eval_stereo.datastore.catalogue import benchmark_sources, selected_sources, users
from lm_eval_stereo.datastore.command import licence_line
from lm_eval_stereo.tasks.stereoset_multi import data as stereoset_data

CLI = str(Path(sys.executable).parent / "lm-eval-stereo")
VARIANTS = "gest/data/gender_variants.csv"
#: MBBQ's prompt and answer-phrase tables, which the project's mirror lacks too (the generative MBBQ tasks read a
#: file of the same layout from an option there)
MBBQ_TABLES = "mbbq/answer_detection.py"
NOT_IN_MIRROR = {VARIANTS, MBBQ_TABLES}
#: every benchmark but multilingual StereoSet (from the registry), whose mirror copies (JSON lines) are converted from
#: the pickles in about 7 s: one test converts two of them
NOT_STEREOSET = ",".join(bench.name for bench in registry.benchmarks() if bench.name != "stereoset_multi")
ALL_FILES = [(source, path) for source in registry.SOURCES.values() for path in source.files]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300)


def cached_files(cache: Path) -> set[str]:
    """``<source>/<path>`` of every file in a cache (any file, partial or not)."""
    found = set()
    for file in cache.rglob("*"):
        if file.is_file():
            source, _commit, *path = file.relative_to(cache).parts
            found.add(f"{source}/{'/'.join(path)}")
    return found


def names(benchmarks: str) -> set[str]:
    wanted = {name for benchmark in benchmarks.split(",") for name in benchmark_sources()[benchmark]}
    return {f"{source.name}/{path}" for source, path in ALL_FILES if source.name in wanted}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def downloaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``lm-eval-stereo data fetch`` of everything, run as a command, over HTTP from a loopback server that serves
    the mirror without gender_variants.csv and MBBQ's answer_detection.py (the project's mirror lacks them): the
    server answers 404 for them."""
    root = tmp_path_factory.mktemp("downloaded")
    with serve_mirror(shared_data_dir(), root / "www", withheld=NOT_IN_MIRROR) as server:
        env = {upstream.BASE_URL_ENV: server.url, sources.CACHE_ENV: str(root / "cache"), sources.DATA_DIR_ENV: ""}
        proc = run_cli("data", "fetch", env=env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == len(NOT_IN_MIRROR) and proc.stderr.startswith(
        f"lm-eval-stereo data fetch: {VARIANTS}: "
    )
    assert (
        f"{server.url}/kinit-sk/gest/7dd908cae11720ee5d95e43a4ab94fb410c8b790/data/gender_variants.csv" in proc.stderr
    )
    assert "HTTP 404" in proc.stderr
    assert (
        proc.stdout
        == f"{len(ALL_FILES) - len(NOT_IN_MIRROR)} of {len(ALL_FILES)} files verified in the cache {root / 'cache'}\n"
    )
    assert len(server.requests) == len(ALL_FILES)
    return root / "cache"


def test_each_benchmark_reads_the_sources_its_folder_declares():
    """Derived from the registry: a benchmark reads every ``Source`` its ``sources.py`` declares or imports, and
    each source is read by a benchmark (the ``data`` commands select files by benchmark)."""
    import importlib

    from lm_eval_stereo.core.upstream import Source

    read = benchmark_sources()
    assert list(read) == [bench.name for bench in registry.benchmarks()]
    for bench in registry.benchmarks():
        module = importlib.import_module(f"lm_eval_stereo.tasks.{bench.name}.sources")
        declared = {value.name for value in vars(module).values() if isinstance(value, Source)}
        assert set(read[bench.name]) == declared, bench.name
    assert {name for names in read.values() for name in names} == set(registry.SOURCES)
    assert read["s_jsd"] == ("s_jsd-multilingual", "crows-pairs") and read["eurogest"] == ("eurogest", "eurogest-eval")


def test_fetch_over_http_caches_every_pinned_file_verified(downloaded: Path):
    assert cached_files(downloaded) == {f"{s.name}/{p}" for s, p in ALL_FILES} - NOT_IN_MIRROR
    for source, path in ALL_FILES:
        if f"{source.name}/{path}" not in NOT_IN_MIRROR:
            cached = downloaded / source.name / source.commit / path
            assert cached.read_bytes() == (shared_data_dir() / source.name / path).read_bytes(), cached


def test_list_gives_every_file_with_its_pin_size_licence_and_cache_state(cache: Path, capsys):
    gest = registry.get_source("gest")
    for path, content in (("data/gest.csv", None), ("data/gest_1.1.csv", b"other bytes")):
        target = sources.cache_path(gest, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content or (shared_data_dir() / "gest" / path).read_bytes())
    assert main(["data", "list", "--json"]) == 0
    records = {(r["source"], r["path"]): r for r in json.loads(capsys.readouterr().out)}
    # every pinned file of every registered benchmark, once: the list follows the registry
    assert sorted(records) == sorted((source.name, path) for source, path in ALL_FILES)
    assert len(records) == len(ALL_FILES)
    declared = {source.name for bench in registry.benchmarks() for source in bench.sources if source.files}
    assert {source for source, _ in records} == declared and len(declared) > 10
    assert records["gest", "data/gender_variants.csv"] == {
        "source": "gest",
        "repository": "kinit-sk/gest",
        "commit": "7dd908cae11720ee5d95e43a4ab94fb410c8b790",
        "path": "data/gender_variants.csv",
        "pin": "git-blob:fcbb290cc931675aa7820b0be5ea97c6b40c93a9",
        "licence": "Apache-2.0",
        "size": None,
        "cached": "no",
        "url": "https://raw.githubusercontent.com/kinit-sk/gest/7dd908cae11720ee5d95e43a4ab94fb410c8b790/data/gender_variants.csv",
        "benchmarks": ["gest"],
    }
    assert (records["gest", "data/gest.csv"]["cached"], records["gest", "data/gest_1.1.csv"]["cached"]) == (
        "yes",
        "mismatch",
    )
    assert records["gest", "data/gest.csv"]["pin"] == f"sha256:{gest.files['data/gest.csv'].digest}"
    assert records["gest", "data/gest.csv"]["size"] == 214899
    german = records["german-gender-bias", "data/GerBBQ_AMB.csv"]
    assert german["licence"] == "none declared (all rights reserved): for your own use, never re-host"
    assert records["crows-pairs", "data/crows_pairs_anonymized.csv"]["benchmarks"] == ["s_jsd"]
    assert main(["data", "list", "--benchmarks", "s_jsd"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[0]
        == "s_jsd-multilingual: VSteinborn/s_jsd-multilingual-bias @ b10302047b55043004a0280f8c2f63236ccea878 (benchmarks: s_jsd)"
    )
    assert lines[1] == "  licence: CC BY-SA 4.0"
    assert lines[3] == "  no             85,255  sha256:172a8ad57c5b     data/cps_translated_ar_formatted.csv"
    size = sum(
        pin.size for name in ("s_jsd-multilingual", "crows-pairs") for pin in registry.SOURCES[name].files.values()
    )
    assert lines[-2:] == [
        f"11 files, {size / 1e6:.1f} MB; 0 cached in {cache}",
        f"the data layer reads the offline mirror LM_EVAL_STEREO_DATA_DIR={shared_data_dir()}, not the cache",
    ]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_fetch_from_the_mirror_with_a_progress_bar(cache: Path, tmp_path: Path, capsys, monkeypatch):
    """With ``LM_EVAL_STEREO_DATA_DIR`` set the files are copied from the mirror; the one it lacks is named."""
    mirror = link_mirror(shared_data_dir(), tmp_path / "mirror", withheld={VARIANTS})
    monkeypatch.setenv(sources.DATA_DIR_ENV, str(mirror))
    terminal = Terminal()
    with monkeypatch.context() as patch:
        patch.setattr(sys, "stderr", terminal)
        assert main(["data", "fetch", "--benchmarks", "s_jsd"]) == 0
    size = sum(
        pin.size for name in ("s_jsd-multilingual", "crows-pairs") for pin in registry.SOURCES[name].files.values()
    )
    assert f"data fetch: 100%|##########| {size / 1e6:.2f}M/{size / 1e6:.2f}M" in terminal.getvalue()
    assert cached_files(cache) == names("s_jsd")
    assert capsys.readouterr().out.startswith("11 of 11 files verified in the cache")
    assert main(["data", "fetch", "--benchmarks", "gest,stereotype_leakage"]) == 1
    out, err = capsys.readouterr()
    assert err == (
        f"lm-eval-stereo data fetch: {VARIANTS}: {mirror}/{VARIANTS} is missing from the offline mirror "
        f"LM_EVAL_STEREO_DATA_DIR={mirror}. Copy https://raw.githubusercontent.com/kinit-sk/gest/"
        "7dd908cae11720ee5d95e43a4ab94fb410c8b790/data/gender_variants.csv there, or unset LM_EVAL_STEREO_DATA_DIR "
        "to download it.\n"
    )
    assert out == f"62 of 63 files verified in the cache {cache}, copied from the offline mirror {mirror}\n"
    assert cached_files(cache) == names("s_jsd,gest,stereotype_leakage") - {VARIANTS}


def test_truncated_closed_and_stalled_downloads_leave_nothing_in_the_cache(cache: Path, tmp_path, capsys, monkeypatch):
    """A truncated file, a connection closed mid-file and a server that stops sending mid-file: each named in one
    line, none cached (no partial or ``.part`` file either); a later fetch from a sound server completes the cache."""
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setattr(sources, "DOWNLOAD_TIMEOUT_S", 1)
    faults = {
        "s_jsd-multilingual/data/cps_translated_de_formatted.csv": "truncated",
        "s_jsd-multilingual/data/cps_translated_fi_formatted.csv": "closes",
        "crows-pairs/data/crows_pairs_anonymized.csv": "stalls",
    }
    with serve_mirror(shared_data_dir(), tmp_path / "faulty", faults) as server:
        monkeypatch.setenv(upstream.BASE_URL_ENV, server.url)
        assert main(["data", "fetch", "--benchmarks", "s_jsd"]) == 1
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 3 and out == f"8 of 11 files verified in the cache {cache}\n"
    by_file = {line.split(": ")[1]: line for line in lines}
    assert by_file.keys() == faults.keys()
    truncated = registry.get_source("s_jsd-multilingual").files["data/cps_translated_de_formatted.csv"]
    assert f"checksum mismatch for {server.url}/VSteinborn/" in by_file[next(iter(faults))]
    assert f"expected sha256 {truncated.digest}, got " in by_file[next(iter(faults))]
    half = 67601 // 2
    assert (
        f"the transfer stopped after {half:,} of 67,601 bytes"
        in by_file["s_jsd-multilingual/data/cps_translated_fi_formatted.csv"]
    )
    assert "timed out" in by_file["crows-pairs/data/crows_pairs_anonymized.csv"]
    assert all("LM_EVAL_STEREO_DATA_DIR" in line for line in lines)
    assert cached_files(cache) == names("s_jsd") - faults.keys()
    with serve_mirror(shared_data_dir(), tmp_path / "sound") as server:
        monkeypatch.setenv(upstream.BASE_URL_ENV, server.url)
        assert main(["data", "fetch", "--benchmarks", "s_jsd"]) == 0
        assert sorted(server.requests) == sorted(server.url_path(name) for name in faults)
    assert cached_files(cache) == names("s_jsd")


def test_without_network_or_mirror_one_line_says_how_to_get_the_data(tmp_path: Path):
    env = {sources.DATA_DIR_ENV: "", sources.CACHE_ENV: str(tmp_path / "cache")}
    closed = f"http://127.0.0.1:{free_port()}"
    proc = run_cli("data", "fetch", env={**env, upstream.BASE_URL_ENV: closed})
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"lm-eval-stereo data fetch: could not reach {closed}/slds-lmu/stereotypes-multi/")
    assert (
        "Set LM_EVAL_STEREO_DATA_DIR to an offline mirror" in proc.stderr
        and "`lm-eval-stereo data mirror DIR`" in proc.stderr
    )
    proc = run_cli("data", "fetch", env={**env, sources.OFFLINE_ENV: "1"})
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "cannot be downloaded: LM_EVAL_STEREO_OFFLINE is set. Set LM_EVAL_STEREO_DATA_DIR" in proc.stderr
    assert not cached_files(tmp_path / "cache")


def test_mirror_from_the_cache_is_the_shared_mirror(downloaded: Path, tmp_path: Path, capsys, monkeypatch):
    """Every benchmark but StereoSet (from the registry) mirrored from the cache: each file the cache lacks is named
    with the benchmarks to fetch, each source's licence is listed, and every other file is the shared mirror's."""
    monkeypatch.setenv(sources.CACHE_ENV, str(downloaded))
    out_dir = tmp_path / "mirror"
    assert main(["data", "mirror", str(out_dir), "--benchmarks", NOT_STEREOSET]) == 1
    out, err = capsys.readouterr()
    selected = selected_sources(NOT_STEREOSET.split(","))
    absent = [
        (source, path) for source in selected for path in source.files if f"{source.name}/{path}" in NOT_IN_MIRROR
    ]
    assert len(absent) == len(NOT_IN_MIRROR)
    assert err.splitlines() == [
        f"lm-eval-stereo data mirror: {source.name}/{path}: not in the cache {downloaded}; "
        f"run `lm-eval-stereo data fetch --benchmarks {','.join(users(source))}` first"
        for source, path in absent
    ]
    assert "data fetch --benchmarks gest` first" in err and "data fetch --benchmarks mbbq` first" in err
    written = names(NOT_STEREOSET) - NOT_IN_MIRROR
    size = sum((shared_data_dir() / name).stat().st_size for name in written)
    assert out.splitlines() == [
        *(f"{source.name}: {licence_line(source)}" for source in selected),
        f"{len(written)} files ({size / 1e6:.1f} MB) in {out_dir}; on the offline machines: "
        f"export LM_EVAL_STEREO_DATA_DIR={out_dir.resolve()}",
    ]
    assert "german-gender-bias: none declared (all rights reserved): for your own use, never re-host" in out
    on_disk = {str(f.relative_to(out_dir)) for f in out_dir.rglob("*") if f.is_file()}
    assert on_disk == written
    assert all((out_dir / name).read_bytes() == (shared_data_dir() / name).read_bytes() for name in written)
    # the benchmarks none of whose files the mirror lacks verify clean
    complete = [name for name in NOT_STEREOSET.split(",") if not names(name) & NOT_IN_MIRROR]
    assert {"gest", "mbbq"}.isdisjoint(complete) and len(complete) == len(registry.benchmarks()) - 3
    assert main(["data", "verify", str(out_dir), "--benchmarks", ",".join(complete)]) == 0
    assert capsys.readouterr() == (f"{out_dir}: {len(names(','.join(complete)))} files match their pins\n", "")


def test_mirror_converts_the_stereoset_pickles_to_the_pinned_json_lines(
    cache: Path, tmp_path: Path, capsys, monkeypatch
):
    """Two pickles cached: the mirror gets them and their JSON-lines copies, byte-identical to the pinned ones, which
    the data layer then reads; the nine files not cached are named."""
    stereoset = registry.get_source("stereoset-multi")
    pickles = [stereoset_data.upstream_path(test, "tr") for test in ("intrasentence", "intersentence")]
    for path in pickles:
        target = sources.cache_path(stereoset, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared_data_dir() / "stereoset-multi" / path, target)
    out_dir = tmp_path / "mirror"
    assert main(["data", "mirror", str(out_dir), "--benchmarks", "stereoset_multi"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 9 and all("not in the cache" in line for line in err)
    copies = [path.removesuffix(".pkl") + ".jsonl" for path in pickles]
    for path in [*pickles, *copies]:
        assert (out_dir / "stereoset-multi" / path).read_bytes() == (
            shared_data_dir() / "stereoset-multi" / path
        ).read_bytes()
    monkeypatch.setenv(sources.DATA_DIR_ENV, str(out_dir))
    rows, origin = stereoset_data._raw_rows("intrasentence", "tr")
    assert origin == str(out_dir / "stereoset-multi" / copies[0]) and len(rows) == 2106


def test_verify_names_each_missing_or_wrong_file(tmp_path: Path, capsys):
    mirror = tmp_path / "mirror"
    for name in ("stereoset-multi", "s_jsd-multilingual", "crows-pairs"):
        shutil.copytree(shared_data_dir() / name, mirror / name)
    sjsd, stereo = mirror / "s_jsd-multilingual" / "data", mirror / "stereoset-multi"
    flipped = bytearray((sjsd / "cps_translated_de_formatted.csv").read_bytes())
    flipped[10] ^= 1
    (sjsd / "cps_translated_de_formatted.csv").chmod(0o644)
    (sjsd / "cps_translated_de_formatted.csv").write_bytes(bytes(flipped))
    (sjsd / "cps_translated_fi_formatted.csv").unlink()
    (sjsd / "cps_translated_th_formatted.csv").unlink()
    (sjsd / "cps_translated_th_formatted.csv").mkdir()
    intra_en, intra_de = (stereoset_data.upstream_path("intrasentence", lang) for lang in ("en", "de"))
    (stereo / intra_en).unlink()  # its JSON-lines copy stands in for it
    (stereo / intra_de).unlink()
    (stereo / intra_de).with_suffix(".jsonl").unlink()
    assert main(["data", "verify", str(mirror), "--benchmarks", "stereoset_multi,s_jsd,gest"]) == 1
    out, err = capsys.readouterr()
    pin = registry.get_source("s_jsd-multilingual").files["data/cps_translated_de_formatted.csv"]
    assert err.splitlines() == [
        f"lm-eval-stereo data verify: {stereo / intra_de}: missing (nor its copy df_intrasentence_de.jsonl)",
        f"lm-eval-stereo data verify: {mirror / 'gest'}: missing (the 47 pinned files of gest)",
        f"lm-eval-stereo data verify: {sjsd / 'cps_translated_de_formatted.csv'}: does not match its pin {pin} "
        f"(it has sha256:{sources.sha256_of(sjsd / 'cps_translated_de_formatted.csv')})",
        f"lm-eval-stereo data verify: {sjsd / 'cps_translated_fi_formatted.csv'}: missing",
        f"lm-eval-stereo data verify: {sjsd / 'cps_translated_th_formatted.csv'}: a folder, not a file",
    ]
    # stereoset: 11 upstream files, 10 copies, less the 2 pickles and 1 copy removed; s_jsd: 11, less 3
    assert out == f"{mirror}: {21 - 3 + 8} files match their pins; 5 problem(s)\n"


def test_verify_of_a_mirror_without_gender_variants_names_that_file(tmp_path: Path, capsys):
    """The project's mirror lacks ``gest/data/gender_variants.csv``: verifying its ``gest`` names that file."""
    mirror = link_mirror(shared_data_dir(), tmp_path / "mirror", withheld={VARIANTS})
    assert main(["data", "verify", str(mirror), "--benchmarks", "gest"]) == 1
    out, err = capsys.readouterr()
    assert err == f"lm-eval-stereo data verify: {mirror / VARIANTS}: missing\n"
    assert out == f"{mirror}: 46 files match their pins; 1 problem(s)\n"


BAD_INPUT = {
    "no-command": (["data"], "lm-eval-stereo data: error: the following arguments are required: COMMAND"),
    "unknown-command": (["data", "get"], "argument COMMAND: invalid choice: 'get' (choose from 'list', 'fetch', "),
    "unknown-benchmark": (
        ["data", "fetch", "--benchmarks", "gest,crows"],
        "lm-eval-stereo data fetch: error: argument --benchmarks: unknown benchmark(s) crows; choose from "
        + ", ".join(bench.name for bench in registry.benchmarks()),
    ),
    "empty-benchmarks": (["data", "list", "--benchmarks", ","], "argument --benchmarks: expected benchmark names"),
    "mirror-without-dir": (["data", "mirror"], "lm-eval-stereo data mirror: error: the following arguments are"),
    "mirror-into-a-file": (["data", "mirror", "{p}/a_file"], "argument DIR: {p}/a_file: a file, not a folder"),
    "mirror-below-a-file": (["data", "mirror", "{p}/a_file/m"], "argument DIR: {p}/a_file/m: {p}/a_file is a file"),
    "verify-missing-dir": (["data", "verify", "{p}/missing"], "argument DIR: {p}/missing: no such file or folder"),
    "verify-a-file": (["data", "verify", "{p}/a_file"], "argument DIR: {p}/a_file: a file, not a folder"),
    "list-extra-argument": (["data", "list", "extra"], "lm-eval-stereo data: error: unrecognized arguments: extra"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_line_with_exit_status_2(case: str, tmp_path: Path, capsys):
    (tmp_path / "a_file").write_text("")
    arguments, message = BAD_INPUT[case]
    with pytest.raises(SystemExit) as info:
        main([argument.format(p=tmp_path) for argument in arguments])
    out, err = capsys.readouterr()
    assert info.value.code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("lm-eval-stereo data") and message.format(p=tmp_path) in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


def test_bad_input_from_the_console_script(tmp_path: Path):
    proc = run_cli("data", "verify", str(tmp_path / "missing"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert (
        proc.stderr
        == f"lm-eval-stereo data verify: error: argument DIR: {tmp_path / 'missing'}: no such file or folder\n"
    )


def test_make_demo_checks_the_upstream_host_under_the_base_url(tmp_path: Path):
    """``scripts/check_data.py`` (``make demo``, before anything is installed) asks for a pinned file where the
    downloads would go: the loopback server answers, a closed port gives the one line that says how to get the data."""
    script = REPO / "scripts" / "check_data.py"
    with serve_mirror(shared_data_dir(), tmp_path / "www") as server:
        env = {**os.environ, sources.DATA_DIR_ENV: "", upstream.BASE_URL_ENV: server.url}
        ok = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60)
        assert ok.returncode == 0 and ok.stderr == ""
        assert server.requests == [server.url_path("gest/data/gest.csv")]
    env[upstream.BASE_URL_ENV] = f"http://127.0.0.1:{free_port()}"
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("no data: LM_EVAL_STEREO_DATA_DIR is unset and the upstream host is unreachable")
    assert "`lm-eval-stereo data mirror DIR`" in proc.stderr
