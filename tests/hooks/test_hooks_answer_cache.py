"""``hooks/answer_cache.py``: lm_eval's ``CachingLM``, however it is called, checks its file and records whose answers
it holds before the first request, and reads and writes through the plugin's ``AnswerCache`` (the run through
``lm_eval``: tests/hooks/test_answer_cache.py, tests/reliability/test_run_arguments_and_cache_files.py)."""

from __future__ import annotations

import json
import sqlite3

from lm_eval.api.model import LM, CachingLM

from lm_eval_stereo.core.answer_record import RECORD_TABLE, AnswerCache
from lm_eval_stereo.core.unanswered import Unanswered
from lm_eval_stereo.hooks import is_wrapped


class Echo(LM):
    """An lm_eval backend that answers every generation request with its prompt."""

    def loglikelihood(self, requests, disable_tqdm=False):
        return [(0.0, True) for _ in requests]

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        return [0.0 for _ in requests]

    def generate_until(self, requests, disable_tqdm=False):
        return [request.args[0] for request in requests]


def test_the_database_is_claimed_recorded_and_read_through_the_answer_cache(tmp_path):
    assert is_wrapped(vars(CachingLM)["__init__"])
    backend = Echo()
    path = tmp_path / "cache" / "answers"
    caching = CachingLM(lm=backend, cache_db=str(path))  # bound by name
    assert isinstance(caching.dbdict, AnswerCache) and backend.cache_hook.dbdict is caching.dbdict
    backend.cache_hook.add_partial("generate_until", ("a", {}), Unanswered(""))
    backend.cache_hook.add_partial("generate_until", ("b", {}), "B")
    assert len(caching.dbdict.store) == 1  # the unanswered request is not kept
    with sqlite3.connect(path) as database:
        (record,) = database.execute(f"SELECT * FROM {RECORD_TABLE}").fetchall()
    assert json.loads(record[-1])["backend"].endswith("test_hooks_answer_cache.Echo")
