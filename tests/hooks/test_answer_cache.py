"""lm_eval's request cache (``--use_cache``) holds one backend's answers (:mod:`lm_eval_stereo.hooks.answer_cache`).

Through ``lm_eval``: a cache written by ``hf`` stops an ``hf-prefix`` run before its first request, in one line that
names both and what to do, and one written by ``hf-prefix`` stops an ``hf`` run; ``hf-prefix`` resumed from its own
cache answers every request from it and keeps the reference-token marks (StereoSet German, whose byte-start candidates
``hf`` flags and ``hf-prefix`` scores exactly). In process: the answers ``hf-prefix`` writes as it scores them are
marked too (what a killed run leaves), and a cache that does not say whose answers it holds is refused to the
plugin's backends and left to lm_eval's. Replay's accounting of cached answers is tested in ``test_replay.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from lm_eval.api.instance import Instance
from lm_eval.api.model import CacheHook
from lm_eval_runner import LmEvalRun, assert_same_metrics, run_lm_eval

from lm_eval_stereo.core import answer_record
from lm_eval_stereo.core.token_split import ReferenceTokensAnswer, TokenSplitInstance, token_split
from lm_eval_stereo.hooks.answer_cache import answers_of, claim
from lm_eval_stereo.models.hf_prefix import HFPrefixLM
from lm_eval_stereo.models.replay import ReplayLM

#: StereoSet German: 3 of its first 4 documents' candidates start inside a character for the tiny tokenizer
TASK = "stereoset_multi_de"


def args(model: str, pretrained: Path, cache: Path) -> list[str]:
    return [
        *("--model", model, "--model_args", f"pretrained={pretrained},dtype=float32", "--device", "cpu"),
        *("--batch_size", "4", "--tasks", TASK, "--limit", "4", "--use_cache", str(cache)),
    ]


@pytest.fixture(scope="module")
def runs(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, LmEvalRun]:
    root = tmp_path_factory.mktemp("answer_cache")
    hf_cache, prefix_cache = root / "caches" / "hf", root / "caches" / "prefix"
    return {
        "hf": run_lm_eval(args("hf", tiny_causal, hf_cache), root / "hf"),
        "prefix_on_hf": run_lm_eval(args("hf-prefix", tiny_causal, hf_cache), root / "prefix_on_hf", check=False),
        "prefix": run_lm_eval(args("hf-prefix", tiny_causal, prefix_cache), root / "prefix"),
        "prefix_again": run_lm_eval(args("hf-prefix", tiny_causal, prefix_cache), root / "prefix_again"),
        "hf_on_prefix": run_lm_eval(args("hf", tiny_causal, prefix_cache), root / "hf_on_prefix", check=False),
    }


def last_line(run: LmEvalRun) -> str:
    return run.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("run", "cache", "owner", "model"),
    [("prefix_on_hf", "hf", "hf", "hf-prefix"), ("hf_on_prefix", "prefix", "hf-prefix", "hf")],
)
def test_another_backend_s_cache_stops_the_run_in_one_line(runs, tiny_causal, run, cache, owner, model):
    stopped = runs[run]
    database = Path(runs["hf"].output_dir).parent / "caches" / f"{cache}_rank0.db"
    assert stopped.returncode == 2 and stopped.results == {}
    assert last_line(stopped) == (
        f"lm-eval-stereo: --use_cache: {database} holds answers given with backend={owner} (this run: {model}), which "
        "change the answers: give this run its own --use_cache path (one per backend and model), or delete that file"
    )
    assert "Traceback" not in stopped.stderr and "Requests remaining" not in stopped.stderr


def test_the_backends_differ_where_the_cache_would_have_mixed_them(runs):
    """What the stop prevents: ``hf`` flags 3 candidates whose reference tokens it cannot score, ``hf-prefix`` none."""
    assert runs["hf"].metric(TASK, "boundary_mismatches") == 3
    assert runs["prefix"].metric(TASK, "boundary_mismatches") == 0


def test_hf_prefix_resumed_from_its_own_cache_reads_every_answer_with_its_mark(runs):
    counts = r"Cached requests: (\d+), Requests remaining: (\d+)"
    [(_, requests)] = re.findall(counts, runs["prefix"].stderr)
    assert int(requests) > 0 and re.findall(counts, runs["prefix_again"].stderr) == [(requests, "0")]
    again = runs["prefix_again"]
    assert again.metric(TASK, "boundary_mismatches") == 0
    assert assert_same_metrics(runs["prefix"].results["results"][TASK], again.results["results"][TASK], tolerance=0)


# --- in process -------------------------------------------------------------------------------------------------------


def test_answers_written_as_scored_keep_the_reference_token_mark(tiny_causal):
    """``hf-prefix`` writes each answer to the cache as it is scored (what a killed run leaves behind): an answer to
    a request whose reference tokens it scored is stored marked, the others plain."""
    lm = HFPrefixLM(pretrained=str(tiny_causal), device="cpu", batch_size=2, dtype="float32")
    store: dict = {}
    lm.set_cache_hook(CacheHook(SimpleNamespace(dbdict=store)))
    context, continuation = "Die Frau ist", " müde."
    ids = lm.tok_encode(context + continuation)
    cut = len(lm.tok_encode(context)) + 1  # one token into the continuation: a split no string pair gives
    split = token_split(ids[:cut], ids[cut:])
    requests = [
        TokenSplitInstance("loglikelihood", {}, (context, continuation), 0, reference_tokens=split),
        Instance("loglikelihood", {}, ("Der Mann ist", " müde."), 1),
    ]
    answers = lm.loglikelihood(requests, disable_tqdm=True)
    assert [type(answer) for answer in answers] == [ReferenceTokensAnswer, tuple]
    stored = sorted(store.values(), key=lambda answer: answer == answers[1])
    assert [type(answer) for answer in stored] == [ReferenceTokensAnswer, tuple] and stored == answers


class LmEvalBackend:
    """Stands for one of lm_eval's own backends (its class is not the plugin's)."""

    pretrained = "org/model"


def test_a_cache_that_does_not_say_whose_answers_it_holds(tmp_path):
    """Refused to the plugin's backends (one line, exit status 2), left to lm_eval's as lm_eval leaves it; an empty
    one is claimed for the run's backend."""
    from sqlitedict import SqliteDict

    recordings = tmp_path / "recorded.jsonl"
    recordings.write_text(json.dumps({"full_prompt": "p", "output": "a"}) + "\n")
    replay = ReplayLM(outputs=str(recordings))
    unmarked = str(tmp_path / "old.db")
    with SqliteDict(unmarked, autocommit=True) as store:  # as lm_eval without the plugin writes it
        store["a1b2"] = ("answer",)
    with pytest.raises(SystemExit) as stopped:
        claim(unmarked, replay)
    assert stopped.value.code == 2
    assert claim(unmarked, LmEvalBackend()) is False
    assert answer_record.inspect(unmarked) == answer_record.CacheFile(unmarked, answers=1)
    assert claim(str(tmp_path / "new.db"), replay) is True
    assert answers_of(replay) == {
        "backend": "replay",
        "outputs_sha256": hashlib.sha256(b"recorded.jsonl\0" + recordings.read_bytes() + b"\0").hexdigest(),
    }
