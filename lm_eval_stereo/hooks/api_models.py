"""``lm_eval.models.api_models`` and ``lm_eval.models.openai_completions``: lm_eval 0.4.13's OpenAI-compatible API
backends (``local-chat-completions``, ``local-completions``, ``openai-chat-completions``, ``openai-completions``) send
requests some servers reject, return text the in-process backends would have cut, give every repeat of a sampled
request the same seed, and end a whole run at the first request that fails after the retries. The plugin's protocols
run against any such server with these changes (installed by :func:`install` and :func:`install_openai_completions`):

- before anything is loaded (:func:`check_api_packages`, :func:`check_server`): one line naming what is missing
  (``pip install "lm-eval-stereo[api]"``) or the URL no server answers at, exit status 2;
- the request (:func:`payload_wrapper`): a task that stops at end-of-sequence only (``until: []``) sends no ``stop``
  field instead of lm_eval's ``"stop": []``, which servers reject (``transformers serve``: HTTP 500), and
  ``in-process`` ``hf`` appends the EOS itself; the k-th identical sampled request of a run (``repeats``: the same
  prompt sent k times) carries ``seed + k``, so a server that honours ``seed`` returns k different samples, and the
  same ones when the run is repeated with the same ``seed`` (``--model_args seed=``, lm_eval's default 1234); a chat
  whose last message is a prefilled assistant turn (lm_eval's ``gen_prefix``: GerBBQ+'s ``"\\nAntwort:\\n"``) is
  continued where the server can (:func:`continues_final_message`: vLLM's ``continue_final_message``), and said once
  per task with its count where it cannot;
- the response (:func:`retrying`, :func:`parse_wrapper`, :func:`counting_wrapper`): text after a stop string is
  cut, as lm_eval's in-process backends cut it (the OpenAI API leaves the stop string out; ``transformers serve``
  returns it); a request that failed after lm_eval's ``max_retries`` (HTTP error, timeout, connection refused) or
  whose message has no content (null, a refusal, a content filter) gives an :class:`Unanswered` empty text instead
  of ending the run: the task scores it as the empty output it is (undetermined or empty, by its own rules),
  lm_eval's ``--use_cache`` never stores it (a resumed run asks again,
  :class:`lm_eval_stereo.hooks.answer_cache.AnswerCache`), and the results count it per task
  (:mod:`lm_eval_stereo.core.unanswered`, also for ``replay``'s ``null`` recordings); an answer that names another
  ``model`` than the endpoint's first answer did (two models behind one load balancer) stops the run in one line
  naming both (:func:`check_answering_model`);
- the run (:func:`check_scoring_tasks`): a log-likelihood task on a chat-completions model, or on a completions
  endpoint that returns no prompt log-probabilities, stops before the first request with one line naming the
  endpoint and what it lacks; a log-likelihood request that fails after the retries stops the run in one line
  (:func:`scoring_wrapper`), what was answered kept by ``--use_cache`` for the resumed run.
"""

from __future__ import annotations

import functools
import json
import logging
import socket
import sys
import time
from collections import Counter
from importlib.util import find_spec
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from lm_eval_stereo.core.credentials import redact_url
from lm_eval_stereo.core.served_answers import (
    AnsweringModelError,
    ServedAnswerError,
    check_logprobs,
    choices_of,
    is_asked_model,
    mark_cut,
)
from lm_eval_stereo.core.unanswered import UNANSWERED, Unanswered, count_unanswered, served_model
from lm_eval_stereo.core.values import parse_model_args
from lm_eval_stereo.hooks import RepeatSeeds, fail, wrap

#: lm_eval 0.4.13's OpenAI-compatible backends (``lm_eval/models/openai_completions.py``)
API_MODELS = frozenset(
    {
        "local-completions",
        "local-chat-completions",
        "openai-completions",
        "openai-chat-completions",
        "azure-openai-chat-completions",
    }
)
#: what lm_eval's API models import (``lm_eval[api]``; ``tiktoken`` only for OpenAI's own tokenizer)
API_PACKAGES = ("requests", "aiohttp", "tenacity", "tqdm")
INSTALL_HINT = 'pip install "lm-eval-stereo[api]"'
#: seconds to wait for a TCP connection to the server before the run
CONNECT_TIMEOUT = 5.0
#: request types that need the prompt's log-probabilities
SCORING_TYPES = ("loglikelihood", "multiple_choice", "loglikelihood_rolling")
#: the prompt of the probe that asks a completions endpoint for prompt log-probabilities
PROBE_PROMPT = "The cat sat on the mat"


def missing_api_packages() -> list[str]:
    """The packages of :data:`API_PACKAGES` that are not installed."""
    return [package for package in API_PACKAGES if find_spec(package) is None]


def check_api_packages(model: str | None) -> None:
    """Stop in one line (exit status 2) when ``--model`` is an API model and lm_eval's API packages are missing."""
    missing = missing_api_packages() if model in API_MODELS else []
    if missing:
        fail(f"--model {model} needs {', '.join(missing)}: {INSTALL_HINT}")


def check_server(model: str | None, model_args: Any) -> None:
    """Stop in one line (exit status 2) when ``--model`` is an API model whose ``base_url`` no server listens at."""
    if model not in API_MODELS:
        return
    base_url = parse_model_args(model_args).get("base_url")
    if not base_url:
        return
    parts = urlsplit(base_url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None:
        fail(f"--model_args base_url={redact_url(base_url)} is not an http(s) URL with a host")
    try:
        socket.create_connection((parts.hostname, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        fail(f"no server answers at {redact_url(base_url)} ({reason}): start it, or correct --model_args base_url")


def payload_wrapper(original: Any) -> Any:
    """``_create_payload`` that sends no empty ``stop`` and gives the k-th identical sampled request ``seed + k``."""

    @functools.wraps(original)
    def _create_payload(self: Any, messages: Any, *args: Any, **kwargs: Any) -> dict:
        generate = kwargs.get("generate", args[0] if args else False)
        gen_kwargs = dict(kwargs.get("gen_kwargs") or {})
        if generate and gen_kwargs.get("do_sample"):
            seeds = self.__dict__.setdefault("_lm_eval_stereo_seeds", RepeatSeeds())
            kwargs["seed"] = seeds.next_seed(int(kwargs.get("seed", self._seed)), messages, gen_kwargs)
        payload = original(self, messages, *args, **kwargs)
        if generate and isinstance(payload, dict) and ends_in_assistant_turn(payload.get("messages")):
            if continues_final_message(self):
                payload.update(continue_final_message=True, add_generation_prompt=False)
        if generate and isinstance(payload, dict):
            if not payload.get("stop"):
                payload.pop("stop", None)
            self._lm_eval_stereo_stop = [term for term in payload.get("stop") or [] if term]
        return payload

    _create_payload._lm_eval_stereo = True  # type: ignore[attr-defined]
    return _create_payload


def ends_in_assistant_turn(messages: Any) -> bool:
    """Whether a chat request's last message is the assistant's (a prefill, lm_eval's ``gen_prefix``)."""
    return (
        isinstance(messages, list)
        and bool(messages)
        and isinstance(messages[-1], dict)
        and (messages[-1].get("role") == "assistant")
    )


def continues_final_message(model: Any) -> bool:
    """Whether ``model``'s chat server continues a prefilled assistant turn: vLLM's chat API does with
    ``continue_final_message: true, add_generation_prompt: false``; a server that rejects unknown fields
    (``transformers serve``) or ignores them does not, and gets neither. Asked once per model: ``GET /v1/models``
    names vLLM as the owner of its models."""
    cached = model.__dict__.get("_lm_eval_stereo_continues")
    if cached is None:
        import requests

        url = str(model.base_url or "").rsplit("/chat/completions", 1)[0] + "/models"
        try:
            response = requests.get(url, headers=model.header, verify=model.verify_certificate, timeout=10)
            owners = {entry.get("owned_by") for entry in response.json().get("data", [])}
        except (requests.RequestException, ValueError, AttributeError):
            owners = set()
        cached = model.__dict__["_lm_eval_stereo_continues"] = "vllm" in owners
    return cached


def _chat_messages(context: Any) -> Any:
    """The messages of a chat request's context (lm_eval's ``JsonChatStr``: the messages as JSON)."""
    try:
        return json.loads(getattr(context, "prompt", context))
    except (TypeError, ValueError):
        return None


#: what :func:`_answered_or_failed` returns for a generation request that failed after every retry
_FAILED = {"lm_eval_stereo_failed": True}


def retrying(original: Any, asynchronous: bool) -> Any:
    """``model_call``/``amodel_call`` that retry a generation request ``max_retries`` times (lm_eval's backoff) and
    then give :data:`_FAILED` (sync) or one :class:`Unanswered` per prompt (async) instead of raising."""

    def pause(attempt: int) -> float:
        return min(2.0**attempt, 10.0)

    def failed(self: Any, exc: BaseException) -> None:
        from lm_eval.models.api_models import eval_logger

        url = redact_url(str(self.base_url or ""))
        eval_logger.warning(
            f"lm-eval-stereo: request to {url} failed after {self.max_retries} tries ({type(exc).__name__}: {exc}); "
            f"counted as {UNANSWERED}"
        )

    if asynchronous:

        @functools.wraps(original)
        async def amodel_call(self: Any, *args: Any, **kwargs: Any) -> Any:
            import asyncio

            if not kwargs.get("generate", True):
                return await original(self, *args, **kwargs)
            for attempt in range(max(int(self.max_retries), 1)):
                try:
                    return await original(self, *args, **kwargs)
                except ServedAnswerError:
                    raise  # an answer from another model: not a request to ask again
                except Exception as exc:  # noqa: BLE001 - any failure of the request is counted, not raised
                    error = exc
                    if attempt + 1 < self.max_retries:
                        await asyncio.sleep(pause(attempt))
            failed(self, error)
            messages = kwargs.get("messages", args[2] if len(args) > 2 else [None])
            return [_placeholder() for _ in messages]

        amodel_call._lm_eval_stereo = True  # type: ignore[attr-defined]
        return amodel_call

    @functools.wraps(original)
    def model_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("generate", True):
            return original(self, *args, **kwargs)
        for attempt in range(max(int(self.max_retries), 1)):
            try:
                return original(self, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - any failure of the request is counted, not raised
                error = exc
                if attempt + 1 < self.max_retries:
                    time.sleep(pause(attempt))
        failed(self, error)
        messages = kwargs.get("messages", args[0] if args else [None])
        return {**_FAILED, "prompts": len(messages) if isinstance(messages, (list, tuple)) else 1}

    model_call._lm_eval_stereo = True  # type: ignore[attr-defined]
    return model_call


def scoring_wrapper(original: Any) -> Any:
    """``_loglikelihood_tokens`` whose request that failed after lm_eval's ``max_retries`` ends the run in one line
    (exit status 2) naming the endpoint and how to resume: a log-likelihood has no stand-in that is not a score, so
    the run stops instead of scoring; what was answered stays in ``--use_cache``'s database, and the same command
    sends only the rest. An answer that is no log-likelihood answer (:class:`ServedAnswerError`) ends it in one line
    naming the endpoint and what is wrong with the answer."""

    @functools.wraps(original)
    def _loglikelihood_tokens(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - requests, aiohttp and tenacity errors alike
            url = redact_url(str(self.base_url or ""))
            unreadable = _within(exc, ServedAnswerError)
            if isinstance(unreadable, AnsweringModelError):
                close_progress_bars()
                fail(str(unreadable))
            if unreadable is not None:
                close_progress_bars()
                fail(
                    f"{url} gave an answer to a log-likelihood request that is not one: {unreadable}; no results written"
                )
            while exc.__cause__ is not None and not str(exc):
                exc = exc.__cause__
            text = " ".join(str(exc).split())
            reason = type(exc).__name__ + (f": {text[:100].rsplit(' ', 1)[0]} ..." if len(text) > 100 else f": {text}")
            close_progress_bars()
            fail(
                f"log-likelihood requests to {url} failed after {self.max_retries} tries ({reason}); no results "
                "written. With --use_cache the answered ones are kept: the same command sends only the rest"
            )

    _loglikelihood_tokens._lm_eval_stereo = True  # type: ignore[attr-defined]
    return _loglikelihood_tokens


def _within(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``exc`` or the first of its causes and contexts that is a ``kind`` (tenacity and asyncio wrap it), else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def close_progress_bars() -> None:
    """Close lm_eval's open progress bars before a one-line error: a bar left open redraws itself as the interpreter
    exits, after the error, which is then no longer the last line."""
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()
    sys.stderr.write("\n")  # a bar that is not closed by this (another tqdm) ends in no newline


def _placeholder() -> Unanswered:
    from lm_eval.models import api_models

    return Unanswered(api_models.LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER)


def cut_at_stops(text: str, stops: list[str]) -> str:
    """``text`` up to the first occurrence of any stop string, as lm_eval's in-process backends cut it."""
    for stop in stops:
        text = text.split(stop)[0]
    return text


#: the attribute of an API model that holds the ``model`` its endpoint's first answer named
ANSWERING_MODEL = "_lm_eval_stereo_answering_model"


def check_answering_model(lm: Any, outputs: Any) -> None:
    """Raise :class:`~lm_eval_stereo.core.served_answers.AnsweringModelError` (the run ends in its line:
    :func:`scoring_wrapper`, :func:`counting_wrapper`) when an answer names another ``model`` than the endpoint's
    first answer did (two models behind one endpoint: a load balancer before replicas that do not all serve the same
    model would mix their numbers into one result), or than the one asked for (``--model_args model=``; a version a
    server appends allowed: :func:`lm_eval_stereo.core.served_answers.is_asked_model`). Checked before the answer is
    used or cached, so ``--use_cache`` holds the asked model's answers only."""
    for answer in outputs if isinstance(outputs, list) else [outputs]:
        named = answer.get("model") if isinstance(answer, dict) else None
        if not isinstance(named, str):
            continue
        first = lm.__dict__.setdefault(ANSWERING_MODEL, named)
        url = redact_url(str(lm.base_url or ""))
        if named != first:
            problem = (
                f"{url} answered as two models, {first!r} and then {named!r}: every replica behind one endpoint must "
                "serve the same model; no results written"
            )
        elif not is_asked_model(lm.model, named):
            problem = (
                f"{url} answered as the model {named!r}, not the {lm.model!r} asked for (--model_args model=): its "
                "answers are not that model's; no results written"
            )
        else:
            continue
        # the other requests in flight are cancelled as the run ends: lm_eval would log each as "retrying"
        logging.getLogger("lm_eval.models.api_models").disabled = True
        raise AnsweringModelError(problem)


def _unwrapped(original: Any) -> tuple[Any, bool]:
    """The function of ``original`` and whether it was a ``staticmethod`` (called then without ``self``)."""
    static = isinstance(original, staticmethod)
    return (original.__func__ if static else original), static


def logprobs_wrapper(original: Any) -> Any:
    """``parse_logprobs`` that first checks which model answered (:func:`check_answering_model`) and that the answer
    holds a finite log-probability of every token sent and of the generated one
    (:func:`lm_eval_stereo.core.served_answers.check_logprobs`); an answer lm_eval cannot read is a
    :class:`~lm_eval_stereo.core.served_answers.ServedAnswerError` too, which :func:`scoring_wrapper` names."""
    function, static = _unwrapped(original)

    @functools.wraps(function)
    def parse_logprobs(self: Any, outputs: Any, **kwargs: Any) -> list:
        check_answering_model(self, outputs)
        check_logprobs(outputs, kwargs.get("tokens") or [], kwargs.get("ctxlens") or [])
        try:
            return function(outputs=outputs, **kwargs) if static else function(self, outputs=outputs, **kwargs)
        except Exception as exc:  # noqa: BLE001 - whatever lm_eval's reading raises, the answer is what is wrong
            raise ServedAnswerError(f"lm_eval could not read it ({type(exc).__name__}: {exc})") from exc

    parse_logprobs._lm_eval_stereo = True  # type: ignore[attr-defined]
    return parse_logprobs


def _stop_cut(text: str, stops: list[str]) -> str:
    """``text`` cut at the stop strings (:func:`cut_at_stops`); a text the cut leaves whole keeps its type (a
    :class:`~lm_eval_stereo.core.unanswered.CutText` stays marked; one cut at a stop string is complete)."""
    kept = cut_at_stops(text, stops)
    return text if kept == text else kept


def parse_wrapper(original: Any) -> Any:
    """``parse_generations`` that gives None for a failed request, checks which model answered
    (:func:`check_answering_model`), gives an answer without choices an :class:`Unanswered` text (counted; lm_eval
    would lose the request and end in a ``zip()`` error), marks the texts cut at the token limit
    (:func:`lm_eval_stereo.core.served_answers.mark_cut`) and cuts the texts at the request's stop strings
    (``original`` may be a ``staticmethod``)."""
    function, static = _unwrapped(original)

    @functools.wraps(function)
    def parse_generations(self: Any, outputs: Any, **kwargs: Any) -> list:
        if isinstance(outputs, dict) and outputs.get("lm_eval_stereo_failed"):
            return [None] * int(outputs.get("prompts", 1))
        check_answering_model(self, outputs)
        answers = outputs if isinstance(outputs, list) else [outputs]
        texts: list = []
        for answer in answers:
            choices = choices_of(answer)
            if choices is None:
                prompts = len(kwargs.get("contexts") or [None]) if len(answers) == 1 else 1
                _warn(f"{redact_url(str(self.base_url or ''))} answered with no choices: counted as {UNANSWERED}")
                texts += [_placeholder() for _ in range(prompts)]
                continue
            found = function(outputs=answer, **kwargs) if static else function(self, outputs=answer, **kwargs)
            texts += mark_cut(found, choices)
        stops = getattr(self, "_lm_eval_stereo_stop", [])
        return [text if text is None or isinstance(text, Unanswered) else _stop_cut(text, stops) for text in texts]

    parse_generations._lm_eval_stereo = True  # type: ignore[attr-defined]
    return parse_generations


def _warn(message: str) -> None:
    from lm_eval.models.api_models import eval_logger

    eval_logger.warning(f"lm-eval-stereo: {message}")


def counting_wrapper(original: Any) -> Any:
    """``TemplateAPI.generate_until`` that counts, per task, the requests that gave no text, says once per task how
    many prompts end in a prefilled assistant turn the server cannot continue, and ends the run in one line at an
    answer from another model (:func:`check_answering_model`)."""

    @functools.wraps(original)
    def generate_until(self: Any, requests: list, *args: Any, **kwargs: Any) -> list:
        closed = Counter(
            getattr(request, "task_name", None)
            for request in requests
            if ends_in_assistant_turn(_chat_messages(request.args[0])) and not continues_final_message(self)
        )
        if closed:
            from lm_eval.models.api_models import eval_logger

            for task, count in closed.items():
                eval_logger.warning(
                    f"lm-eval-stereo: {task}: {count} prompts end in a prefilled assistant turn that "
                    f"{redact_url(str(self.base_url or ''))} cannot continue (no continue_final_message): the model "
                    "answers in a turn of its own after it"
                )
        try:
            texts = original(self, requests, *args, **kwargs)
        except AnsweringModelError as exc:
            close_progress_bars()
            fail(str(exc))
        count_unanswered(self, requests, texts)
        return texts

    generate_until._lm_eval_stereo = True  # type: ignore[attr-defined]
    return generate_until


def placeholder(value: str) -> Unanswered:
    """lm_eval's text for a request with no answer (``LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER``), as
    :class:`Unanswered`."""
    return Unanswered(value)


def _prompt_logprobs(model: Any) -> tuple[bool, str]:
    """Whether ``model``'s completions endpoint returns the prompt's log-probabilities (``echo`` with ``logprobs``),
    and what it returned instead."""
    import requests

    payload = {
        "model": model.model,
        "prompt": PROBE_PROMPT,
        "max_tokens": 1,
        "temperature": 0,
        "logprobs": 1,
        "echo": True,
    }
    try:
        response = requests.post(
            model.base_url, json=payload, headers=model.header, verify=model.verify_certificate, timeout=model.timeout
        )
        response.raise_for_status()
        choice = (response.json().get("choices") or [{}])[0]
    except (requests.RequestException, ValueError, AttributeError) as exc:
        return False, f"the probe request failed ({type(exc).__name__})"
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    tokens = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(tokens, list) or len(tokens) < 2:
        found = "no logprobs" if not logprobs else "log-probabilities of the generated token only"
        return False, f"it answered echo=true, logprobs=1 with {found}"
    return True, ""


def check_scoring_tasks(lm: Any, tasks: dict[str, Any]) -> None:
    """Stop before the first request when log-likelihood tasks meet a served model that cannot score them."""
    model = served_model(lm)
    if model is None:
        return
    scoring = sorted(name for name, task in tasks.items() if getattr(task, "OUTPUT_TYPE", None) in SCORING_TYPES)
    if not scoring:
        return
    from lm_eval.models.openai_completions import LocalChatCompletion

    names = ", ".join(scoring)
    url = redact_url(str(model.base_url or ""))
    advice = (
        "run them with --model local-completions against a server whose completions endpoint returns prompt "
        "log-probabilities (e.g. vLLM), with --model_args tokenizer=<local tokenizer folder>, or in-process "
        "(--model hf); see docs/RUNNING.md, 'Evaluating a served model'"
    )
    if isinstance(model, LocalChatCompletion):
        fail(f"{names}: log-likelihood tasks, which a chat-completions endpoint ({url}) cannot score: {advice}")
    if model.tokenizer is None:
        fail(f"{names}: log-likelihood tasks need the model's tokenizer: pass --model_args tokenizer=<folder>")
    ok, found = _prompt_logprobs(model)
    if not ok:
        fail(f"{names}: log-likelihood tasks need prompt log-probabilities, and {url}: {found}: {advice}")


def install(module: ModuleType) -> None:
    """lm_eval's API models: a generation request that fails after the retries, or whose content is null, gives an
    ``Unanswered`` empty text (counted per task) instead of ending the run; a log-likelihood request that fails after
    them ends the run in one line."""
    cls = module.TemplateAPI
    if not isinstance(module.LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER, Unanswered):
        module.LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER = placeholder(module.LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER)
    wrap(cls, "model_call", lambda original: retrying(original, asynchronous=False))
    wrap(cls, "amodel_call", lambda original: retrying(original, asynchronous=True))
    wrap(cls, "generate_until", counting_wrapper)
    wrap(cls, "_loglikelihood_tokens", scoring_wrapper)


#: the classes of ``openai_completions`` that build their own request (``local-completions``,
#: ``local-chat-completions``, ``openai-chat-completions``; the others inherit one of these)
PAYLOAD_CLASSES = ("LocalCompletionsAPI", "LocalChatCompletion", "OpenAIChatCompletion")
#: the classes of ``openai_completions`` that read their own answers
PARSING_CLASSES = ("LocalCompletionsAPI", "LocalChatCompletion")


def install_openai_completions(module: ModuleType) -> None:
    """lm_eval's OpenAI-compatible backends: no empty ``stop``, a seed per repeat, a prefill continued where the server
    can (:data:`PAYLOAD_CLASSES`), the text cut at the stop strings (:data:`PARSING_CLASSES`), every completions answer from the model the first one
    named (``LocalCompletionsAPI.parse_logprobs``)."""
    for name in PAYLOAD_CLASSES:
        wrap(getattr(module, name), "_create_payload", payload_wrapper)
    for name in PARSING_CLASSES:
        wrap(getattr(module, name), "parse_generations", parse_wrapper)
    wrap(module.LocalCompletionsAPI, "parse_logprobs", logprobs_wrapper)
