"""``hooks/evaluation_tracker.py``: a run's files stay inside ``--output_path``; every other name as lm_eval writes
it."""

from __future__ import annotations

import lm_eval.loggers.evaluation_tracker as tracker

from lm_eval_stereo.hooks.evaluation_tracker import model_folder_wrapper, samples_file_wrapper


def test_a_name_of_dots_only_becomes_underscores_and_every_other_name_is_lm_eval_s():
    stock = tracker.sanitize_model_name.__wrapped__
    ours = model_folder_wrapper(stock)
    assert ours("..") == "__" and ours(".") == "_" and stock("..") == ".."
    for name in ("org/model", "/models/smollm2", "a..b", "model=x,dtype=float32"):
        assert ours(name) == stock(name)


def test_a_task_name_with_a_separator_names_a_file_inside_the_run_s_folder():
    saved = []
    ours = samples_file_wrapper(lambda self, task_name, samples: saved.append((task_name, samples)))
    ours(None, "a/../../x", [1])
    ours(None, task_name="gest_en", samples=[2])  # bound by name
    ours(None, "dir\\name", samples=[3])
    assert saved == [("a__..__..__x", [1]), ("gest_en", [2]), ("dir__name", [3])]
