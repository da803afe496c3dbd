"""vLLM's prefix cache for log-likelihood requests, for real on vLLM's CPU build (``make vllm-venv``), SmolLM2-135M-
Instruct in float32, on the log-likelihood families of :mod:`test_vllm` (its :data:`~test_vllm.LL_DOCS`):

- in process: one ``--model vllm-prefix`` engine (:mod:`vllm_prefix_runs`) scores the documents three times: reading a
  cache emptied first, reading the cache that run left (most prompts then cached but for their last token), and
  through lm_eval's own ``vllm`` scoring (``VLLM._loglikelihood_tokens``, the cache skipped) on the same engine. The
  two cached runs equal the ``vllm`` run request by request within :data:`SAME_ENGINE_TOLERANCE` (0.0 was measured:
  the cache holds the very numbers the request would compute), with the same greedy flags, item scores, metrics and
  token-boundary flags, and ``hf``'s within :data:`~test_vllm.TOLERANCE` (the vLLM tier's); prompt tokens were read
  from the cache, and the requests whose cache reached their continuation were re-sent and counted
  (``requests_resent``). A ``block_size`` the CPU refuses ends the run in one line before any engine starts.
- served: one ``vllm serve`` (:data:`SERVER_FLAGS`) that loads the plugin's vLLM plugin (:func:`plugin_path`: the
  entry point of this tree where the vLLM venv's installed one is missing); ``--model local-completions-prefix``
  equals ``hf`` within the tier's tolerance, its ``/metrics`` count prefix-cache hits; ``--use_cache`` answers a
  repeated run without a log-likelihood request; the server killed mid-run and the run resumed with ``--use_cache``
  sends only what was not stored and ends equal to the uninterrupted run. Faults a plugin server does not show are
  put in by a forwarding proxy (:class:`FaultProxy`, a stand-in between the client and the real server): a server that
  drops the opt-in (as one without the plugin ignores it) and one without prompt-token details are each named in one
  warning and scored uncached; answers without usage are re-sent, counted, never scored.

Cost: one engine, one server; measured once, the whole file: 290 CPU-seconds of the processes it waited for (user +
system; a killed server's orphans not counted), 18.5 minutes of wall time on the shared 2-core machine (load 3 to 13).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from lm_eval_runner import REPO, LmEvalRun, lm_eval_command, read_outputs, run_lm_eval, start_lm_eval
from suite_tools import skip_reason
from test_vllm import (
    ENV,
    LL_DOCS,
    MAX_MODEL_LEN,
    RESUME_TOLERANCE,
    TOLERANCE,
    VLLM_BIN,
    assert_close_metrics,
    boundary_flags,
    by_document,
    close,
    completions_args,
    hf_ll,  # noqa: F401 - the fixture: hf on LL_DOCS
    offline_tasks,  # noqa: F401 - the fixture: lm_eval's own bias tasks from the offline mirror
    per_request,
    samples_arg,
    vllm_lm_eval,
)
from vllm_replicas import VllmServer

from lm_eval_stereo.core.answer_record import ANSWERS_TABLE
from lm_eval_stereo.core.prefix_cache import RESENT

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not (VLLM_BIN / "vllm").exists(), reason=skip_reason("the vLLM venv")),
]
#: per-request difference allowed between vllm-prefix and lm_eval's vllm scoring on the same engine (0.0 measured)
SAME_ENGINE_TOLERANCE = 1e-5
#: the served replica's flags: the CPU's smallest block size, the cached-token counts in every answer's usage
SERVER_FLAGS = ["--dtype", "float32", "--enforce-eager", "--max-model-len", str(MAX_MODEL_LEN), "--block-size", "32",
                "--enable-prompt-tokens-details"]  # fmt: skip
#: a few documents for the runs that test one behaviour each
FEW_DOCS = {"gest_en": [0, 1], "mbbq_en": [0]}
#: the plugin's entry point, as ``pip install`` writes it into a distribution's metadata
ENTRY_POINT = "[vllm.general_plugins]\nlm_eval_stereo = lm_eval_stereo.vllm_plugin:register\n"


def counts_aside(metrics: dict) -> dict:
    """A task's metrics without the re-sent count (``hf`` has none)."""
    return {key: value for key, value in metrics.items() if not key.startswith(f"{RESENT},")}


def resent(run: LmEvalRun) -> dict[str, int]:
    return {task: metrics[f"{RESENT},none"] for task, metrics in run.results["results"].items() if task in LL_DOCS}


# --- in process ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def engine_runs(smollm2, offline_tasks, tmp_path_factory) -> dict[str, LmEvalRun]:  # noqa: F811
    """The three runs of :mod:`vllm_prefix_runs` on one engine, each with its ``prompt_tokens``."""
    out = tmp_path_factory.mktemp("vllm_prefix")
    model_args = f"pretrained={smollm2},dtype=float32,max_model_len={MAX_MODEL_LEN},enforce_eager=True"
    script = str(Path(__file__).with_name("vllm_prefix_runs.py"))
    command = [str(VLLM_BIN / "python"), script, str(out), model_args, json.dumps(LL_DOCS), offline_tasks[1]]
    run_lm_eval([], out / "log", launcher=command, env=ENV)
    runs = {}
    for name in ("prefix", "warm", "vllm"):
        results, samples = read_outputs(out / name)
        run = LmEvalRun(0, "", "", results, samples, out / name)
        run.prompt_tokens = json.loads((out / name / "prompt_tokens.json").read_text())
        runs[name] = run
    return runs


@pytest.mark.parametrize("run", ["prefix", "warm"])
@pytest.mark.parametrize("task", sorted(LL_DOCS))
def test_cached_runs_equal_vllm_per_request_and_hf_item_by_item(engine_runs, hf_ll, run, task):  # noqa: F811
    ours, vllm = engine_runs[run], engine_runs["vllm"]
    expected, actual = per_request(vllm, task), per_request(ours, task)
    assert expected and actual.keys() == expected.keys()
    assert max(abs(actual[key][0] - value[0]) for key, value in expected.items()) <= SAME_ENGINE_TOLERANCE, task
    assert {key: value[1] for key, value in actual.items()} == {key: value[1] for key, value in expected.items()}
    from_hf = per_request(hf_ll, task)
    assert max(abs(actual[key][0] - ll) for key, (ll, _) in from_hf.items()) <= TOLERANCE, task
    assert {key: value[1] for key, value in actual.items()} == {key: g for key, (_, g) in from_hf.items()}
    for reference, tolerance in ((vllm, SAME_ENGINE_TOLERANCE), (hf_ll, TOLERANCE)):
        docs, mine = by_document(reference, task), by_document(ours, task)
        for doc, sample in docs.items():
            assert all(close(mine[doc][name], sample[name], tolerance) for name in sample["metrics"]), (task, doc)
            assert boundary_flags(mine[doc]) == boundary_flags(sample), (task, doc)
    assert_close_metrics(counts_aside(ours.results["results"][task]), counts_aside(hf_ll.results["results"][task]))


def test_the_cache_was_read_and_the_requests_it_reached_re_sent_and_counted(engine_runs):
    prefix, warm, vllm = engine_runs["prefix"], engine_runs["warm"], engine_runs["vllm"]
    assert prefix.prompt_tokens["cached"] > 0.3 * prefix.prompt_tokens["sent"], prefix.prompt_tokens
    assert vllm.prompt_tokens.get("cached", 0) == 0  # lm_eval's vllm scoring: nothing through the prefix path
    assert set(resent(prefix)) == set(resent(warm)) == set(LL_DOCS)  # every log-likelihood task has its count
    assert sum(resent(vllm).values()) == 0
    assert 0 < sum(resent(prefix).values()) <= sum(resent(warm).values())


def test_a_block_size_the_cpu_refuses_ends_in_one_line(smollm2, tmp_path):
    model_args = f"pretrained={smollm2},dtype=float32,block_size=16"
    run = vllm_lm_eval(["--model", "vllm-prefix", "--model_args", model_args, "--tasks", "gest_en", "--limit", "1"],
                       tmp_path, check=False)  # fmt: skip
    assert run.returncode == 2, run.stderr[-3000:]
    assert run.stderr.strip().splitlines()[-1] == (
        "lm-eval-stereo: --model vllm-prefix: block_size=16 is refused by vLLM's CPU attention (CPU_ATTN), which "
        "takes multiples of 32; the smallest, 32, shares the most"
    )
    assert "Traceback" not in run.stderr and "EngineCore" not in run.stderr  # refused before any engine started


# --- served -------------------------------------------------------------------------------------------------------


def installed_entry_point() -> bool:
    """Whether the vLLM venv's installed lm-eval-stereo declares the plugin (a venv installed from a tree with it)."""
    found = VLLM_BIN.parent.glob("lib/python3*/site-packages/lm_eval_stereo-*.dist-info/entry_points.txt")
    return any("vllm.general_plugins" in path.read_text() for path in found)


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> str:
    """The server's ``PYTHONPATH``: this tree first, and, where the vLLM venv was installed from a tree without the
    plugin's entry point, a distribution's metadata that declares it (vLLM finds plugins by entry point only)."""
    folder = tmp_path_factory.mktemp("vllm_plugin")
    if not installed_entry_point():
        metadata = folder / "lm_eval_stereo_vllm_plugin-0.dist-info"
        metadata.mkdir()
        (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: lm-eval-stereo-vllm-plugin\nVersion: 0\n")
        (metadata / "entry_points.txt").write_text(ENTRY_POINT)
    return f"{folder}:{REPO}"


class PrefixServer(VllmServer):
    """``vllm serve`` with :data:`SERVER_FLAGS` and the plugin on its path; :meth:`hits` reads its ``/metrics``."""

    name = "vllm serve (prefix cache)"

    def __init__(self, model: Path, log: Path, python_path: str) -> None:
        super().__init__(model, log)
        self.env = {**ENV, "PYTHONPATH": python_path}

    def command(self) -> list[str]:
        return [str(VLLM_BIN / "vllm"), "serve", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
                *SERVER_FLAGS]  # fmt: skip

    def hits(self) -> float:
        with urllib.request.urlopen(f"{self.base}/metrics", timeout=30) as response:
            lines = response.read().decode().splitlines()
        return sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("vllm:prefix_cache_hits_total"))


@pytest.fixture(scope="module")
def server(smollm2, plugin_path, tmp_path_factory):
    served = PrefixServer(smollm2, tmp_path_factory.mktemp("vllm_serve_prefix") / "server.log", plugin_path)
    served.start()
    yield served
    served.stop()


def prefix_args(smollm2: Path, server: PrefixServer | FaultProxy, num_concurrent: int) -> list[str]:
    """:mod:`test_vllm`'s ``local-completions`` arguments for ``server`` (anything with a ``base`` URL), with
    ``--model local-completions-prefix``."""
    _, _, *rest = completions_args(smollm2, server.base, num_concurrent)
    return ["--model", "local-completions-prefix", *rest]


@pytest.fixture(scope="module")
def served_prefix(smollm2, server, offline_tasks, tmp_path_factory) -> tuple[LmEvalRun, float]:  # noqa: F811
    """``local-completions-prefix`` on LL_DOCS, and the prefix-cache hits the server counted meanwhile."""
    before = server.hits()
    args = [*prefix_args(smollm2, server, 4), *offline_tasks, *samples_arg(LL_DOCS)]
    run = run_lm_eval(args, tmp_path_factory.mktemp("served_prefix"), env=ENV)
    return run, server.hits() - before


@pytest.mark.parametrize("task", sorted(LL_DOCS))
def test_served_prefix_equals_hf(served_prefix, hf_ll, task):  # noqa: F811
    run, _ = served_prefix
    expected, actual = per_request(hf_ll, task), per_request(run, task)
    assert expected and actual.keys() == expected.keys()
    assert max(abs(actual[key][0] - ll) for key, (ll, _) in expected.items()) <= TOLERANCE, task
    assert {key: g for key, (_, g) in actual.items()} == {key: g for key, (_, g) in expected.items()}
    assert_close_metrics(counts_aside(run.results["results"][task]), counts_aside(hf_ll.results["results"][task]))


def test_the_server_read_its_prefix_cache_and_the_run_counts_what_it_re_sent(served_prefix):
    run, hits = served_prefix
    requests = sum(len(per_request(run, task)) for task in LL_DOCS)
    assert hits > 10 * requests, (hits, requests)  # whole blocks of 32 tokens, most requests sharing a context
    assert set(resent(run)) == set(LL_DOCS)
    assert "scored uncached" not in run.stderr


def test_use_cache_answers_a_repeated_run_without_a_log_likelihood_request(smollm2, server, tmp_path):
    cache = tmp_path / "cache" / "requests"
    args = [*prefix_args(smollm2, server, 1), *samples_arg(FEW_DOCS), "--use_cache", str(cache)]
    first = run_lm_eval(args, tmp_path / "first", env=ENV)
    before = server.posts()
    again = run_lm_eval(args, tmp_path / "again", env=ENV)
    assert server.posts() - before == 1  # the probe for prompt log-probabilities, nothing else
    for task in FEW_DOCS:
        assert per_request(again, task) == per_request(first, task)


def stored_answers(cache: Path) -> int:
    """The answers in ``--use_cache``'s database (one file per rank); the plugin's record of whose they are is a table
    of its own."""
    total = 0
    for path in cache.parent.glob(f"{cache.name}*.db"):
        with sqlite3.connect(path) as db:
            total += db.execute(f"SELECT COUNT(*) FROM {ANSWERS_TABLE}").fetchone()[0]
    return total


def test_server_killed_mid_run_then_resumed_sends_only_what_was_not_stored(smollm2, server, served_prefix, tmp_path):
    tasks = {"gest_en": [0, 1, 2], "mbbq_en": [0, 1]}
    uninterrupted, _ = served_prefix
    total = sum(len(per_request(uninterrupted, task)) for task in tasks)
    cache = tmp_path / "cache" / "requests"
    args = [*prefix_args(smollm2, server, 1), *samples_arg(tasks), "--use_cache", str(cache)]
    before = server.posts()
    command, env = lm_eval_command(args, tmp_path / "killed", env=ENV)
    process = start_lm_eval(command, env, tmp_path / "killed", tmp_path / "killed.log")
    try:
        deadline = time.monotonic() + 300
        while server.posts() - before < 8 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        server.kill()
        status = process.wait(600)
    finally:
        server.kill()
        server.start()
    log = (tmp_path / "killed.log").read_text()
    assert status == 2, log[-4000:]
    assert "failed after 3 tries" in log.strip().splitlines()[-1] and "Traceback" not in log
    stored = stored_answers(cache)
    assert 0 < stored < total

    before = server.posts()
    resumed = run_lm_eval(args, tmp_path / "resumed", env=ENV)
    probes = 3  # prompt log-probabilities once, the prefix cache twice
    assert server.posts() - before - probes - sum(resent(resumed).values()) == total - stored
    for task in tasks:
        expected, actual = per_request(uninterrupted, task), per_request(resumed, task)
        assert actual.keys() == expected.keys()
        assert all(abs(actual[key][0] - ll) <= RESUME_TOLERANCE for key, (ll, _) in expected.items()), task


# --- faults a plugin server does not show: a forwarding proxy in front of the real one ------------------------------


class FaultProxy:
    """A loopback HTTP proxy to ``upstream`` that changes what passes: ``drop_opt_in`` removes the request's
    ``vllm_xargs`` (a server without the plugin ignores them alike), ``no_details`` the answers'
    ``usage.prompt_tokens_details`` (a server started without ``--enable-prompt-tokens-details``), ``no_usage`` the
    usage of every answer after the first three (the probes: a replica or proxy that drops it mid-run)."""

    def __init__(self, upstream: str, fault: str) -> None:
        self.upstream, self.fault, self.answered = upstream, fault, 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
                """Quiet."""

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.relay(None)

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if proxy.fault == "drop_opt_in":
                    body.pop("vllm_xargs", None)
                self.relay(json.dumps(body).encode())

            def relay(self, data: bytes | None) -> None:
                request = urllib.request.Request(proxy.upstream + self.path, data=data, method=self.command,
                                                 headers={"Content-Type": "application/json"})  # fmt: skip
                with urllib.request.urlopen(request, timeout=300) as response:
                    content = response.read()
                if self.path.endswith("/completions"):
                    content = proxy.changed(json.loads(content))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def changed(self, answer: dict) -> bytes:
        self.answered += 1
        usage = answer.get("usage") or {}
        if self.fault == "no_details":
            usage.pop("prompt_tokens_details", None)
        if self.fault == "no_usage" and self.answered > 3:
            answer.pop("usage", None)
        return json.dumps(answer).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("drop_opt_in", "it read nothing from its prefix cache for a request that opted in"),
        (
            "no_details",
            "its answers carry no usage.prompt_tokens_details (start it with --enable-prompt-tokens-details)",
        ),
        ("no_usage", None),
    ],
)
def test_a_server_that_cannot_show_what_it_read_is_scored_uncached(
    smollm2, server, served_prefix, fault, said, tmp_path
):
    proxy = FaultProxy(server.base, fault)
    try:
        run = run_lm_eval([*prefix_args(smollm2, proxy, 1), *samples_arg(FEW_DOCS)], tmp_path, env=ENV)
    finally:
        proxy.close()
    uninterrupted, _ = served_prefix
    warnings = [line for line in run.stderr.splitlines() if "--model local-completions-prefix:" in line]
    if said:
        assert len(warnings) == 1 and said in warnings[0] and "scored uncached" in warnings[0], warnings
        assert sum(resent(run).values()) == 0
    else:  # every answer without usage: re-sent with the cache skipped, counted
        assert warnings == []
        assert resent(run) == {task: len(per_request(run, task)) for task in FEW_DOCS}
    for task in FEW_DOCS:
        expected, actual = per_request(uninterrupted, task), per_request(run, task)
        assert all(abs(actual[key][0] - expected[key][0]) <= RESUME_TOLERANCE for key in actual), task
