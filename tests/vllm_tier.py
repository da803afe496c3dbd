"""What the vLLM tier's files share (``tests/backends/test_vllm*.py``, one xdist unit: ``conftest.VLLM_TIER``): a pytest
plugin (``conftest.pytest_plugins``) holding the tier's session fixtures, started once for the whole tier, and the
documents, tolerances and comparisons its files use.

- :func:`vllm_engine`: the session's one in-process vLLM engine (:mod:`vllm_engine`), SmolLM2 in float32; every
  ``lm_eval --model vllm`` and ``--model vllm-prefix`` run of the tests goes through it (the tests of a fresh process's
  start and exit start their own);
- :func:`vllm_replicas`: the session's one pair of ``vllm serve`` replicas behind HAProxy (:mod:`vllm_replicas`),
  every served test's;
- :func:`hf_ll`: SmolLM2 through ``hf`` on :data:`LL_DOCS`, the reference of every log-likelihood comparison;
  :func:`vllm_ll`: the same documents through ``--model vllm`` on the session's engine; :func:`vllm_gen`: the
  generative protocols (:data:`GEN_DOCS`) through it;
- :func:`offline_tasks`: lm_eval's own bias tasks read from the offline mirror.

Engine starts in the tier: the session's engine, two replicas and the restarts the fault tests make, and the Python
caller's two engines (``test_vllm.py``: a user's script starts its own).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_lm_eval
from suite_tools import skip_reason
from vllm_replicas import ENV, MAX_MODEL_LEN, VLLM_BIN

#: every file of the tier: the engine tier's marker, skipped without the vLLM venv
MARKS = [
    pytest.mark.engine,
    pytest.mark.skipif(not (VLLM_BIN / "vllm").exists(), reason=skip_reason("the vLLM venv")),
]
#: per-request log-likelihood difference allowed between vLLM and ``hf`` (float32 on two engines that sum in different
#: orders: 1.7e-4 was the largest difference of these 138 requests, in process and served alike)
TOLERANCE = 1e-3
#: a served request answered in another batch (the resumed run, num_concurrent 1) against the uninterrupted run (4)
RESUME_TOLERANCE = 1e-4
#: the log-likelihood families on a few documents each: StereoSet with the German documents whose candidates start
#: inside a character, GEST, EuroGEST Greek, S_JSD, leakage, GerBBQ MC, MBBQ and KoBBQ MC, RuBia, lm_eval's own
#: ``crows_pairs_english`` and ``esbbq_age``. S_JSD's French pair 74: 20 requests under SmolLM2's tokenizer, two of
#: whose tokens do not round-trip (pair 0 took 68; a vLLM prompt log-likelihood costs about 0.4 s on this CPU)
LL_DOCS = {
    "stereoset_multi_en": [0, 1],
    "stereoset_multi_de": [2, 8],
    "gest_en": [0, 1],
    "eurogest_el": [0, 1, 2, 3],
    "s_jsd_fr": [74],
    "stereotype_leakage_en": [0],
    "gerbbq_mc_amb": [0, 1],
    "mbbq_en": [0, 1],
    "kobbq": [0, 1],
    "crows_pairs_english": [0, 1],
    "esbbq_age": [0, 1],
    "rubia_gender": [0, 1, 2],
}
GREEDY = {"gest_mt_cs": [0, 1], "kobbq_gen": [0, 1], "mbbq_gen_en": [0, 1]}
SAMPLED = {"gerbbq_amb": [0], "stereotype_leakage_gen_en": [0]}
GEN_DOCS = GREEDY | SAMPLED
MAX_GEN_TOKS = 24
GEN_ARGS = ["--apply_chat_template", "--gen_kwargs", f"max_gen_toks={MAX_GEN_TOKS}"]


def samples_arg(documents: dict[str, list[int]]) -> list[str]:
    return ["--tasks", ",".join(documents), "--samples", json.dumps(documents), "--log_samples"]


def hf_args(smollm2: Path) -> list[str]:
    return ["--model", "hf", "--model_args", f"pretrained={smollm2},dtype=float32", "--device", "cpu"]


def completions_args(smollm2: Path, base: str, num_concurrent: int, model: str = "local-completions") -> list[str]:
    """``--model local-completions`` (or ``model``) of the server at ``base``, with SmolLM2's tokenizer."""
    model_args = f"model={smollm2},base_url={base}/v1/completions,tokenizer={smollm2}"
    model_args += f",tokenizer_backend=huggingface,num_concurrent={num_concurrent},max_length={MAX_MODEL_LEN}"
    return ["--model", model, "--model_args", model_args]


def per_request(run: LmEvalRun, task: str) -> dict[tuple[int, int], tuple[float, bool]]:
    """(doc_id, request index) -> (log-likelihood, greedy) from the samples file."""
    return {
        (sample["doc_id"], n): (float(response[0][0]), response[0][1] in (True, "True"))
        for sample in run.samples[task]
        for n, response in enumerate(sample["resps"])
    }


def requests_of(run: LmEvalRun, documents: dict[str, list[int]]) -> int:
    return sum(len(per_request(run, task)) for task in documents)


def assert_log_likelihoods_equal(run: LmEvalRun, reference: LmEvalRun, task: str, tolerance: float = TOLERANCE):
    """Every request of ``task``: the reference's log-likelihood within ``tolerance``, its greedy flag."""
    expected, actual = per_request(reference, task), per_request(run, task)
    assert expected and expected.keys() == actual.keys()
    worst = max(abs(actual[key][0] - ll) for key, (ll, _) in expected.items())
    assert worst <= tolerance, (task, worst)
    assert {key: greedy for key, (_, greedy) in actual.items()} == {key: g for key, (_, g) in expected.items()}


def by_document(run: LmEvalRun, task: str) -> dict[int, dict]:
    return {sample["doc_id"]: sample for sample in run.samples[task]}


def texts(sample: dict) -> list[str]:
    return [text for response in sample["resps"] for text in response]


def close(one, two, tolerance: float) -> bool:
    """Item scores agree: floats within ``tolerance`` (NaN where NaN), containers element by element, the rest equal."""
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(close(one[k], two[k], tolerance) for k in one)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(close(a, b, tolerance) for a, b in zip(one, two))
    if isinstance(one, float) and isinstance(two, (int, float)) and not isinstance(two, bool):
        return (math.isnan(one) and math.isnan(two)) or abs(one - two) <= tolerance
    return one == two


def parsed(value):
    """A metric that is a JSON text (the leakage association table) as its value, any other as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def assert_close_metrics(one: dict, two: dict) -> None:
    """Two results' metrics of one task: the same keys, every value within :data:`TOLERANCE` (NaN where NaN, JSON
    texts value by value, the rest equal)."""
    assert one.keys() == two.keys()
    for key in one.keys() - {"alias"}:
        assert close(parsed(one[key]), parsed(two[key]), TOLERANCE), (key, one[key], two[key])


def boundary_flags(sample: dict) -> list:
    """Every token-boundary flag of one sample (StereoSet ``boundaries_kept``, EuroGEST ``boundary_mismatch``, the
    leakage ``boundary_mismatches``), wherever the item stores it."""
    found = []

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif "boundar" in key:
            found.append((key, value))

    walk({k: v for k, v in sample.items() if k not in ("doc", "arguments", "resps", "filtered_resps")})
    return found


def assert_item_scores_equal(run: LmEvalRun, reference: LmEvalRun, task: str, tolerance: float) -> None:
    """Every document of ``task``: each item score of the reference within ``tolerance``, its boundary flags."""
    mine = by_document(run, task)
    for doc, sample in by_document(reference, task).items():
        for name in sample["metrics"]:
            assert close(mine[doc][name], sample[name], tolerance), (task, doc, name)
        assert boundary_flags(mine[doc]) == boundary_flags(sample), (task, doc)


# --- the session's fixtures -----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def offline_tasks(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``--include_path`` of lm_eval's own bias tasks read from the offline mirror
    (:mod:`lm_eval_stereo.tasks.lm_eval_bias`)."""
    from lm_eval_stereo.tasks.lm_eval_bias.offline_tasks import write_offline_tasks

    folder = tmp_path_factory.mktemp("lm_eval_offline_tasks")
    write_offline_tasks(folder)
    return ["--include_path", str(folder)]


@pytest.fixture(scope="session")
def hf_ll(smollm2, offline_tasks, tmp_path_factory) -> LmEvalRun:
    """SmolLM2 through ``hf`` on :data:`LL_DOCS`: the reference of the tier's log-likelihood comparisons."""
    args = [*hf_args(smollm2), "--batch_size", "16", *offline_tasks, *samples_arg(LL_DOCS)]
    return run_lm_eval(args, tmp_path_factory.mktemp("hf_ll"), env=ENV)


@pytest.fixture(scope="session")
def vllm_engine(smollm2, tmp_path_factory):
    """The session's one in-process vLLM engine (:class:`vllm_engine.VllmEngine`): ``vllm_engine.run(args, folder)``
    runs ``lm_eval`` on it; started at the first test that asks, stopped (its engine shut down, its exit status 0)
    at the end of the session."""
    from vllm_engine import VllmEngine

    if not (VLLM_BIN / "vllm").exists():
        pytest.skip(skip_reason("the vLLM venv"))
    engine = VllmEngine(smollm2, tmp_path_factory.mktemp("vllm_engine"))
    try:
        engine.start()
        yield engine
    finally:
        status = engine.stop()
    assert status == 0, f"the vLLM engine server exited {status}:\n{engine.log.read_text()[-3000:]}"


@pytest.fixture(scope="session")
def vllm_ll(vllm_engine, offline_tasks, tmp_path_factory) -> LmEvalRun:
    """:data:`LL_DOCS` through ``--model vllm`` on the session's engine."""
    args = ["--model", "vllm", "--model_args", vllm_engine.model_args, "--batch_size", "auto"]
    return vllm_engine.run([*args, *offline_tasks, *samples_arg(LL_DOCS)], tmp_path_factory.mktemp("vllm_ll"))


@pytest.fixture(scope="session")
def vllm_gen(vllm_engine, tmp_path_factory) -> LmEvalRun:
    """:data:`GEN_DOCS` through ``--model vllm`` with the chat template on the session's engine."""
    args = ["--model", "vllm", "--model_args", vllm_engine.model_args, "--batch_size", "auto"]
    return vllm_engine.run([*args, *GEN_ARGS, *samples_arg(GEN_DOCS)], tmp_path_factory.mktemp("vllm_gen"))


@pytest.fixture(scope="session")
def vllm_replicas(smollm2: Path, tmp_path_factory: pytest.TempPathFactory):
    """Two ``vllm serve`` replicas of SmolLM2 behind HAProxy (:mod:`vllm_replicas`), started at the first served test
    and stopped at the end of the session; a test calls ``.ready()`` before using them."""
    from vllm_replicas import HAPROXY, Replicas

    if not (VLLM_BIN / "vllm").exists():
        pytest.skip(skip_reason("the vLLM venv"))
    if HAPROXY is None:
        pytest.skip(skip_reason("HAProxy"))
    pair = Replicas(smollm2, tmp_path_factory.mktemp("vllm_replicas"))
    try:
        pair.start()
        yield pair
    finally:
        pair.stop()
