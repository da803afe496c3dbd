"""Custom request types for masked-LM tasks (``masked_span``, ``next_sentence``, ``shared_tokens``,
``masked_sensitivity``) and the task class that makes them.

lm-eval 0.4.13 runs every request type by calling ``getattr(lm, request_type)(instances)``, so a task may emit request
types that only ``--model hf-mlm`` (:class:`lm_eval_stereo.models.masked_lm.HFMaskedLM`) serves:

- ``masked_span``: arguments ``(left, span, right, mode)``, mode ``"l2r"``, ``"all"`` or ``"l2r_single"``;
  response ``list[float]``, the natural-log probability of each sub-token of ``span``.
- ``masked_fill``: arguments ``(text, target)``, the text holding the model's mask token; response ``float``, the
  natural-log probability of token id ``target`` at the first mask of ``text``.
- ``next_sentence``: arguments ``(first, second)``; response ``float``, natural log P(IsNext).
- ``shared_tokens``: arguments ``(more, less)``, two sentences; response a dict: ``gold`` (token ids of the shared
  tokens, :func:`lm_eval_stereo.core.alignment.shared_positions` over both sentences encoded with special tokens),
  per sentence ``prob_<side>`` (full-vocabulary softmax probability of the gold token with it masked alone),
  ``logprob_<side>`` (its natural log-softmax) and ``hit_<side>`` (gold token = arg-max), ``side`` in more/less;
  ``tokens`` (length of the longer encoding) and ``overlength`` (longer than the model's window: not scored, the
  lists are empty).
- ``masked_sensitivity``: arguments ``(left, trait, right, separator)``; response ``list[float]``, the SeT score of each
  sub-token of ``trait`` (:mod:`lm_eval_stereo.models.sensitivity`, BERT-family heads).
- ``loglikelihood`` / ``loglikelihood_rolling`` work too (pseudo-log-likelihoods with ``hf-mlm``).

A :class:`MaskedLMTask` subclass implements :meth:`MaskedLMTask.doc_to_requests` (doc → ``[(request_type,
arguments), ...]``); ``item`` receives the responses in that order. On a model that cannot serve them (e.g. ``--model
hf``) the run stops at them in one line naming ``--model hf-mlm`` (:class:`lm_eval_stereo.models.router.PluginRouter`).
"""

from __future__ import annotations

from typing import Any

from lm_eval.api.instance import Instance

from lm_eval_stereo.core.summary import SummaryTask, instance_kwargs

#: the request types only masked-LM backends serve
MASKED_REQUEST_TYPES = ("masked_span", "masked_fill", "next_sentence", "shared_tokens", "masked_sensitivity")

Requests = list[tuple[str, tuple[Any, ...]]]


class MaskedLMTask(SummaryTask):
    """A plugin task whose documents each make a list of (request_type, arguments) requests."""

    def doc_to_requests(self, doc: dict[str, Any]) -> Requests:
        """The (request_type, arguments) pairs of one document."""
        raise NotImplementedError

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        kwargs = instance_kwargs(kwargs)
        return [
            Instance(request_type=request_type, doc=doc, arguments=tuple(arguments), idx=i, **kwargs)
            for i, (request_type, arguments) in enumerate(self.doc_to_requests(doc))
        ]
