"""``core/model_arguments.py`` on its own: the model arguments of the run being set up, held while its tasks are built
and gone after, in every form lm_eval takes them; read by the options parser, which accepts each of them. Through
``lm_eval``: ``tests/reliability/test_run_arguments_and_cache_files.py`` (a model argument on no list accepted, a misspelt option refused)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from lm_eval_stereo.core import model_arguments, options
from lm_eval_stereo.core.errors import OptionError
from lm_eval_stereo.tasks.stereoset_multi import task as stereoset_task


@pytest.mark.parametrize(
    "given",
    [
        "pretrained=/models/m,block_size=32, dtype = float32",
        '{"pretrained": "/models/m", "block_size": 32, "dtype": "float32"}',
        {"pretrained": "/models/m", "block_size": 32, "dtype": "float32"},
    ],
    ids=["text", "json", "dict"],
)
def test_the_arguments_are_held_as_text_in_the_block_only(given):
    assert model_arguments.given() is None
    with model_arguments.passing(given) as held:
        assert model_arguments.given() == held == {"pretrained": "/models/m", "block_size": "32", "dtype": "float32"}
        with pytest.raises(TypeError):
            held["pretrained"] = "other"  # read-only
    assert model_arguments.given() is None


def test_none_is_no_arguments_and_a_nested_block_restores_the_outer_one():
    with model_arguments.passing(None):
        assert model_arguments.given() == {}
        with model_arguments.passing("seed=1"):
            assert model_arguments.given() == {"seed": "1"}
        assert model_arguments.given() == {}
    assert model_arguments.given() is None


def test_an_exception_in_the_block_still_lets_go():
    with pytest.raises(RuntimeError), model_arguments.passing("pretrained=x"):
        raise RuntimeError("a task failed to build")
    assert model_arguments.given() is None


def test_another_thread_or_task_sees_its_own_run():
    """A context variable: a thread started meanwhile (lm_eval's API models use threads and asyncio) does not see
    another run's arguments unless it runs in that context."""
    seen = {}
    with model_arguments.passing("pretrained=here"):
        thread = threading.Thread(target=lambda: seen.setdefault("thread", model_arguments.given()))
        thread.start()
        thread.join()

        async def read():
            return model_arguments.given()

        seen["task"] = asyncio.run(read())  # asyncio copies the context: the same run
    assert seen == {"thread": None, "task": {"pretrained": "here"}}


def test_the_options_parser_accepts_the_held_arguments_and_refuses_a_near_miss_of_an_option():
    given = {"pretrained": "m", "block_size": "32", "normalisation": "none"}
    with model_arguments.passing("pretrained=m,block_size=32"):
        held = model_arguments.given()
        with pytest.raises(OptionError, match="normalisation"):
            options.parse("stereoset_multi_en", stereoset_task.OPTIONS, given, model_arguments=held)
        parsed = options.parse(
            "stereoset_multi_en", stereoset_task.OPTIONS, {"pretrained": "m", "block_size": "32"}, model_arguments=held
        )
    assert "block_size" not in parsed and "pretrained" not in parsed
