"""Custom request types for masked-LM tasks (``masked_span``, ``next_sentence``) and the task class that makes them.

lm-eval 0.4.13 runs every request type by calling ``getattr(lm, request_type)(instances)``, so a task may emit request
types that only ``--model hf-mlm`` (:class:`lm_eval_stereo.models.masked_lm.HFMaskedLM`) serves:

- ``masked_span``: arguments ``(left, span, right, mode)``, mode ``"l2r"``, ``"all"`` or ``"l2r_single"``;
  response ``list[float]``, the natural-log probability of each sub-token of ``span``.
- ``next_sentence``: arguments ``(first, second)``; response ``float``, natural log P(IsNext).
- ``loglikelihood`` / ``loglikelihood_rolling`` work too (pseudo-log-likelihoods with ``hf-mlm``).

How to use :class:`MaskedLMTask` from a task YAML::

    class: !function lm_eval_stereo.harness.masked_requests.MaskedLMTask
    doc_to_requests: !function my_package.my_glue.doc_to_requests   # doc -> [(request_type, arguments), ...]
    output_type: loglikelihood          # any valid value; the requests come from doc_to_requests
    process_results: !function my_package.my_glue.process_results   # gets the responses in the same order

or subclass it in Python and override :meth:`MaskedLMTask.doc_to_requests`. Importing this module gives every
lm_eval model without these methods (e.g. ``--model hf``) a method that stops the run with a message naming
``--model hf-mlm``, before any masked request is scored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.model import LM
from lm_eval.api.task import ConfigurableTask

MASKED_REQUEST_TYPES = ("masked_span", "next_sentence")
#: ``masked_span`` modes, see :mod:`lm_eval_stereo.models.masked_lm`
SPAN_MODES = ("l2r", "all", "l2r_single")

Requests = list[tuple[str, tuple[Any, ...]]]


def _unsupported(request_type: str) -> Callable[..., list[Any]]:
    def method(self: LM, requests: list[Instance], disable_tqdm: bool = False) -> list[Any]:
        tasks = sorted({str(req.task_name) for req in requests if req.task_name})
        raise NotImplementedError(
            f"task(s) {', '.join(tasks) or '?'} make '{request_type}' requests (masked-LM scoring), which "
            f"{type(self).__name__} cannot serve: run them with --model hf-mlm --model_args pretrained=<masked LM>"
        )

    method.__name__ = request_type
    method.__doc__ = f"Default ``{request_type}``: only masked-LM backends (``--model hf-mlm``) implement it."
    return method


for _request_type in MASKED_REQUEST_TYPES:
    if not hasattr(LM, _request_type):
        setattr(LM, _request_type, _unsupported(_request_type))


class MaskedLMTask(ConfigurableTask):
    """A YAML task whose documents each make a list of (request_type, arguments) requests.

    The extra config key ``doc_to_requests`` (a function ``doc -> [(request_type, arguments), ...]``) says which;
    ``process_results(doc, responses)`` receives one response per request, in that order.
    """

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        config = dict(config or {})
        config.pop("class", None)
        self._doc_to_requests: Callable[[dict[str, Any]], Requests] | None = config.pop("doc_to_requests", None)
        super().__init__(config=config, **kwargs)

    def doc_to_requests(self, doc: dict[str, Any]) -> Requests:
        """The (request_type, arguments) pairs of one document."""
        if self._doc_to_requests is None:
            raise ValueError(f"task {self.config.task}: MaskedLMTask needs `doc_to_requests` in its config")
        return self._doc_to_requests(doc)

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        kwargs.pop("apply_chat_template", None)
        kwargs.pop("chat_template", None)
        return [
            Instance(request_type=request_type, doc=doc, arguments=tuple(arguments), idx=i, **kwargs)
            for i, (request_type, arguments) in enumerate(self.doc_to_requests(doc))
        ]
