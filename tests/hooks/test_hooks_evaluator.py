"""``hooks/evaluator.py``: ``evaluate`` hands lm_eval the run's ``lm`` untouched where the run holds none of the plugin's
tasks, and a router to the plugin's view where it does, with the plugin's counts written for the plugin's tasks only;
``simple_evaluate`` keeps credentials out of the results, tells the plugin's tasks the model arguments, shuts down the
engines it started and ends in one line for a model that cannot load."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from lm_eval.api.model import LM

from lm_eval_stereo import _autoload
from lm_eval_stereo.core import engines, model_arguments
from lm_eval_stereo.core.credentials import REDACTED
from lm_eval_stereo.core.summary import SummaryTask
from lm_eval_stereo.hooks.evaluator import check_causal, evaluate_wrapper, simple_evaluate_wrapper
from lm_eval_stereo.models.router import PluginRouter

KEY = "sk-evaluator-9a1b"


def _signature(name: str) -> str:
    (hook,) = [hook for hook in _autoload.HOOKS if hook.target == f"lm_eval.evaluator.{name}"]
    return ", ".join(f"{parameter}=None" for parameter in hook.signature.split(", "))


def stock(name: str, body: str, scope: dict) -> object:
    """lm_eval 0.4.13's ``name`` (its parameters, each defaulting to None) running ``body``."""
    exec(f"def {name}({_signature(name)}):\n    {body}", scope)
    return scope[name]


class Backend(LM):
    """A backend that counts unanswered requests (as ``replay`` does) and answers nothing itself."""

    COUNTS_UNANSWERED = True

    def loglikelihood(self, requests, disable_tqdm=False):
        return []

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        return []

    def generate_until(self, requests, disable_tqdm=False):
        return []


class PluginTask(SummaryTask):
    """A task of the plugin's task class (never built: only its kind matters here)."""


class LmEvalTask:
    """A task of lm_eval's own (never built)."""


def task(kind: type, output_type: str = "generate_until") -> object:
    made = object.__new__(kind)
    made.OUTPUT_TYPE = output_type
    return made


def run_evaluate(tasks: dict) -> tuple[object, dict, Backend]:
    """``evaluate`` hooked, on ``tasks``: what lm_eval's received as ``lm``, and the results."""
    received = {}

    def record(lm, task_dict):
        received["lm"] = lm
        return {"results": {name: {"acc,none": 0.5} for name in task_dict["tasks"]}}

    evaluate = evaluate_wrapper(stock("evaluate", "return record(lm, task_dict)", {"record": record}))
    backend = Backend()
    results = evaluate(backend, {"tasks": tasks}, limit=2)
    return received["lm"], results, backend


def test_a_run_without_the_plugin_s_tasks_is_lm_eval_s():
    received, results, backend = run_evaluate({"local_task": task(LmEvalTask), "bbq": task(LmEvalTask)})
    assert received is backend
    assert results == {"results": {"local_task": {"acc,none": 0.5}, "bbq": {"acc,none": 0.5}}}


def test_a_run_with_the_plugin_s_tasks_routes_them_and_counts_theirs_only():
    received, results, backend = run_evaluate({"local_task": task(LmEvalTask), "gerbbq_amb": task(PluginTask)})
    assert isinstance(received, PluginRouter) and received.lm is backend
    assert received.plugin_tasks == frozenset({"gerbbq_amb"})
    assert results["results"]["gerbbq_amb"] == {"acc,none": 0.5, "unanswered,none": 0}
    assert results["results"]["local_task"] == {"acc,none": 0.5}


def test_an_encoder_only_model_loaded_as_a_causal_lm_stops_in_one_line(capsys):
    def loaded(model_type: str) -> SimpleNamespace:
        config = SimpleNamespace(model_type=model_type, is_decoder=False, name_or_path="tiny")
        backend = SimpleNamespace(_model=SimpleNamespace(config=config))
        backend.AUTO_MODEL_CLASS = SimpleNamespace(__name__="AutoModelForCausalLM")
        return backend

    check_causal(loaded("gpt2"))
    with pytest.raises(SystemExit):
        check_causal(loaded("bert"))
    assert capsys.readouterr().err.startswith("lm-eval-stereo: tiny is an encoder-only bert model: ")


def results_with(model_args: str) -> dict:
    return {"config": {"model_args": model_args}, "configs": {"t": {"metadata": {"api_key": KEY, "seed": 1}}}}


def test_results_carry_no_credentials_and_the_plugin_s_tasks_know_the_model_arguments():
    held = []

    def run(model, model_args):
        held.append(model_arguments.given())
        return results_with(model_args)

    simple_evaluate = simple_evaluate_wrapper(stock("simple_evaluate", "return run(model, model_args)", {"run": run}))
    results = simple_evaluate(model="hf", model_args=f"pretrained=x,api_key={KEY}")
    assert results == {
        "config": {"model_args": f"pretrained=x,api_key={REDACTED}"},
        "configs": {"t": {"metadata": {"api_key": REDACTED, "seed": 1}}},
    }
    simple_evaluate(model=Backend(), model_args="pretrained=x")  # a model object: its arguments stay unknown
    assert held == [{"pretrained": "x", "api_key": KEY}, None]


def test_a_model_that_cannot_load_ends_in_one_line_where_simple_evaluate_built_it(capsys):
    def run(model, model_args):
        raise ValueError("Unrecognized configuration class <BertConfig> for this kind of AutoModel\nModel type ...")

    simple_evaluate = simple_evaluate_wrapper(stock("simple_evaluate", "return run(model, model_args)", {"run": run}))
    with pytest.raises(SystemExit):
        simple_evaluate("hf", "pretrained=/models/bert")
    line = capsys.readouterr().err
    assert (
        line.startswith(
            "lm-eval-stereo: --model hf: pretrained=/models/bert: Unrecognized configuration class <BertConfig> for this "
            "kind of AutoModel; the plugin's log-likelihood tasks need a causal (decoder) LM"
        )
        and line.count("\n") == 1
    )
    with pytest.raises(ValueError, match="Unrecognized"):  # the caller's own model object: its error as it is
        simple_evaluate(Backend(), None)


class Engine:
    """A vLLM engine core that counts its shutdowns."""

    def __init__(self) -> None:
        self.shutdowns = 0

    def shutdown(self) -> None:
        self.shutdowns += 1


def vllm_backend() -> Backend:
    backend = Backend()
    backend.model = SimpleNamespace(llm_engine=SimpleNamespace(engine_core=Engine()))
    return backend


def test_the_engines_a_run_started_are_shut_down_when_it_returns_or_raises():
    """``evaluate`` records the backend it is given; ``simple_evaluate`` that built the model shuts it down when it
    returns, and, where the run ended before ``evaluate`` (a task that could not be built), finds its model in its
    own frame; a caller's model object is left to the caller."""
    built = []

    def build(model):
        lm = vllm_backend() if isinstance(model, str) else model
        built.append(lm)
        return lm

    def run(lm, model):
        if model == "fails":
            raise RuntimeError("a task that could not be built")
        evaluate_wrapper(stock("evaluate", "return {}", {}))(lm, {"tasks": {}})
        return {}

    scope = {"build": build, "run": run}
    exec(  # lm_eval's simple_evaluate holds the model it built in its local ``lm``
        f"def simple_evaluate({_signature('simple_evaluate')}):\n    lm = build(model)\n    return run(lm, model)\n",
        scope,
    )
    simple_evaluate = simple_evaluate_wrapper(scope["simple_evaluate"])
    simple_evaluate("vllm")
    with pytest.raises(RuntimeError):
        simple_evaluate("fails")
    own = vllm_backend()
    with engines.shut_down_engines_started_within():
        simple_evaluate(own)
        assert own.model.llm_engine.engine_core.shutdowns == 0
    assert built[2] is own and [lm.model.llm_engine.engine_core.shutdowns for lm in built] == [1, 1, 1]
