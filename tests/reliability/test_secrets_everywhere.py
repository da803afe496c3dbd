"""No credential in any channel of a run, whoever prints it: lm_eval, the plugin or a library (issue 60;
:mod:`lm_eval_stereo.core.credentials`, :mod:`lm_eval_stereo.core.served_credentials`).

Every way a key can be given, each with a text of its own: ``OPENAI_API_KEY`` (sent by lm_eval as ``Authorization:
Bearer``), ``api_key=``, ``auth_token=`` given twice (lm_eval's "Overwriting key" warning prints both), a key in
``base_url``'s query, ``header=`` (sent as the header), ``base_url`` user info (sent as basic authentication), and a
token inside ``--metadata`` (the persona judge's ``judge_model_args``, which reaches the results, every samples line
and the report's HTML). Each run is scanned, every line of its console and every byte of every file it writes (its
``--use_cache`` database among them), and of the report's HTML made from it; each key is asserted to have reached
the server where lm_eval sends it, and each channel to have been used (lm_eval's error log of a failed concurrent
request, its "Overwriting" warning, the judge's description in the samples), so that the scan means something.

The server is the fault-injecting stand-in (tests/openai_stand_in.py): it answers a concurrent request HTTP 503 the
first time it comes (``http_503_first``), which no real server does on demand, and lm_eval logs the failed request
with its headers. ``base_url`` user info with ``num_concurrent`` above 1 (aiohttp refuses it beside lm_eval's
``Authorization`` header: every request would fail) stops the run before its first request, in one line.
"""

from __future__ import annotations

import json
from base64 import b64encode
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_command, run_lm_eval

ENV_KEY, ARG_KEY, FIRST_TOKEN, AUTH_TOKEN = "sk-env-5e0a91c3", "sk-arg-77d2f0", "tok-first-c41a9e", "tok-auth-0b83d6"
QUERY_KEY, HEADER_KEY, URL_KEY, JUDGE_TOKEN = "sk-query-6f12ab", "sk-header-e9d07c", "sk-url-3a58b1", "hf-judge-d27c4e"
SECRETS = (ENV_KEY, ARG_KEY, FIRST_TOKEN, AUTH_TOKEN, QUERY_KEY, HEADER_KEY, URL_KEY, JUDGE_TOKEN)
TASKS = "gest_en,stereo_persona_de_once"


@pytest.fixture
def stand_in():
    from openai_stand_in import serve_stand_in

    with serve_stand_in() as server:
        yield server


def scanned(folder: Path, *texts: str) -> dict[str, list[str]]:
    """Every secret found, by where: each file below ``folder`` and each of ``texts``."""
    found: dict[str, list[str]] = {}
    places = {str(path): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    places |= {f"console {n}": text.encode() for n, text in enumerate(texts)}
    for place, data in places.items():
        hits = [secret for secret in SECRETS if secret.encode() in data]
        if hits:
            found[place] = hits
    return found


def served(stand_in, tiny_causal: Path, url: str, out: Path, *more: str, env: dict[str, str] | None = None, **args):
    """``lm_eval`` of ``gest_en`` (one document, samples logged) on ``local-completions`` at ``url``, with ``args`` as
    more model arguments (given as JSON)."""
    model_args = {"model": "stand-in-model", "base_url": url, "tokenizer": str(tiny_causal), **args}
    command = ["--model", "local-completions", "--model_args", json.dumps(model_args)]
    command += ["--tasks", "gest_en", "--limit", "1", "--log_samples", *more]
    return run_lm_eval(command, out, env=env, check=False)


def judge(tiny_causal: Path) -> list[str]:
    return [
        "--metadata",
        json.dumps({"judge_model": "hf", "judge_model_args": f"pretrained={tiny_causal},token={JUDGE_TOKEN}"}),
    ]


def assert_clean(run: LmEvalRun, *folders: Path) -> None:
    assert run.returncode == 0, run.stderr[-3000:]
    for folder in folders:
        assert scanned(folder, run.stdout, run.stderr) == {}


def test_keys_from_the_environment_the_arguments_the_query_and_the_metadata_reach_no_file_nor_console(
    stand_in, tiny_causal: Path, tmp_path: Path
):
    stand_in.set_fault("http_503_first")
    out, cache = tmp_path / "out", tmp_path / "cache" / "requests"
    command = ["--model", "local-completions", "--model_args"]
    command += [
        f"model=stand-in-model,base_url={stand_in.base}/v1/completions?api-key={QUERY_KEY},tokenizer={tiny_causal},"
        f"num_concurrent=2,api_key={ARG_KEY},auth_token={FIRST_TOKEN},auth_token={AUTH_TOKEN}"
    ]
    command += ["--tasks", TASKS, "--limit", "1", "--log_samples", "--use_cache", str(cache), *judge(tiny_causal)]
    run = run_lm_eval(command, out, env={"OPENAI_API_KEY": ENV_KEY}, check=False)
    assert_clean(run, out, cache.parent)

    assert {headers["Authorization"] for headers in stand_in.headers} == {f"Bearer {ENV_KEY}"}
    assert all(path.endswith(f"?api-key={QUERY_KEY}") for path in stand_in.paths)
    assert stand_in.shed and "Exception:ClientResponseError" in run.stderr, "a failed request was logged, headers too"
    assert "Overwriting key 'auth_token': '<redacted>' -> '<redacted>'" in run.stderr
    [sample] = run.samples["stereo_persona_de_once"]
    assert f"lexicon+judge hf(pretrained={tiny_causal},token=<redacted>)" in json.dumps(sample)
    config = run.results["configs"]["stereo_persona_de_once"]["metadata"]
    assert config["judge_model_args"] == f"pretrained={tiny_causal},token=<redacted>"

    html = tmp_path / "html"
    report = run_command("report", out, "--html", html, "--details")
    assert report.returncode == 0, report.stderr[-3000:]
    page = (html / "index.html").read_text()
    assert f"judge_model_args=pretrained={tiny_causal},token=&lt;redacted&gt;" in page, "the page names the judge"
    assert scanned(html, report.stdout, report.stderr) == {}


def test_a_key_in_a_header_argument_reaches_no_file_nor_console(stand_in, tiny_causal: Path, tmp_path: Path):
    out = tmp_path / "out"
    run = served(
        stand_in, tiny_causal, f"{stand_in.base}/v1/completions", out, header={"Authorization": f"Bearer {HEADER_KEY}"}
    )
    assert_clean(run, out)
    assert {headers["Authorization"] for headers in stand_in.headers} == {f"Bearer {HEADER_KEY}"}


def test_a_key_as_base_url_user_info_reaches_no_file_nor_console(stand_in, tiny_causal: Path, tmp_path: Path):
    """One request at a time: lm_eval sends them through ``requests``, which sends the user info as basic
    authentication."""
    out = tmp_path / "out"
    url = f"http://user:{URL_KEY}@{stand_in.base.removeprefix('http://')}/v1/completions"
    run = served(stand_in, tiny_causal, url, out)
    assert_clean(run, out)
    basic = "Basic " + b64encode(f"user:{URL_KEY}".encode()).decode()
    assert {headers["Authorization"] for headers in stand_in.headers} == {basic}


def test_base_url_user_info_with_concurrent_requests_stops_before_the_first_request(
    stand_in, tiny_causal: Path, tmp_path: Path
):
    out = tmp_path / "out"
    url = f"http://user:{URL_KEY}@{stand_in.base.removeprefix('http://')}/v1/completions"
    run = served(stand_in, tiny_causal, url, out, num_concurrent=2)
    assert run.returncode == 2 and run.results == {} and stand_in.requests == [], run.stderr[-3000:]
    assert run.stderr.strip().splitlines()[-1] == (
        f"lm-eval-stereo: base_url {stand_in.base}/v1/completions carries credentials as user info (user:key@), "
        "which lm_eval's concurrent requests (num_concurrent=2, through aiohttp) cannot send beside its Authorization "
        "header: every request would fail. Give the key as OPENAI_API_KEY (or header=...) and base_url without it, "
        "or num_concurrent=1; no request was sent"
    )
    assert "Traceback" not in run.stderr and scanned(out, run.stdout, run.stderr) == {}


def test_the_key_a_backend_sends_is_hidden_and_an_empty_one_hides_nothing(monkeypatch):
    """lm_eval sends ``Bearer `` with nothing after it where ``OPENAI_API_KEY`` is not set: no word of it is a key
    (hidden, "Bearer" would be replaced in every log line and results text)."""
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    from lm_eval_stereo.core.served_credentials import request_secrets

    def backend() -> LocalCompletionsAPI:
        made = object.__new__(LocalCompletionsAPI)  # its headers only (lm_eval reads them once per backend)
        made._header = None
        return made

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    without = backend()
    assert without.header == {"Authorization": "Bearer "} and request_secrets(without) == frozenset()
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    assert request_secrets(backend()) == {f"Bearer {ENV_KEY}", ENV_KEY}
    assert request_secrets(object()) == frozenset()
