"""The plugin's view of lm_eval's served backends (``TemplateAPI``: ``local-completions``, ``local-chat-completions``,
``openai-completions``, ``openai-chat-completions``, Azure's, and lm_eval's other API models): what the plugin's tasks
need of them that lm_eval 0.4.13 does not do (:mod:`lm_eval_stereo.models.view` says how a view is made; lm_eval's own
tasks never reach it: their requests, stop strings, seeds, failures and answers are lm_eval's).

Every API model (:class:`ServedMixin`):

- a generation request that failed after lm_eval's ``max_retries`` (HTTP error, timeout, connection refused) gives an
  :class:`~lm_eval_stereo.core.unanswered.Unanswered` empty text instead of ending the run (:meth:`~ServedMixin.model_call`,
  :meth:`~ServedMixin.amodel_call`): the task scores it as the empty output it is (undetermined or empty, by its own
  rules), ``--use_cache`` never stores it (a resumed run asks again), and the results count it per task
  (``unanswered``, :mod:`lm_eval_stereo.core.unanswered`);
- a log-likelihood request that failed after the retries ends the run in one line naming the endpoint, what was
  answered kept by ``--use_cache`` for the resumed run; an answer that is no log-likelihood answer ends it in one line
  naming what is wrong (:meth:`~ServedMixin._loglikelihood_tokens`);
- a prompt ending in a prefilled assistant turn the server cannot continue is said once per task
  (:meth:`~ServedMixin.generate_until`).

The OpenAI-compatible ones (:class:`CompletionsMixin`, :class:`ChatMixin`), besides:

- the request (:meth:`~OpenAIMixin._create_payload`): a task that stops at end-of-sequence only (``until: []``) sends
  no ``stop`` field instead of lm_eval's ``"stop": []``, which servers reject (``transformers serve``: HTTP 500); the
  k-th identical sampled request of a run (``repeats``) carries ``seed + k``
  (:class:`lm_eval_stereo.core.seeds.RepeatSeeds`), so a server that honours ``seed`` returns k different samples,
  and the same ones when the run is repeated with the same ``seed`` (``--model_args seed=``, lm_eval's default
  1234); a chat whose last message is a prefilled assistant turn (lm_eval's ``gen_prefix``: GerBBQ+'s
  ``"\\nAntwort:\\n"``) is continued where the server can (:func:`continues_final_message`: vLLM's
  ``continue_final_message``);
- the answer (:meth:`~OpenAIMixin.parse_generations`): text after a stop string is cut, as lm_eval's in-process backends
  cut it (the OpenAI API leaves the stop string out; ``transformers serve`` returns it); a null content (a refusal, a
  content filter) and an answer without choices are :class:`~lm_eval_stereo.core.unanswered.Unanswered` (lm_eval's
  placeholder text, counted); a text cut at the token limit is marked
  (:func:`lm_eval_stereo.core.served_answers.mark_cut`, counted as ``cut_answers``); an answer naming another
  ``model`` than the endpoint's first answer did, or than the one asked for, ends the run in one line naming both
  (:func:`check_answering_model`);
- ``local-completions``' log-likelihood answers (:meth:`CompletionsMixin.parse_logprobs`): checked to hold a finite
  log-probability of every token sent and of the generated one
  (:func:`lm_eval_stereo.core.served_answers.check_logprobs`).

``local-completions-prefix`` (:class:`lm_eval_stereo.models.served_prefix.LocalCompletionsPrefix`) includes
:class:`CompletionsMixin` in its class.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections import Counter
from typing import Any, ClassVar

from lm_eval_stereo.core.credentials import redact_url
from lm_eval_stereo.core.errors import fail
from lm_eval_stereo.core.seeds import RepeatSeeds
from lm_eval_stereo.core.served_answers import (
    AnsweringModelError,
    ServedAnswerError,
    check_logprobs,
    choices_of,
    is_asked_model,
    mark_cut,
)
from lm_eval_stereo.core.unanswered import UNANSWERED, Unanswered, count_unanswered
from lm_eval_stereo.models.view import PluginMixin

#: lm_eval's logger of its API models (its retries, its warnings), which the plugin's lines join
eval_logger = logging.getLogger("lm_eval.models.api_models")
#: the attribute of a served model that holds the ``model`` its endpoint's first answer named
ANSWERING_MODEL = "_lm_eval_stereo_answering_model"
#: the attribute of a served model that holds the stop strings of the generation request being sent
STOP_STRINGS = "_lm_eval_stereo_stop"
#: the attribute of a served model that holds the seeds of its sampled repeats
SEEDS = "_lm_eval_stereo_seeds"
#: the attribute of a served model that says whether its chat server continues a prefilled assistant turn
CONTINUES = "_lm_eval_stereo_continues"


class Failed(dict):
    """What :meth:`ServedMixin.model_call` returns for a generation request that failed after every retry: how many
    prompts it held (:meth:`OpenAIMixin.parse_generations` answers each with an unanswered text)."""


def placeholder() -> Unanswered:
    """lm_eval's text for a request with no answer (``LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER``, empty unless set in the
    environment), as :class:`~lm_eval_stereo.core.unanswered.Unanswered`."""
    from lm_eval.models.api_models import LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER

    return Unanswered(LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER)


def _pause(attempt: int) -> float:
    """lm_eval's backoff between tries (exponential, at most 10 s)."""
    return min(2.0**attempt, 10.0)


def _within(exc: BaseException | None, kind: type[BaseException]) -> BaseException | None:
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


def _url(model: Any) -> str:
    return redact_url(str(getattr(model, "base_url", "") or ""))


def ends_in_assistant_turn(messages: Any) -> bool:
    """Whether a chat request's last message is the assistant's (a prefill, lm_eval's ``gen_prefix``)."""
    return (
        isinstance(messages, list)
        and bool(messages)
        and isinstance(messages[-1], dict)
        and messages[-1].get("role") == "assistant"
    )


def continues_final_message(model: Any) -> bool:
    """Whether ``model``'s chat server continues a prefilled assistant turn: vLLM's chat API does with
    ``continue_final_message: true, add_generation_prompt: false``; a server that rejects unknown fields
    (``transformers serve``) or ignores them does not, and gets neither. Asked once per model: ``GET /v1/models``
    names vLLM as the owner of its models."""
    cached = model.__dict__.get(CONTINUES)
    if cached is None:
        import requests

        url = str(model.base_url or "").rsplit("/chat/completions", 1)[0] + "/models"
        try:
            response = requests.get(url, headers=model.header, verify=model.verify_certificate, timeout=10)
            owners = {entry.get("owned_by") for entry in response.json().get("data", [])}
        except (requests.RequestException, ValueError, AttributeError):
            owners = set()
        cached = model.__dict__[CONTINUES] = "vllm" in owners
    return cached


def _chat_messages(context: Any) -> Any:
    """The messages of a chat request's context (lm_eval's ``JsonChatStr``: the messages as JSON)."""
    try:
        return json.loads(getattr(context, "prompt", context))
    except (TypeError, ValueError):
        return None


def cut_at_stops(text: str, stops: list[str]) -> str:
    """``text`` up to the first occurrence of any stop string, as lm_eval's in-process backends cut it; a text the cut
    leaves whole keeps its type (a :class:`~lm_eval_stereo.core.unanswered.CutText` stays marked; one cut at a stop
    string is complete)."""
    kept = text
    for stop in stops:
        kept = kept.split(stop)[0]
    return text if kept == text else kept


def check_answering_model(lm: Any, outputs: Any) -> None:
    """Raise :class:`~lm_eval_stereo.core.served_answers.AnsweringModelError` (the run ends in its line) when an answer
    names another ``model`` than the endpoint's first answer did (two models behind one endpoint: a load balancer
    before replicas that do not all serve the same model would mix their numbers into one result), or than the one
    asked for (``--model_args model=``; a version a server appends allowed:
    :func:`lm_eval_stereo.core.served_answers.is_asked_model`). Checked before the answer is used or cached, so
    ``--use_cache`` holds the asked model's answers only."""
    for answer in outputs if isinstance(outputs, list) else [outputs]:
        named = answer.get("model") if isinstance(answer, dict) else None
        if not isinstance(named, str):
            continue
        first = lm.__dict__.setdefault(ANSWERING_MODEL, named)
        if named != first:
            problem = (
                f"{_url(lm)} answered as two models, {first!r} and then {named!r}: every replica behind one endpoint "
                "must serve the same model; no results written"
            )
        elif not is_asked_model(lm.model, named):
            problem = (
                f"{_url(lm)} answered as the model {named!r}, not the {lm.model!r} asked for (--model_args model=): "
                "its answers are not that model's; no results written"
            )
        else:
            continue
        # the other requests in flight are cancelled as the run ends: lm_eval would log each as "retrying"
        eval_logger.disabled = True
        raise AnsweringModelError(problem)


class ServedMixin(PluginMixin):
    """lm_eval's ``TemplateAPI`` for the plugin's tasks: failed generation requests unanswered and counted, failed
    log-likelihood requests one line, a prefill the server cannot continue said once per task."""

    OVERRIDES: ClassVar[dict[str, str]] = {
        "model_call": "messages, *, generate, gen_kwargs, **kwargs",
        "amodel_call": "session, sem, messages, *, generate, cache_keys, ctxlens, gen_kwargs, **kwargs",
        "generate_until": "requests, disable_tqdm",
        "_loglikelihood_tokens": "requests, **kwargs",
    }
    LOSES: ClassVar[str] = (
        "failed generation requests counted as unanswered (lm_eval ends the run), failed log-likelihood requests "
        "named in one line, the answering model checked"
    )

    def _failed(self, exc: BaseException) -> None:
        eval_logger.warning(
            f"lm-eval-stereo: request to {_url(self)} failed after {self.max_retries} tries "
            f"({type(exc).__name__}: {exc}); counted as {UNANSWERED}"
        )

    def model_call(self, messages: Any, *, generate: bool = True, gen_kwargs: dict | None = None, **kwargs: Any) -> Any:
        """lm_eval's request; a generation request is tried ``max_retries`` times (lm_eval's backoff) and then
        answered :class:`Failed` instead of raising."""
        call = super().model_call  # type: ignore[misc]
        if not generate:
            return call(messages, generate=generate, gen_kwargs=gen_kwargs, **kwargs)
        error: BaseException | None = None
        for attempt in range(max(int(self.max_retries), 1)):
            try:
                return call(messages, generate=generate, gen_kwargs=gen_kwargs, **kwargs)
            except Exception as exc:  # noqa: BLE001 - any failure of the request is counted, not raised
                error = exc
                if attempt + 1 < self.max_retries:
                    time.sleep(_pause(attempt))
        self._failed(error)  # type: ignore[arg-type]
        return Failed(prompts=len(messages) if isinstance(messages, (list, tuple)) else 1)

    async def amodel_call(
        self,
        session: Any,
        sem: Any,
        messages: Any,
        *,
        generate: bool = True,
        cache_keys: list | None = None,
        ctxlens: list[int] | None = None,
        gen_kwargs: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        """lm_eval's concurrent request; a generation request is tried ``max_retries`` times and then answered with
        one :class:`~lm_eval_stereo.core.unanswered.Unanswered` text per prompt."""
        call = super().amodel_call  # type: ignore[misc]
        arguments = {"generate": generate, "cache_keys": cache_keys, "ctxlens": ctxlens, "gen_kwargs": gen_kwargs}
        if not generate:
            return await call(session, sem, messages, **arguments, **kwargs)
        error: BaseException | None = None
        for attempt in range(max(int(self.max_retries), 1)):
            try:
                return await call(session, sem, messages, **arguments, **kwargs)
            except ServedAnswerError:
                raise  # an answer from another model: not a request to ask again
            except Exception as exc:  # noqa: BLE001 - any failure of the request is counted, not raised
                error = exc
                if attempt + 1 < self.max_retries:
                    await asyncio.sleep(_pause(attempt))
        self._failed(error)  # type: ignore[arg-type]
        return [placeholder() for _ in messages]

    def generate_until(self, requests: list, disable_tqdm: bool = False) -> list[str]:
        """lm_eval's generation, counting per task the requests that gave no text, saying once per task how many
        prompts end in a prefilled assistant turn the server cannot continue, and ending the run in one line at an
        answer from another model (:func:`check_answering_model`)."""
        closed = Counter(
            getattr(request, "task_name", None)
            for request in requests
            if ends_in_assistant_turn(_chat_messages(request.args[0])) and not continues_final_message(self)
        )
        for task, count in closed.items():
            eval_logger.warning(
                f"lm-eval-stereo: {task}: {count} prompts end in a prefilled assistant turn that {_url(self)} cannot "
                "continue (no continue_final_message): the model answers in a turn of its own after it"
            )
        try:
            texts = super().generate_until(requests, disable_tqdm=disable_tqdm)  # type: ignore[misc]
        except AnsweringModelError as exc:
            close_progress_bars()
            fail(str(exc))
        count_unanswered(self, requests, texts)
        return texts

    def _loglikelihood_tokens(self, requests: list, **kwargs: Any) -> list[tuple[float, bool]]:
        """lm_eval's scoring; a request that failed after lm_eval's ``max_retries`` ends the run in one line (exit
        status 2) naming the endpoint and how to resume: a log-likelihood has no stand-in that is not a score, so the
        run stops instead of scoring; what was answered stays in ``--use_cache``'s database, and the same command
        sends only the rest. An answer that is no log-likelihood answer
        (:class:`~lm_eval_stereo.core.served_answers.ServedAnswerError`) ends it in one line naming what is wrong."""
        try:
            return super()._loglikelihood_tokens(requests, **kwargs)  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - requests, aiohttp and tenacity errors alike
            close_progress_bars()
            unreadable = _within(exc, ServedAnswerError)
            if isinstance(unreadable, AnsweringModelError):
                fail(str(unreadable))
            if unreadable is not None:
                fail(
                    f"{_url(self)} gave an answer to a log-likelihood request that is not one: {unreadable}; no "
                    "results written"
                )
            while exc.__cause__ is not None and not str(exc):
                exc = exc.__cause__
            text = " ".join(str(exc).split())
            reason = type(exc).__name__ + (f": {text[:100].rsplit(' ', 1)[0]} ..." if len(text) > 100 else f": {text}")
            fail(
                f"log-likelihood requests to {_url(self)} failed after {self.max_retries} tries ({reason}); no "
                "results written. With --use_cache the answered ones are kept: the same command sends only the rest"
            )


class OpenAIMixin(ServedMixin):
    """lm_eval's OpenAI-compatible backends for the plugin's tasks: requests servers accept, with a seed per sampled
    repeat and a prefill continued where the server can; answers cut at the stop strings, marked where cut at the
    token limit, unanswered where empty, from the model asked for."""

    OVERRIDES: ClassVar[dict[str, str]] = {
        "_create_payload": "messages, generate, gen_kwargs, seed, eos, **kwargs",
        "parse_generations": "outputs, **kwargs",
    }
    LOSES: ClassVar[str] = (
        "the text cut at the stop strings, a seed per sampled repeat, no empty stop field, failed requests counted as "
        "unanswered (lm_eval ends the run), cut answers counted, the answering model checked"
    )

    def _create_payload(
        self,
        messages: Any,
        generate: bool = False,
        gen_kwargs: dict | None = None,
        seed: int = 1234,
        eos: str | None = None,
        **kwargs: Any,
    ) -> dict:
        """lm_eval's payload with no empty ``stop``, ``seed + k`` for the k-th identical sampled request, a prefilled
        assistant turn continued where the server can; the stop strings kept for :meth:`parse_generations`."""
        if generate and (gen_kwargs or {}).get("do_sample"):
            seeds = self.__dict__.setdefault(SEEDS, RepeatSeeds())
            seed = seeds.next_seed(int(seed), messages, dict(gen_kwargs or {}))
        payload = super()._create_payload(  # type: ignore[misc]
            messages, generate=generate, gen_kwargs=gen_kwargs, seed=seed, eos=eos, **kwargs
        )
        if generate and isinstance(payload, dict):
            if ends_in_assistant_turn(payload.get("messages")) and continues_final_message(self):
                payload.update(continue_final_message=True, add_generation_prompt=False)
            if not payload.get("stop"):
                payload.pop("stop", None)
            self.__dict__[STOP_STRINGS] = [term for term in payload.get("stop") or [] if term]
        return payload

    def parse_generations(self, outputs: Any, **kwargs: Any) -> list:
        """lm_eval's reading of the answers: an unanswered text per prompt of a failed request (:class:`Failed`) and
        for an answer without choices (lm_eval would lose the request and end in a ``zip()`` error) or a null content;
        the model that answered checked (:func:`check_answering_model`); texts cut at the token limit marked and cut at
        the request's stop strings."""
        if isinstance(outputs, Failed):
            return [placeholder() for _ in range(int(outputs.get("prompts", 1)))]
        check_answering_model(self, outputs)
        answers = outputs if isinstance(outputs, list) else [outputs]
        texts: list = []
        for answer in answers:
            choices = choices_of(answer)
            if choices is None:
                prompts = len(kwargs.get("contexts") or [None]) if len(answers) == 1 else 1
                eval_logger.warning(f"lm-eval-stereo: {_url(self)} answered with no choices: counted as {UNANSWERED}")
                texts += [placeholder() for _ in range(prompts)]
                continue
            texts += mark_cut(super().parse_generations(outputs=answer, **kwargs), choices)  # type: ignore[misc]
        stops = self.__dict__.get(STOP_STRINGS, [])
        return [self._text(text, stops) for text in texts]

    @staticmethod
    def _text(text: str | None, stops: list[str]) -> str:
        """One read text as the plugin's tasks get it: a null content unanswered, the rest cut at ``stops``."""
        if text is None:
            return placeholder()
        return text if isinstance(text, Unanswered) else cut_at_stops(text, stops)


class ChatMixin(OpenAIMixin):
    """``local-chat-completions`` (and ``openai-chat-completions``, Azure's) for the plugin's tasks."""


class CompletionsMixin(OpenAIMixin):
    """``local-completions`` (and ``openai-completions``) for the plugin's tasks: besides, every log-likelihood answer
    checked before it is a score."""

    OVERRIDES: ClassVar[dict[str, str]] = {"parse_logprobs": "outputs, tokens, ctxlens, **kwargs"}

    def parse_logprobs(self, outputs: Any, tokens: Any = None, ctxlens: Any = None, **kwargs: Any) -> list:
        """lm_eval's reading of a log-likelihood answer, after checking which model answered
        (:func:`check_answering_model`) and that it holds a finite log-probability of every token sent and of the
        generated one (:func:`lm_eval_stereo.core.served_answers.check_logprobs`); an answer lm_eval cannot read is a
        :class:`~lm_eval_stereo.core.served_answers.ServedAnswerError` too, which
        :meth:`ServedMixin._loglikelihood_tokens` names."""
        check_answering_model(self, outputs)
        check_logprobs(outputs, tokens or [], ctxlens or [])
        try:
            return super().parse_logprobs(outputs=outputs, tokens=tokens, ctxlens=ctxlens, **kwargs)  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - whatever lm_eval's reading raises, the answer is what is wrong
            raise ServedAnswerError(f"lm_eval could not read it ({type(exc).__name__}: {exc})") from exc
