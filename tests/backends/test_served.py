"""Served models, for real: the plugin's generative protocols through lm_eval's ``local-chat-completions`` against
``transformers serve`` (a real OpenAI-compatible server) serving SmolLM2-135M-Instruct from its wheel on a free
loopback port, started once for this file (one file: one xdist worker) and stopped at its end.

- One served run of every generative protocol on its first documents (:data:`DOCUMENTS`): GEST-MT, KoBBQ and MBBQ
  generation (greedy), GerBBQ+, SexistStatements, the personas and generative leakage (sampled), with
  ``--gen_kwargs max_gen_toks=8`` (:data:`MAX_GEN_TOKS`: a served SmolLM2 generation costs seconds per token on two
  loaded cores) and an API key in ``OPENAI_API_KEY``. One in-process ``hf --apply_chat_template`` run of the greedy
  tasks on the same documents with the same override. Greedy: every document's text, item scores and metrics equal
  the in-process run's (no difference allowed: none was found, the stop string the server leaves in the text is cut
  as in-process ``hf`` cuts it). Sampled: every request answered, and the repeats of one prompt are different
  samples (each repeat carries its own seed).
- The report and the Every Eval Ever export read the served run like any other and name the model by its ``model=``;
  the run carries credentials of every kind (``OPENAI_API_KEY``, ``user:KEY@`` and ``?api-key=`` in ``base_url``,
  ``api_key=``, ``auth_token=``): none is in any file it, the report or the export writes (its ``--use_cache`` file
  among them), nor on any console. Every answer is cut at ``max_gen_toks``: counted per task as ``cut_answers``.
- Faults: no server at ``base_url`` (one line naming the URL, exit 2, no lm_eval run); lm_eval's API packages missing
  (one line naming ``pip install "lm-eval-stereo[api]"``); the server killed mid-run (the run ends, the requests it
  lost counted as ``unanswered`` in the results and the report), restarted, and the run resumed with
  ``--use_cache``: only the lost requests are sent and the results equal the uninterrupted run's; log-likelihood
  tasks through the chat endpoint and through ``/v1/completions``, which returns no prompt log-probabilities, stop
  before any request with one line naming the endpoint.
- Served answers checked before they are scores, against a fault-injecting stand-in (tests/openai_stand_in.py) for
  the answers no real server gives (the section at the end of this file).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, assert_same_metrics, free_port, lm_eval_command, read_outputs, start_lm_eval
from lm_eval_runner import run_lm_eval as run_lm_eval_with
from model_server import ModelServer

from lm_eval_stereo.cli import main

#: an API key only this file knows: it must reach the server's requests and no file
API_KEY = "sk-served-tier-0f3c9d1e7b"
#: the credentials the served run carries in its model arguments, as proxies and Azure-style endpoints take them: the
#: user info of ``base_url``, a key in its query, ``api_key=`` (lm_eval's API models take it into ``**kwargs``) and
#: ``auth_token=``; none may reach a file or the console
URL_KEY, QUERY_KEY, ARG_KEY, AUTH_TOKEN = "sk-url-7d1e0c", "sk-query-5b8a2f", "sk-arg-93c4e6", "tok-auth-a61f07"
SECRETS = (API_KEY, URL_KEY, QUERY_KEY, ARG_KEY, AUTH_TOKEN)
#: one thread per process: the server and lm_eval share two cores (fewer CPU-seconds than threads spinning on them)
ENV = {"OPENAI_API_KEY": API_KEY, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
       "OMP_NUM_THREADS": "1"}  # fmt: skip
MAX_GEN_TOKS = 8
GREEDY = {"gest_mt_cs": 2, "kobbq_gen": 1, "mbbq_gen_en": 1}
SAMPLED = {"gerbbq_amb": 1, "sexist_statements_de_once": 1, "stereo_persona_de_once": 1, "stereotype_leakage_gen_en": 1}
DOCUMENTS = GREEDY | SAMPLED
#: the leakage protocol's samples per prompt (its YAML's ``repeats``)
LEAKAGE_REPEATS = 10
HEALTH_TIMEOUT = 240
CHAT_POST = '"POST /v1/chat/completions HTTP/1.1" 200'


def run_lm_eval(args: list[str], out: Path, **kwargs) -> LmEvalRun:
    return run_lm_eval_with(args, out, env=ENV, **kwargs)


def samples_arg(documents: dict[str, int]) -> list[str]:
    return ["--samples", json.dumps({task: list(range(n)) for task, n in documents.items()})]


class Server(ModelServer):
    """``transformers serve`` of one model folder; :meth:`posts` counts the chat requests it answered."""

    name = "transformers serve"

    def __init__(self, model: Path, log: Path) -> None:
        super().__init__(model, log, env=ENV, marker=CHAT_POST, health_timeout=HEALTH_TIMEOUT)

    def command(self) -> list[str]:
        command = [str(Path(sys.executable).parent / "transformers"), "serve", "--host", "127.0.0.1"]
        return [*command, "--port", str(self.port), "--device", "cpu", "--dtype", "float32", str(self.model)]


def sampling_folder(model: Path, folder: Path) -> Path:
    """``model``'s files linked into ``folder``, its ``generation_config.json`` with ``do_sample: true``:
    ``transformers serve`` samples a request with a temperature above 0 only where the model's generation config
    says so (SmolLM2's does not: every request would be decoded greedily); a temperature of 0 stays greedy."""
    folder.mkdir(parents=True)
    for path in model.iterdir():
        if path.name != "generation_config.json":
            (folder / path.name).symlink_to(path.resolve())
    config = json.loads((model / "generation_config.json").read_text())
    (folder / "generation_config.json").write_text(json.dumps({**config, "do_sample": True}))
    return folder


@pytest.fixture(scope="module")
def served_model(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sampling_folder(smollm2, tmp_path_factory.mktemp("served_model") / smollm2.name)


@pytest.fixture(scope="module")
def server(served_model: Path, tmp_path_factory: pytest.TempPathFactory):
    served = Server(served_model, tmp_path_factory.mktemp("served") / "server.log")
    served.start()
    yield served
    served.stop()


def chat_args(smollm2: Path, server: Server, tasks: dict[str, int], credentials: bool = False) -> list[str]:
    """The arguments of a served chat run of ``tasks``; ``credentials``: with every kind of credential
    (:data:`SECRETS`) in its model arguments."""
    base_url = f"{server.base}/v1/chat/completions"
    more = ""
    if credentials:
        base_url = (
            f"http://user:{URL_KEY}@{server.base.removeprefix('http://')}/v1/chat/completions?api-key={QUERY_KEY}"
        )
        more = f",api_key={ARG_KEY},auth_token={AUTH_TOKEN}"
    args = ["--model", "local-chat-completions", "--model_args"]
    args += [f"model={smollm2},base_url={base_url},tokenizer_backend=none{more}"]
    args += ["--apply_chat_template", "--tasks", ",".join(tasks), *samples_arg(tasks)]
    return [*args, "--gen_kwargs", f"max_gen_toks={MAX_GEN_TOKS}", "--log_samples"]


@pytest.fixture(scope="module")
def served_run(served_model: Path, server: Server, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    """The served run of every generative protocol, with every kind of credential in its model arguments and its
    answers kept in a ``--use_cache`` file inside its output folder."""
    out = tmp_path_factory.mktemp("served_run")
    args = [*chat_args(served_model, server, DOCUMENTS, credentials=True), "--use_cache", str(out / "cache")]
    return run_lm_eval(args, out)


@pytest.fixture(scope="module")
def hf_run(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    args = ["--model", "hf", "--model_args", f"pretrained={smollm2},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "4", "--apply_chat_template", "--tasks", ",".join(GREEDY), *samples_arg(GREEDY)]
    args += ["--gen_kwargs", f"max_gen_toks={MAX_GEN_TOKS}", "--log_samples"]
    return run_lm_eval(args, tmp_path_factory.mktemp("hf_run"))


def by_document(run: LmEvalRun, task: str) -> dict[int, dict]:
    return {sample["doc_id"]: sample for sample in run.samples[task]}


def item_scores(sample: dict) -> dict:
    return {name: sample[name] for name in sample["metrics"]}


def texts(sample: dict) -> list[str]:
    return [text for response in sample["resps"] for text in response]


@pytest.mark.engine
@pytest.mark.parametrize("task", sorted(GREEDY))
def test_greedy_texts_scores_and_metrics_equal_the_in_process_run(served_run, hf_run, task):
    served, local = by_document(served_run, task), by_document(hf_run, task)
    assert sorted(served) == sorted(local) == list(range(GREEDY[task]))
    differences = [doc for doc in served if texts(served[doc]) != texts(local[doc])]
    assert differences == [], [(texts(served[doc]), texts(local[doc])) for doc in differences]
    assert all(any(text.strip() for text in texts(sample)) for sample in served.values())
    for doc in served:
        assert item_scores(served[doc]) == item_scores(local[doc])
        assert served[doc]["filtered_resps"] == local[doc]["filtered_resps"]
    served_metrics = {
        k: v for k, v in served_run.results["results"][task].items() if not k.startswith(("unanswered", "cut_answers"))
    }
    assert assert_same_metrics(served_metrics, hf_run.results["results"][task]) > 0
    assert served_run.metric(task, "unanswered") == 0


@pytest.mark.engine
def test_sampled_protocols_are_answered_and_repeats_are_distinct_samples(served_run):
    for task in SAMPLED:
        filter_key = "persona" if "persona" in task else "none"
        assert served_run.metric(task, "unanswered", filter_key) == 0, task
        answers = [text for sample in served_run.samples[task] for text in texts(sample)]
        assert answers and all(text.strip() for text in answers), (task, answers)
    (leakage,) = served_run.samples["stereotype_leakage_gen_en"]
    repeats = texts(leakage)
    assert len(repeats) == LEAKAGE_REPEATS
    # with lm_eval's one seed for all, transformers serve (which seeds torch per request) returns ten equal samples
    assert len(set(repeats)) > 1, repeats


@pytest.mark.engine
def test_answers_transformers_serve_cut_at_max_gen_toks_are_counted_and_shown_as_a_caveat(served_run, smollm2, capsys):
    """``--gen_kwargs max_gen_toks=8``: every answer of the served run stops at the limit (``transformers serve``
    answers ``finish_reason: "length"``; each text is at least 8 tokens of the model's tokenizer, so none ended by
    itself); every task counts each of its answers, each repeat of a sampled prompt its own, in ``cut_answers``, and
    the report shows the caveat."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    for task in DOCUMENTS:
        answers = [text for sample in served_run.samples[task] for text in texts(sample)]
        assert all(len(tokenizer.encode(text, add_special_tokens=False)) >= MAX_GEN_TOKS for text in answers), answers
        filter_key = "persona" if "persona" in task else "none"
        assert served_run.metric(task, "cut_answers", filter_key) == len(answers) > 0, task
    assert main(["report", str(served_run.output_dir), "--details"]) == 0
    report = capsys.readouterr().out
    caveat = f"cut_answers = {LEAKAGE_REPEATS}: answers the server cut at the token limit (finish_reason: length)"
    assert caveat in report and "raise max_gen_toks in --gen_kwargs" in report


@pytest.mark.engine
def test_the_report_and_export_read_a_served_run_and_no_file_holds_a_key(served_run, server, smollm2, tmp_path, capsys):
    """Every file the served run wrote (results, samples, the ``--use_cache`` database), the report's Markdown, HTML
    and JSON, the export's records, and the console of all of them: none holds any of the credentials
    (:data:`SECRETS`) in any form the run was given them."""
    assert served_run.results["config"]["model"] == "local-chat-completions"
    html, records, report_json = tmp_path / "report", tmp_path / "eee", tmp_path / "report.json"
    assert (
        main(["report", str(served_run.output_dir), "--details", "--html", str(html), "--json", str(report_json)]) == 0
    )
    report = capsys.readouterr().out
    assert f"| {smollm2.name} |" in report
    model_id = "HuggingFaceTB/SmolLM2-135M-Instruct"
    export = ["export", str(served_run.output_dir), "--format", "eee", "--output", str(records)]
    assert main([*export, "--model-id", model_id]) == 0
    written = list(records.rglob("*.json"))
    assert written
    assert any(json.loads(path.read_text())["model_info"]["id"] == model_id for path in written)
    files = [path for folder in (served_run.output_dir, html, records) for path in folder.rglob("*") if path.is_file()]
    files.append(report_json)
    kinds = {path.suffix for path in files}
    assert {".json", ".jsonl", ".db", ".html"} <= kinds, kinds
    assert (served_run.output_dir / "cache_rank0.db").stat().st_size > 0
    leaks = {secret: [path for path in files if secret.encode() in path.read_bytes()] for secret in SECRETS}
    assert leaks == {secret: [] for secret in SECRETS}
    console = served_run.stdout + served_run.stderr + report + capsys.readouterr().out
    assert [secret for secret in SECRETS if secret in console] == []
    # the credentials reached lm_eval, redacted where it wrote them: its log of the model arguments, its summary line
    assert "'api_key': '<redacted>'" in served_run.stderr and "'auth_token': '<redacted>'" in served_run.stdout
    base_url = served_run.results["config"]["model_args"]["base_url"]
    assert base_url == f"{server.base}/v1/chat/completions?api-key=<redacted>"


def test_no_server_at_base_url_stops_in_one_line_before_any_work(smollm2, tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1/chat/completions"
    args = ["--model", "local-chat-completions", "--model_args", f"model={smollm2},base_url={url}"]
    run = run_lm_eval([*args, "--apply_chat_template", "--tasks", "gest_mt_cs", "--limit", "1"], tmp_path, check=False)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1] == (
        f"lm-eval-stereo: no server answers at {url} (Connection refused): start it, or correct --model_args base_url"
    )
    assert "Traceback" not in run.stderr and "Building contexts" not in run.stderr
    assert run.results == {}


def test_missing_api_packages_are_named_in_one_line(smollm2, tmp_path):
    script = tmp_path / "without_tenacity.py"
    script.write_text(
        "import sys\nsys.modules['tenacity'] = None  # as if not installed\n"
        "from lm_eval.__main__ import cli_evaluate\nsys.argv[0] = 'lm_eval'\ncli_evaluate()\n"
    )
    args = ["--model", "local-chat-completions", "--model_args", f"model={smollm2},base_url=http://127.0.0.1:9/v1"]
    run = run_lm_eval(
        [*args, "--tasks", "gest_mt_cs"], tmp_path / "out", launcher=[sys.executable, str(script)], check=False
    )
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert last == 'lm-eval-stereo: --model local-chat-completions needs tenacity: pip install "lm-eval-stereo[api]"'


@pytest.mark.engine
def test_log_likelihood_tasks_stop_before_any_request_on_a_server_without_prompt_logprobs(
    served_model, server, tmp_path
):
    posts = server.posts()
    chat = chat_args(served_model, server, {"gest_en": 1})
    run = run_lm_eval(chat, tmp_path / "chat", check=False)
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "lm-eval-stereo: gest_en: log-likelihood tasks, which a chat-completions endpoint "
        f"({server.base}/v1/chat/completions) cannot score: run them with --model local-completions"
    )
    completions = ["--model", "local-completions", "--model_args"]
    completions += [f"model={served_model},base_url={server.base}/v1/completions,tokenizer={served_model}"]
    completions += ["--tasks", "gest_en", "--limit", "1"]
    run = run_lm_eval(completions, tmp_path / "completions", check=False)
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"lm-eval-stereo: gest_en: log-likelihood tasks need prompt log-probabilities, and {server.base}/v1/completions"
        ": it answered echo=true, logprobs=1 with no logprobs"
    )
    assert "Traceback" not in run.stderr and server.posts() == posts
    assert run.results == {}


@pytest.mark.engine
def test_server_killed_mid_run_then_resumed_with_use_cache_ends_as_an_uninterrupted_run(
    served_model, server, served_run, tmp_path, capsys
):
    tasks = {"gest_mt_cs": 2, "kobbq_gen": 1}
    cache = tmp_path / "cache" / "requests"
    args = [*chat_args(served_model, server, tasks), "--use_cache", str(cache)]
    before = server.posts()
    command, env = lm_eval_command(args, tmp_path / "killed", env=ENV)
    process = start_lm_eval(command, env, tmp_path / "killed", tmp_path / "killed.log")
    try:
        deadline = time.monotonic() + 300
        while server.posts() == before and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        server.kill()
        answered = server.posts() - before
        assert process.wait(300) == 0, (tmp_path / "killed.log").read_text()[-4000:]
    finally:
        server.kill()
        server.start()
    results, _ = read_outputs(tmp_path / "killed")
    unanswered = {task: results["results"][task]["unanswered,none"] for task in tasks}
    assert 0 < answered < 3 and sum(unanswered.values()) == 3 - answered, (answered, unanswered)
    assert main(["report", str(tmp_path / "killed"), "--details"]) == 0
    assert f"unanswered = {max(unanswered.values())}: requests the model did not answer" in capsys.readouterr().out

    before = server.posts()
    resumed = run_lm_eval(args, tmp_path / "resumed")
    assert server.posts() - before == 3 - answered
    for task in tasks:
        assert assert_same_metrics(served_run.results["results"][task], resumed.results["results"][task]) > 0
        served, again = by_document(served_run, task), by_document(resumed, task)
        assert {doc: texts(sample) for doc, sample in again.items()} == {doc: texts(served[doc]) for doc in again}


def test_credentials_are_removed_from_urls_and_model_args():
    from lm_eval_stereo.core.credentials import REDACTED, redact_model_args, redact_url

    assert redact_url("https://user:sk-1@api.example.com:8443/v1/chat?api-key=sk-2&api-version=2024-06-01") == (
        f"https://api.example.com:8443/v1/chat?api-key={REDACTED}&api-version=2024-06-01"
    )
    args = "model=m,base_url=http://u:sk-3@127.0.0.1:8000/v1/completions,auth_token=sk-4,num_concurrent=4"
    assert redact_model_args(args) == (
        f"model=m,base_url=http://127.0.0.1:8000/v1/completions,auth_token={REDACTED},num_concurrent=4"
    )
    assert redact_model_args({"model": "m", "api_key": "sk-5", "token": "hf_6", "header": {"Authorization": "x"}}) == (
        {"model": "m", "api_key": REDACTED, "token": REDACTED, "header": REDACTED}
    )
    assert redact_model_args({"use_auth_token": True, "tokenizer": "t", "max_tokens": 5}) == (
        {"use_auth_token": True, "tokenizer": "t", "max_tokens": 5}
    )
    assert redact_model_args("pretrained=org/name,dtype=float32") == "pretrained=org/name,dtype=float32"


def test_unanswered_texts_are_empty_outputs_the_request_cache_never_keeps():
    import pickle

    from lm_eval_stereo.core.answer_record import PLUGIN_KEYS, AnswerCache
    from lm_eval_stereo.core.unanswered import Unanswered
    from lm_eval_stereo.models.served_mixin import cut_at_stops

    text = pickle.loads(pickle.dumps(Unanswered("")))
    assert isinstance(text, Unanswered) and text == "" and not text
    store: dict = {}
    cache = AnswerCache(store)
    cache["a"], cache["b"], cache["c"] = "Ja", Unanswered(""), ""
    assert store == {"a": "Ja", "c": ""} and "b" not in cache and cache["a"] == "Ja"
    views = AnswerCache(store, prefix=PLUGIN_KEYS)  # the plugin's view's answers: the same file, keys of their own
    views["a"] = "Ja."
    assert store == {"a": "Ja", "c": "", f"{PLUGIN_KEYS}a": "Ja."} and views["a"] == "Ja." and "c" not in views
    assert cut_at_stops("Muž je silný.\n\nEnglish: x", ["\n\n", "\nEnglish:"]) == "Muž je silný."


def test_a_refused_or_failed_answer_is_no_text_and_a_returned_stop_string_is_cut():
    """The plugin's view of ``local-chat-completions`` reads a refusal (no content) and a request that failed after
    every retry as unanswered texts, and cuts a returned stop string; lm_eval's own class reads them as it does."""
    from lm_eval.models.openai_completions import LocalChatCompletion

    from lm_eval_stereo.core.unanswered import Unanswered
    from lm_eval_stereo.models.served_mixin import STOP_STRINGS, Failed
    from lm_eval_stereo.models.view import view_class

    model = object.__new__(view_class(LocalChatCompletion))
    model.think_end_token = None
    model.__dict__[STOP_STRINGS] = ["\n\n"]

    def answer(content):
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": "no"}}]}

    for texts in (model.parse_generations(answer(None)), model.parse_generations(Failed(prompts=2))):
        assert texts == [""] * len(texts) and all(isinstance(text, Unanswered) for text in texts) and texts
    assert len(model.parse_generations(Failed(prompts=2))) == 2
    assert model.parse_generations(answer("Muž.\n\nEnglish:")) == ["Muž."]
    stock = object.__new__(LocalChatCompletion)
    stock.think_end_token = None
    assert stock.parse_generations(answer(None)) == [None]
    assert stock.parse_generations(answer("Muž.\n\nEnglish:")) == ["Muž.\n\nEnglish:"]


# --- served answers checked before they are scores (issue 54) ---------------------------------------------------------
# A fault-injecting stand-in (tests/openai_stand_in.py) for the answers no real server gives: a token_logprobs list
# shorter than the tokens sent or without the generated token's entry, a positive or NaN log-probability, no
# logprobs, an answer naming another model, empty choices. What a real server shows (an answer cut at the token
# limit: transformers serve stops at max_gen_toks) is tested against the real one above.


@pytest.fixture
def stand_in():
    from openai_stand_in import serve_stand_in

    with serve_stand_in() as server:
        yield server


def stand_in_scoring_args(stand_in, tokenizer: Path) -> list[str]:
    args = ["--model", "local-completions", "--model_args"]
    args += [f"model=stand-in-model,base_url={stand_in.base}/v1/completions,tokenizer={tokenizer}"]
    return [*args, "--tasks", "gest_en", "--limit", "1"]


def stand_in_chat_args(stand_in, tasks: str = "kobbq_gen") -> list[str]:
    args = ["--model", "local-chat-completions", "--model_args"]
    args += [f"model=stand-in-model,base_url={stand_in.base}/v1/chat/completions,tokenizer_backend=none"]
    return [*args, "--apply_chat_template", "--tasks", tasks, "--limit", "2", "--log_samples"]


def assert_one_line(run: LmEvalRun, line: str) -> None:
    assert run.returncode == 2 and run.results == {}, run.stderr[-3000:]
    assert run.stderr.strip().splitlines()[-1] == f"lm-eval-stereo: {line}"
    assert "Traceback" not in run.stderr and "failed after" not in run.stderr


@pytest.mark.parametrize(
    ("fault", "wrong"),
    [
        ("short", "{n_less} log-probabilities for the {n} tokens sent and the one generated ({n_more} expected)"),
        (
            "no_generated",
            "{n} log-probabilities for the {n} tokens sent, without the generated token's entry: lm_eval would drop "
            "the continuation's last token",
        ),
        ("positive", "token {n} of {n_more} has the log-probability 0.25, not a finite number <= 0"),
        ("nan", "token {n} of {n_more} has the log-probability nan, not a finite number <= 0"),
        ("no_logprobs", "no logprobs.token_logprobs and top_logprobs lists (logprobs: None)"),
    ],
)
def test_a_log_likelihood_answer_that_is_not_one_stops_in_one_line_naming_what_is_wrong(
    stand_in, tiny_causal, tmp_path, fault, wrong
):
    """The first request of gest_en (the longest of its first document: its context and one continuation, ``n``
    tokens, and the generated token) answered with the fault: one line naming the endpoint and what is wrong with the
    answer, not a score, and not "failed after 2 tries" (nothing was retried)."""
    stand_in.set_fault(fault)
    run = run_lm_eval(stand_in_scoring_args(stand_in, tiny_causal), tmp_path, check=False)
    assert len(stand_in.requests) == 2  # the probe, then the one request whose answer stopped the run
    (sent,) = stand_in.requests[-1]["prompt"]
    wrong = wrong.format(n=len(sent), n_less=len(sent) - 1, n_more=len(sent) + 1)
    url = f"{stand_in.base}/v1/completions"
    assert_one_line(
        run, f"{url} gave an answer to a log-likelihood request that is not one: {wrong}; no results written"
    )


def test_a_well_formed_answer_is_scored_from_every_token_and_a_version_suffix_is_the_asked_model(
    stand_in, tiny_causal, tmp_path
):
    """The same requests answered well-formed, naming the model as asked and then with a version after it (as OpenAI's
    API does): scored, the four continuations' log-likelihoods the sums of the stand-in's values of their tokens."""
    from openai_stand_in import token_logprob
    from transformers import AutoTokenizer

    runs = {}
    for fault in (None, "suffix"):
        stand_in.set_fault(fault)
        runs[fault] = run_lm_eval(
            [*stand_in_scoring_args(stand_in, tiny_causal), "--log_samples"], tmp_path / str(fault)
        )
    assert runs[None].results["results"] == runs["suffix"].results["results"]
    (sample,) = runs[None].samples["gest_en"]
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal)
    expected = []
    for request in sample["arguments"].values():
        context, continuation = request["arg_0"], request["arg_1"]
        spaces = len(context) - len(context.rstrip())  # lm_eval's _encode_pair moves them to the continuation
        context, continuation = (
            (context[:-spaces], context[-spaces:] + continuation) if spaces else (context, continuation)
        )
        context_ids = tokenizer.encode(context, add_special_tokens=False)
        whole = tokenizer.encode(context + continuation, add_special_tokens=False)
        expected.append(sum(map(token_logprob, whole[len(context_ids) :])))
    assert [float(resp[0][0]) for resp in sample["resps"]] == pytest.approx(expected)


def test_an_answer_naming_another_model_than_asked_stops_in_one_line(stand_in, tmp_path):
    stand_in.set_fault("other_model")
    run = run_lm_eval(stand_in_chat_args(stand_in), tmp_path, check=False)
    assert_one_line(
        run,
        f"{stand_in.base}/v1/chat/completions answered as the model 'other-model', not the 'stand-in-model' asked for "
        "(--model_args model=): its answers are not that model's; no results written",
    )


def test_chat_answers_without_choices_are_unanswered_and_cut_ones_counted_with_a_report_caveat(
    stand_in, tmp_path, capsys
):
    """An answer with an empty ``choices`` list (lm_eval: a ``zip()`` error that ends the run) is counted
    ``unanswered``; one cut at the token limit (``finish_reason: length``) is scored as its text and counted
    ``cut_answers``; the report shows each as a caveat."""
    counts = {}
    for fault in ("empty_choices", "length", None):
        stand_in.set_fault(fault)
        run = run_lm_eval(stand_in_chat_args(stand_in), tmp_path / str(fault))
        counts[fault] = (run.metric("kobbq_gen", "unanswered"), run.metric("kobbq_gen", "cut_answers"))
        texts = [text for sample in run.samples["kobbq_gen"] for response in sample["resps"] for text in response]
        assert texts == (["", ""] if fault == "empty_choices" else ["Ja.", "Ja."]), (fault, texts)
        assert ("answered with no choices: counted as unanswered" in run.stderr) == (fault == "empty_choices")
        assert "Traceback" not in run.stderr
        assert main(["report", str(tmp_path / str(fault)), "--details"]) == 0
        report = capsys.readouterr().out
        assert ("unanswered = 2: requests the model did not answer" in report) == (fault == "empty_choices")
        caveat = "cut_answers = 2: answers the server cut at the token limit (finish_reason: length)"
        assert (caveat in report) == (fault == "length"), report[-3000:]
    assert counts == {"empty_choices": (2, 0), "length": (0, 2), None: (0, 0)}
