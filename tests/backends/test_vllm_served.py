"""vLLM served, for real: two ``vllm serve`` replicas of SmolLM2-135M-Instruct (float32, vLLM's CPU build) behind
HAProxy (:mod:`vllm_replicas`), the session's one pair (:mod:`vllm_tier`), every replica loading the plugin's vLLM
plugin (inert until a request opts in):

- ``local-completions`` through the balancer on the log-likelihood families (:data:`~vllm_tier.LL_DOCS`) equals
  ``hf`` within :data:`~vllm_tier.TOLERANCE`, and on :data:`FAULT_DOCS` one replica asked directly within
  :data:`~vllm_tier.RESUME_TOLERANCE`; both replicas answered (their ``/metrics``), every request once.
  ``local-chat-completions`` on the generative protocols equals the in-process run (GerBBQ+'s German prefill
  continued: ``continue_final_message``), both replicas answering.
- ``local-completions-prefix`` (one replica asked directly: through the balancer the plugin's two probes would reach
  different replicas) equals ``hf`` within the tier's tolerance, the replica's ``/metrics`` count prefix-cache hits;
  ``--use_cache`` answers a repeated run without a log-likelihood request. Faults a plugin server does not show are
  put in by a forwarding proxy (:class:`FaultProxy`, a stand-in between the client and the real server): a server
  that drops the opt-in (as one without the plugin ignores it) and one without prompt-token details are each named
  in one warning and scored uncached; answers without usage are re-sent, counted, never scored.
- faults at scale, last in this file since they change the pair (:meth:`vllm_replicas.Replicas.ready` puts back
  what a later test needs): the prefix replica killed mid-run and the run resumed with ``--use_cache`` sends only
  what was not stored and ends equal to the uninterrupted run; a replica killed mid-run (checked to be before the
  last request: the other answered after it): the run completes through the other, every request answered once, the
  one server's numbers; the balancer killed mid-run: the run ends in one line naming the endpoint and keeps what was
  answered in ``--use_cache``, and the resumed run sends only the missing requests and ends with the one server's
  numbers; a replica answering as another model stops the run naming both.
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
from lm_eval_runner import LmEvalRun, lm_eval_command, read_outputs, run_lm_eval, start_lm_eval
from vllm_replicas import ENV, VllmServer
from vllm_tier import (
    GEN_ARGS,
    GEN_DOCS,
    LL_DOCS,
    MARKS,
    RESUME_TOLERANCE,
    TOLERANCE,
    assert_close_metrics,
    assert_log_likelihoods_equal,
    by_document,
    completions_args,
    per_request,
    requests_of,
    samples_arg,
    texts,
)

from lm_eval_stereo.core.answer_record import ANSWERS_TABLE
from lm_eval_stereo.core.prefix_cache import RESENT

pytestmark = MARKS
#: the documents of the fault tests (and of the one-server run they are compared with): 14 requests, those of LL_DOCS
FAULT_DOCS = {task: LL_DOCS[task] for task in ("gest_en", "mbbq_en")}
#: a few documents for the prefix runs that test one behaviour each
FEW_DOCS = {"gest_en": [0, 1], "mbbq_en": [0]}
#: the probe for prompt log-probabilities that each local-completions run sends first
PROBE = 1


def counts_aside(metrics: dict) -> dict:
    """A task's metrics without the re-sent count (``hf`` has none)."""
    return {key: value for key, value in metrics.items() if not key.startswith(f"{RESENT},")}


def resent(run: LmEvalRun) -> dict[str, int]:
    return {task: metrics[f"{RESENT},none"] for task, metrics in run.results["results"].items() if task in LL_DOCS}


# --- local-completions-prefix, one replica asked directly -------------------------------------------------------------


def prefix_args(smollm2: Path, server: VllmServer | FaultProxy, num_concurrent: int) -> list[str]:
    """``--model local-completions-prefix`` of ``server`` (anything with a ``base`` URL)."""
    return completions_args(smollm2, server.base, num_concurrent, model="local-completions-prefix")


@pytest.fixture(scope="module")
def server(vllm_replicas) -> VllmServer:
    """Replica 0 of the session's pair, asked directly (its prefix cache still cold: this section comes first)."""
    return vllm_replicas.ready().servers[0]


@pytest.fixture(scope="module")
def served_prefix(smollm2, server, offline_tasks, tmp_path_factory) -> tuple[LmEvalRun, float]:
    """``local-completions-prefix`` on LL_DOCS, and the prefix-cache hits the server counted meanwhile."""
    before = server.hits()
    args = [*prefix_args(smollm2, server, 4), *offline_tasks, *samples_arg(LL_DOCS)]
    run = run_lm_eval(args, tmp_path_factory.mktemp("served_prefix"), env=ENV)
    return run, server.hits() - before


@pytest.mark.parametrize("task", sorted(LL_DOCS))
def test_served_prefix_equals_hf(served_prefix, hf_ll, task):
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


# --- through the balancer -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served_ll(smollm2, vllm_replicas, offline_tasks, tmp_path_factory) -> tuple[LmEvalRun, list[int]]:
    """Every log-likelihood family through the balancer (``num_concurrent=4``), and how many completions requests
    each replica's ``/metrics`` counted meanwhile."""
    pair = vllm_replicas.ready()
    before = pair.answered()
    args = [*completions_args(smollm2, pair.base, 4), *offline_tasks, *samples_arg(LL_DOCS)]
    run = run_lm_eval(args, tmp_path_factory.mktemp("served_ll"), env=ENV)
    return run, [after - was for after, was in zip(pair.answered(), before)]


@pytest.mark.parametrize("task", sorted(LL_DOCS))
def test_served_log_likelihoods_equal_hf(served_ll, hf_ll, task):
    run, _ = served_ll
    assert_log_likelihoods_equal(run, hf_ll, task)
    assert_close_metrics(run.results["results"][task], hf_ll.results["results"][task])


def test_both_replicas_answered_and_every_request_once(served_ll):
    run, answered = served_ll
    total = requests_of(run, LL_DOCS)
    assert sum(answered) == total + PROBE and min(answered) >= total // 4, answered  # round robin: about half each


@pytest.fixture(scope="module")
def one_server(smollm2, vllm_replicas, tmp_path_factory) -> LmEvalRun:
    """:data:`FAULT_DOCS` from one replica directly, not through the balancer: the numbers the faults must keep."""
    replica = vllm_replicas.ready().servers[0]
    args = [*completions_args(smollm2, replica.base, 1), *samples_arg(FAULT_DOCS)]
    return run_lm_eval(args, tmp_path_factory.mktemp("one_server"), env=ENV)


def assert_same_as_one_server(run: LmEvalRun, one_server: LmEvalRun) -> None:
    """Every request of :data:`FAULT_DOCS` answered once, within :data:`RESUME_TOLERANCE` of the one server's (vLLM's
    numbers depend on the batch a request shares), and the same metrics."""
    for task in FAULT_DOCS:
        expected, actual = per_request(one_server, task), per_request(run, task)
        assert actual.keys() == expected.keys()
        assert all(abs(actual[key][0] - ll) <= RESUME_TOLERANCE for key, (ll, _) in expected.items()), task
        assert_close_metrics(run.results["results"][task], one_server.results["results"][task])


def test_the_balancer_gives_one_servers_numbers(served_ll, one_server):
    run, _ = served_ll
    assert_same_as_one_server(run, one_server)


@pytest.fixture(scope="module")
def served_chat(smollm2, vllm_replicas, tmp_path_factory) -> tuple[LmEvalRun, list[int]]:
    pair = vllm_replicas.ready()
    before = pair.answered("/v1/chat/completions")
    model_args = f"model={smollm2},base_url={pair.base}/v1/chat/completions,tokenizer_backend=none,num_concurrent=2"
    args = ["--model", "local-chat-completions", "--model_args", model_args, *GEN_ARGS, *samples_arg(GEN_DOCS)]
    run = run_lm_eval(args, tmp_path_factory.mktemp("served_chat"), env=ENV)
    return run, [after - was for after, was in zip(pair.answered("/v1/chat/completions"), before)]


@pytest.mark.parametrize("task", sorted(GEN_DOCS))
def test_served_chat_texts_equal_the_in_process_run(served_chat, vllm_gen, task):
    """Greedy and sampled alike, whichever replica answered: the same prompts (GerBBQ+'s prefilled assistant turn
    continued, not followed by a new one), the same seed per repeat, the same texts."""
    run, _ = served_chat
    ours, theirs = by_document(run, task), by_document(vllm_gen, task)
    assert sorted(ours) == sorted(theirs) == GEN_DOCS[task]
    # a prompt's repeats as a multiset: each carries its own seed, in whatever order the backend sent them
    assert {doc: sorted(texts(s)) for doc, s in ours.items()} == {doc: sorted(texts(s)) for doc, s in theirs.items()}
    assert run.metric(task, "unanswered") == 0


def test_both_replicas_answered_the_chat_requests(served_chat):
    run, answered = served_chat
    prompts = sum(len(texts(sample)) for samples in run.samples.values() for sample in samples)
    assert sum(answered) == prompts and min(answered) > 0, answered


# --- faults at scale: they change the pair, so they come last -------------------------------------------------------


def start_run(args: list[str], folder: Path):
    command, env = lm_eval_command(args, folder, env=ENV)
    return start_lm_eval(command, env, folder, folder.with_suffix(".log"))


def wait_for(condition, process, log: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    assert condition(), f"the run ended before the fault could be injected:\n{log.read_text()[-3000:]}"


def test_server_killed_mid_run_then_resumed_sends_only_what_was_not_stored(smollm2, server, served_prefix, tmp_path):
    tasks = FAULT_DOCS  # documents of the uninterrupted run's (LL_DOCS)
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


def test_a_replica_killed_mid_run_the_run_completes_through_the_other(smollm2, vllm_replicas, one_server, tmp_path):
    pair = vllm_replicas.ready()
    survivor, victim = pair.servers
    before = [server.posts() for server in pair.servers]
    concurrent = 2
    process = start_run(
        [*completions_args(smollm2, pair.base, concurrent), *samples_arg(FAULT_DOCS)], tmp_path / "killed"
    )
    wait_for(lambda: victim.posts() - before[1] >= 3, process, tmp_path / "killed.log")
    # read as the victim is killed, not once it is reaped: a run of cached prompts may finish meanwhile
    survivor_at_kill = survivor.posts()
    victim.kill()
    status = process.wait(600)
    log = (tmp_path / "killed.log").read_text()
    assert status == 0, log[-4000:]
    assert survivor.posts() > survivor_at_kill, "the replica was killed after the last request"
    answered = [server.posts() - was for server, was in zip(pair.servers, before)]
    run = LmEvalRun(status, "", log, *read_outputs(tmp_path / "killed"), tmp_path / "killed")
    # None lost: every request was answered by one replica or the other. The victim's access log may also hold an
    # answer that the kill cut on its way to HAProxy (uvicorn logs a response as it starts sending it); HAProxy sends
    # that request again (retry-on empty-response), so at most the requests in flight at the kill are counted twice.
    # lm_eval itself saw one answer per request: the scores equal one server's, below.
    expected = requests_of(one_server, FAULT_DOCS) + PROBE
    assert expected <= sum(answered) <= expected + concurrent, answered
    assert_same_as_one_server(run, one_server)


def test_the_balancer_gone_mid_run_ends_in_one_line_and_use_cache_finishes_the_run(
    smollm2, vllm_replicas, one_server, tmp_path
):
    """HAProxy killed: lm_eval's retries meet a closed port, the run ends in one line naming the endpoint, no results;
    with the balancer back the same command sends only the requests not yet answered."""
    pair = vllm_replicas
    pair.ready(both=False)  # one replica is enough: the fault is the balancer's
    cache = tmp_path / "cache" / "requests"
    args = [*completions_args(smollm2, pair.base, 1), *samples_arg(FAULT_DOCS), "--use_cache", str(cache)]
    total = requests_of(one_server, FAULT_DOCS)

    def posts() -> int:
        return sum(server.posts() for server in pair.servers)

    before = posts()
    process = start_run(args, tmp_path / "gone")
    wait_for(lambda: posts() - before >= 6, process, tmp_path / "gone.log")
    pair.balancer.kill()
    status = process.wait(600)
    logged = posts() - before - PROBE
    log = (tmp_path / "gone.log").read_text()
    assert status == 2, log[-4000:]
    last = log.strip().splitlines()[-1]
    assert last.startswith(
        f"lm-eval-stereo: log-likelihood requests to {pair.base}/v1/completions failed after 3 tries"
    )
    assert "--use_cache" in last and "Traceback" not in log
    assert read_outputs(tmp_path / "gone")[0] == {}  # nothing counted as a score

    pair.ready(both=False)
    before = posts()
    resumed = run_lm_eval(args, tmp_path / "resumed", env=ENV)
    kept = total - (posts() - before - PROBE)
    # every answer that reached lm_eval kept; at most the one the balancer carried as it died is asked again
    assert 0 < kept < total and kept in (logged, logged - 1), (kept, logged)
    assert_same_as_one_server(resumed, one_server)


def test_a_replica_answering_as_another_model_stops_the_run_naming_both(smollm2, vllm_replicas, tmp_path):
    """One replica restarted with ``--served-model-name smollm2-other MODEL``: it accepts the requests for MODEL and
    answers as ``smollm2-other`` (vLLM names its first served name in every answer), as a replica of another model
    behind the same endpoint would. The run stops at the first answer of the other replica, naming both models: as a
    second model where the first answer came from the real one, as not the model asked for where it came from the
    other one (the replica HAProxy sends the first request to decides which)."""
    pair = vllm_replicas.ready(both=False)  # replica 1, killed by a test before, is started as the other model
    pair.restart(pair.servers[1], served_names=("smollm2-other", str(smollm2)))
    run = run_lm_eval([*completions_args(smollm2, pair.base, 2), *samples_arg(FAULT_DOCS)], tmp_path, check=False)
    assert run.returncode == 2, run.stderr[-3000:]
    last = run.stderr.strip().splitlines()[-1]
    answered = f"lm-eval-stereo: {pair.base}/v1/completions answered as "
    assert last.startswith((f"{answered}two models, ", f"{answered}the model 'smollm2-other', not the ")), last
    assert "'smollm2-other'" in last and repr(str(smollm2)) in last and last.endswith("no results written")
    assert "Traceback" not in run.stderr and run.results == {}
