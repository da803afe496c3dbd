"""``lm_eval.api.model`` (its base ``LM``): lm_eval 0.4.13 runs every request type of a task by calling
``getattr(lm, request_type)(instances)``, so a masked-LM task (:mod:`lm_eval_stereo.core.masked_requests`) run on a
model that cannot serve it (``--model hf``) ends in ``AttributeError: 'HFLM' object has no attribute 'masked_span'``
after the model has loaded. ``LM`` gets a method per masked-LM request type (:data:`MASKED_REQUEST_TYPES`) that stops
the run with one line naming the tasks and ``--model hf-mlm``; the backends that serve them (``hf-mlm``) define their
own. The same module's ``CachingLM`` is changed by :mod:`lm_eval_stereo.hooks.answer_cache`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

#: request types only masked-LM backends serve (see :mod:`lm_eval_stereo.core.masked_requests`)
MASKED_REQUEST_TYPES = ("masked_span", "masked_fill", "next_sentence", "shared_tokens", "masked_sensitivity")


def _unsupported_request(request_type: str) -> Any:
    def method(self: Any, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        tasks = sorted({str(req.task_name) for req in requests if getattr(req, "task_name", None)})
        raise NotImplementedError(
            f"task(s) {', '.join(tasks) or '?'} make '{request_type}' requests (masked-LM scoring), which "
            f"{type(self).__name__} cannot serve: run them with --model hf-mlm --model_args pretrained=<masked LM>"
        )

    method.__name__ = request_type
    method.__doc__ = f"Default ``{request_type}``: only masked-LM backends (``--model hf-mlm``) implement it."
    return method


def install(module: ModuleType) -> None:
    """Give lm_eval's base ``LM`` a clear-error method for each masked-LM request type it lacks."""
    for request_type in MASKED_REQUEST_TYPES:
        if not hasattr(module.LM, request_type):
            setattr(module.LM, request_type, _unsupported_request(request_type))
