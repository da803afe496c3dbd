"""A stand-in for an OpenAI-compatible server on 127.0.0.1, for the answers no real server gives, or none gives on
demand: it answers ``/v1/completions`` (prompt log-probabilities with ``echo``, as vLLM does; a text for a generation
request) and ``/v1/chat/completions`` like a well-behaved server, but for the one fault a test sets (:data:`FAULTS`).
The tests use it only for those faults; everything a real server can show is tested against ``transformers serve``
or ``vllm serve`` (tests/backends/test_served.py,
tests/backends/test_vllm_served.py).

A prompt's log-probabilities are a function of its tokens (:func:`token_logprob`), so that a test can compute what a
well-formed answer scores.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: the faults, each an answer no real server gives (or, ``suffix``, a model name as OpenAI's API writes it); the
#: log-likelihood ones apply to lm_eval's requests (token ids), not to the plugin's probe (a text)
FAULTS = {
    "short": "token_logprobs shorter than the tokens sent (two context entries missing)",
    "no_generated": "token_logprobs without the generated token's entry",
    "positive": "a continuation token's log-probability +0.25",
    "nan": "a continuation token's log-probability NaN",
    "no_logprobs": "choices without logprobs (null)",
    "other_model": "every answer names the model 'other-model'",
    "suffix": "every answer names the model asked for with '-2024-08-06' after it (as OpenAI's API names versions)",
    "empty_choices": "chat: an answer with an empty choices list",
    "length": "chat: every answer cut at the token limit (finish_reason 'length')",
    "returns_stop": "generation: the text holds the request's first stop string and more after it (as transformers "
    "serve returns it), and names the request's seed (as a server that honours seed samples)",
    "http_500": "every generation request answered HTTP 500 (a server failing every retry)",
    "cache_after_opt_out": "every echoed answer says it read its whole prompt from the prefix cache "
    "(usage.prompt_tokens_details.cached_tokens), whether the request opted in to it or not (a server that ignores "
    "the opt-out)",
    "http_503_first": "every request of lm_eval's (token ids) answered HTTP 503 the first time it comes, then answered "
    "(a server that sheds load and recovers before lm_eval's next try)",
}
#: the text of every generation answer (but under ``returns_stop``: :meth:`StandIn.generated`)
CHAT_TEXT = "Ja."
#: what follows the stop string in a ``returns_stop`` answer
AFTER_STOP = "und mehr"
#: the log-probability of the token generated after an echoed prompt
GENERATED_LOGPROB = -0.5


def token_logprob(token: Any) -> float:
    """The log-probability the stand-in gives a prompt token (an id, or a word of a text prompt)."""
    return -(1.0 + ((token if isinstance(token, int) else len(str(token))) % 7) / 10)


@dataclass
class StandIn:
    """The running stand-in: its base URL, the fault in force (None: none), the request bodies received and their
    headers, and a gate that holds every request until it is open (:meth:`hold`, :meth:`release`)."""

    base: str
    fault: str | None = None
    requests: list[dict] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    gate: threading.Event = field(default_factory=threading.Event)
    #: the request bodies answered HTTP 503 once (``http_503_first``)
    shed: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.gate.set()

    def hold(self) -> None:
        """Hold every request from now on, unanswered, until :meth:`release`."""
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()

    def wait_for_request(self, timeout: float) -> bool:
        """Whether a request came within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        return bool(self.requests)

    def set_fault(self, fault: str | None) -> None:
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; known: {sorted(FAULTS)}")
        self.fault = fault

    def model_name(self, asked: str) -> str:
        if self.fault == "other_model":
            return "other-model"
        return f"{asked}-2024-08-06" if self.fault == "suffix" else asked

    def generated(self, body: dict) -> str:
        """The text of a generation answer: :data:`CHAT_TEXT`, or under ``returns_stop`` ``Ja <seed>.``, the request's
        first stop string (a newline where it sends none) and :data:`AFTER_STOP`."""
        if self.fault != "returns_stop":
            return CHAT_TEXT
        stop = (body.get("stop") or ["\n"])[0]
        return f"Ja {body.get('seed')}.{stop}{AFTER_STOP}"

    def completion(self, body: dict) -> dict:
        """An echoed prompt's log-probabilities and one generated token, per prompt (token ids or a text); a
        generation request's text (:meth:`generated`) per prompt."""
        prompts = body["prompt"]
        prompts = prompts if isinstance(prompts, list) and prompts and isinstance(prompts[0], list) else [prompts]
        if not body.get("echo"):
            choices = [
                {"index": index, "text": self.generated(body), "logprobs": None, "finish_reason": "stop"}
                for index in range(len(prompts))
            ]
            return {
                "id": "cmpl-0",
                "object": "text_completion",
                "model": self.model_name(body["model"]),
                "choices": choices,
            }
        choices = []
        for index, prompt in enumerate(prompts):
            tokens = prompt if isinstance(prompt, list) else str(prompt).split()
            values: list[float | None] = [None, *map(token_logprob, tokens[1:]), GENERATED_LOGPROB]
            fault = self.fault if isinstance(prompt, list) else None  # lm_eval's requests; the probe's text is answered
            if fault == "short":
                del values[1:3]
            elif fault == "no_generated":
                values.pop()
            elif fault in ("positive", "nan"):
                values[-2] = 0.25 if fault == "positive" else float("nan")
            tops = [None, *({str(token): value} for token, value in zip([*tokens[1:], "<gen>"], values[1:]))]
            logprobs = {"tokens": [str(t) for t in tokens] + ["<gen>"], "token_logprobs": values, "top_logprobs": tops}
            choices.append(
                {
                    "index": index,
                    "text": "x",
                    "logprobs": None if fault == "no_logprobs" else logprobs,
                    "finish_reason": "length",
                }
            )
        answer = {
            "id": "cmpl-0",
            "object": "text_completion",
            "model": self.model_name(body["model"]),
            "choices": choices,
        }
        if self.fault == "cache_after_opt_out":
            sent = len(prompts[-1]) if isinstance(prompts[-1], list) else len(str(prompts[-1]).split())
            details = {"cached_tokens": sent}  # vLLM reports the last prompt's
            answer["usage"] = {"prompt_tokens": sent, "total_tokens": sent + 1, "prompt_tokens_details": details}
        return answer

    def chat(self, body: dict) -> dict:
        message = {"role": "assistant", "content": self.generated(body)}
        finish = "length" if self.fault == "length" else "stop"
        choices = [] if self.fault == "empty_choices" else [{"index": 0, "message": message, "finish_reason": finish}]
        return {
            "id": "chat-0",
            "object": "chat.completion",
            "model": self.model_name(body["model"]),
            "choices": choices,
        }


def _token_ids(body: dict) -> bool:
    """Whether a completions request sends token ids (lm_eval's requests; the plugin's probe sends a text)."""
    prompt = body.get("prompt")
    return isinstance(prompt, list) and bool(prompt) and isinstance(prompt[0], (int, list))


def _handler(stand_in: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
            """Quiet: the tests read :attr:`StandIn.requests`."""

        def answer(self, payload: dict, status: int = 200) -> None:
            data = json.dumps(payload).encode()  # NaN as JSON's NaN, as Python servers write it
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.startswith("/v1/models"):
                self.answer({"object": "list", "data": [{"id": "stand-in", "owned_by": "stand-in"}]})
            else:
                self.answer({"status": "ok"})

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            stand_in.requests.append(body)
            stand_in.headers.append(dict(self.headers.items()))
            stand_in.paths.append(self.path)
            stand_in.gate.wait()
            path = self.path.split("?")[0]
            generation = path.endswith("/chat/completions") or not body.get("echo")
            key = json.dumps(body, sort_keys=True)
            if stand_in.fault == "http_500" and generation:
                self.answer({"error": {"message": "stand-in: internal error", "code": 500}}, 500)
            elif stand_in.fault == "http_503_first" and _token_ids(body) and key not in stand_in.shed:
                stand_in.shed.add(key)
                self.answer({"error": {"message": "stand-in: overloaded", "code": 503}}, 503)
            elif path.endswith("/chat/completions"):
                self.answer(stand_in.chat(body))
            elif path.endswith("/completions"):
                self.answer(stand_in.completion(body))
            else:
                self.answer({"error": "not found"}, 404)

    return Handler


@contextmanager
def serve_stand_in() -> Iterator[StandIn]:
    """The stand-in on a free loopback port until the block ends."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(StandIn(base="")))
    stand_in = StandIn(base=f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.RequestHandlerClass = _handler(stand_in)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
