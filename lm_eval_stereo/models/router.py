"""The run's backend as lm_eval's ``evaluate`` sees it when the run holds the plugin's tasks: each request to the
backend lm_eval's task made it for, or to the plugin's view of it (:mod:`lm_eval_stereo.models.view`) where a task of
the plugin made it.

lm_eval 0.4.13 runs every request type of a run in one call, ``getattr(lm, request_type)(instances)``, the instances of
all its tasks together. :class:`PluginRouter` wraps the run's ``lm`` as lm_eval's own ``CachingLM`` does (every other
attribute forwarded: rank, world size, device, chat template, tokenizer name, model info, the gathers): for each
request type it splits the instances by their ``task_name`` into lm_eval's tasks' and the plugin's (:func:`is_plugin_task`
names the latter); lm_eval's go first, to the backend exactly as given, so they see what a stock run of those tasks
would (the same set, in the same order, with the same random state); the plugin's go to the view; the answers are
put back in the instances' order. A request type only the plugin's tasks make (the masked-LM ones) goes to the view,
or, where it cannot serve them, stops the run in one line naming ``--model hf-mlm``.

``--use_cache``: ``lm`` is then lm_eval's ``CachingLM``; the plugin's half goes through a ``CachingLM`` of the same
database (:class:`ViewCache`) whose model is the view, its answers kept under keys of their own
(:data:`lm_eval_stereo.core.answer_record.PLUGIN_KEYS`): the view's answer to a request may differ from lm_eval's to
the same request (a text cut at a stop string, a score marked as cut), and neither is served for the other.

Data parallel (``accelerate launch``, ``world_size > 1``): lm_eval's ``hf`` gathers across ranks inside a call (the
batch size, the rolling windows' padding), so every rank must make the same calls. The ranks agree on the halves'
sizes (one gather per request type); a rank whose half is empty where another rank's is not sends that half one
request of its other half as padding, whose answer is dropped.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from lm_eval.api.model import CacheHook, CachingLM

from lm_eval_stereo.core.answer_record import PLUGIN_KEYS, AnswerCache
from lm_eval_stereo.core.errors import fail
from lm_eval_stereo.core.masked_requests import MASKED_REQUEST_TYPES
from lm_eval_stereo.models.view import view_of

#: the request types of lm_eval 0.4.13's backends, split between lm_eval's tasks and the plugin's
SPLIT_TYPES = ("loglikelihood", "loglikelihood_rolling", "generate_until")


def is_plugin_task(task: Any) -> bool:
    """Whether ``task`` is one of the plugin's: built from its task class
    (:class:`lm_eval_stereo.core.summary.SummaryTask`, which every task YAML of the plugin names, and every task of a
    benchmark built on it)."""
    from lm_eval_stereo.core.summary import SummaryTask

    return isinstance(task, SummaryTask)


def backend_of(lm: Any) -> Any:
    """The backend inside ``--use_cache``'s ``CachingLM``, else ``lm`` itself."""
    return lm.lm if isinstance(lm, CachingLM) else lm


class ViewCache(CachingLM):
    """lm_eval's ``CachingLM`` of the run's database whose model is the plugin's view: the database opened (and its
    record checked) by the run's own ``CachingLM``, read and written under the plugin's keys."""

    def __init__(self, caching: CachingLM, view: Any) -> None:  # noqa: D107 - the database is the run's: not reopened
        store = caching.dbdict.store if isinstance(caching.dbdict, AnswerCache) else caching.dbdict
        self.lm = view
        self.cache_db = caching.cache_db
        self.dbdict = AnswerCache(store, served=getattr(view, "served_from_cache", None), prefix=PLUGIN_KEYS)


class PluginRouter:
    """The run's ``lm`` (a backend, or lm_eval's ``CachingLM`` of one) with each request sent for the task that made it:
    lm_eval's tasks' to ``lm``, the plugin's to its view (see the module docstring)."""

    def __init__(self, lm: Any, plugin_tasks: frozenset[str]) -> None:
        backend = backend_of(lm)
        view = view_of(backend)
        #: the run's lm as lm_eval would have used it
        self.lm = lm
        #: the names of the run's tasks that are the plugin's
        self.plugin_tasks = plugin_tasks
        #: where the plugin's requests go: the view (through a ViewCache of the run's database), or ``lm`` itself
        #: where the backend is its own view
        self.plugin_lm: Any = lm if view is backend else ViewCache(lm, view) if isinstance(lm, CachingLM) else view
        self._backend = backend
        self._hook = CacheHook(self.plugin_lm) if isinstance(self.plugin_lm, ViewCache) else None

    def __getattr__(self, name: str) -> Any:
        if name in MASKED_REQUEST_TYPES:
            if hasattr(self.plugin_lm, name):
                return getattr(self.plugin_lm, name)
            return functools.partial(self._unsupported, name)
        return getattr(self.lm, name)

    def loglikelihood(self, requests: list) -> list:
        return self._route("loglikelihood", requests)

    def loglikelihood_rolling(self, requests: list) -> list:
        return self._route("loglikelihood_rolling", requests)

    def generate_until(self, requests: list) -> list:
        return self._route("generate_until", requests)

    def _unsupported(self, request_type: str, requests: list) -> list:
        tasks = sorted({str(request.task_name) for request in requests if getattr(request, "task_name", None)})
        fail(
            f"task(s) {', '.join(tasks) or '?'} make '{request_type}' requests (masked-LM scoring), which "
            f"{type(self._backend).__name__} cannot serve: run them with --model hf-mlm --model_args "
            "pretrained=<masked LM>"
        )

    @contextlib.contextmanager
    def _plugin_cache_hook(self) -> Iterator[None]:
        """The backend's cache hook (which its methods hand each answer as it is scored) the view's database keys
        while the view answers (the view shares the backend's ``__dict__``, and so its hook)."""
        if self._hook is None:
            yield
            return
        own = self._backend.__dict__.get("cache_hook")
        self._backend.__dict__["cache_hook"] = self._hook
        try:
            yield
        finally:
            self._backend.__dict__["cache_hook"] = own

    def _send(self, request_type: str, requests: list, plugin: bool) -> list:
        if not plugin:
            return getattr(self.lm, request_type)(requests)
        with self._plugin_cache_hook():
            return getattr(self.plugin_lm, request_type)(requests)

    def _route(self, request_type: str, requests: list) -> list:
        """The answers of ``requests``, lm_eval's tasks' from ``lm``, the plugin's from the view, in their order."""
        if self.plugin_lm is self.lm:
            return getattr(self.lm, request_type)(requests)
        ours = [n for n, request in enumerate(requests) if getattr(request, "task_name", None) in self.plugin_tasks]
        mine = set(ours)
        theirs = [n for n in range(len(requests)) if n not in mine]
        halves = {False: [requests[n] for n in theirs], True: [requests[n] for n in ours]}
        padding = self._padding(halves)
        answers: list = [None] * len(requests)
        for plugin, positions in ((False, theirs), (True, ours)):
            sent = halves[plugin] + padding[plugin]
            if not sent:
                continue
            got = self._send(request_type, sent, plugin)
            for n, answer in zip(positions, got):
                answers[n] = answer
        return answers

    def _padding(self, halves: dict[bool, list]) -> dict[bool, list]:
        """Per half, the requests a data-parallel rank sends besides its own so that every rank makes the same calls:
        one of its other half where its own is empty and another rank's is not (its answer is dropped)."""
        padding: dict[bool, list] = {False: [], True: []}
        if getattr(self.lm, "world_size", 1) <= 1:
            return padding
        import torch

        sizes = torch.tensor([len(halves[False]), len(halves[True])], device=self.lm.device)
        gathered = self.lm.all_gather(sizes).reshape(-1, 2).max(dim=0).values.tolist()
        for plugin, most in zip((False, True), gathered):
            other = halves[not plugin]
            if most and not halves[plugin] and other:
                padding[plugin] = [other[0]]
        return padding
