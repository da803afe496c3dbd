"""``--model hf-prefix`` gives lm_eval ``hf``'s per-request log-likelihoods and greedy flags, forwarding less.

Unit level: ``loglikelihood()`` / ``_loglikelihood_tokens()`` of :class:`HFPrefixLM` against HFLM's on hand-made
requests (shared and empty contexts, trailing spaces, left truncation, greedy continuations) at batch sizes 1, 3 and
auto; the packing itself; the fallback of a model it cannot serve. End to end: ``lm_eval --log_samples`` with ``hf``
(one process) and ``hf-prefix`` (``accelerate launch``, 2 CPU processes, ``--batch_size auto``) on every log-likelihood
task of the suite plus a generic multiple-choice task from a local JSON-lines file; the 2-process ``hf-prefix`` run gives
the metrics of a 1-process one.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
from lm_eval_runner import TESTS, LmEvalRun, assert_same_metrics, free_port, run_lm_eval
from local_tasks import GENERIC_DOCS, write_mc_task

from lm_eval_stereo.models.hf_prefix import HFPrefixLM, batches
from lm_eval_stereo.models.prefix_tree import TokenRequest, fill_rows, pack_rows
from lm_eval_stereo.tasks.s_jsd.data import LANGUAGES as S_JSD_LANGUAGES
from lm_eval_stereo.tasks.stereoset_multi.data import LANGUAGES as STEREOSET_LANGUAGES
from lm_eval_stereo.tasks.stereotype_leakage.data import LANGUAGES as LEAKAGE_LANGUAGES

TOLERANCE = 1e-4
PAIRS_FILE = TESTS / "fixtures" / "gest" / "pairs.csv"
#: every log-likelihood task of the suite (the GEST pairs with the fixture's languages)
SUITE_TASKS = [
    *(f"stereoset_multi_{lang}" for lang in STEREOSET_LANGUAGES),
    "gest_en",
    *(f"gest_pairs_{lang}" for lang in ("pl", "cs", "ru")),
    "gerbbq_mc_amb",
    "gerbbq_mc_dis",
    *(f"s_jsd_{lang}" for lang in S_JSD_LANGUAGES),
    *(f"stereotype_leakage_{lang}" for lang in LEAKAGE_LANGUAGES),
]
GENERIC_TASK = "generic_mc_local"
LIMIT = "4"


# --- packing ----------------------------------------------------------------------------------------------------------


def request(index: int, window: list[int], n_scored: int) -> TokenRequest:
    return TokenRequest(index, tuple(window), n_scored)


def test_shared_context_is_one_tree_in_preorder():
    rows = pack_rows([request(0, [1, 2, 3, 4, 5], 2), request(1, [1, 2, 3, 6], 1), request(2, [1, 2, 3, 4, 7], 1)], 64)
    assert len(rows) == 1
    row = rows[0]
    # inputs 1 2 3 4 | 1 2 3 | 1 2 3 4 share "1 2 3 4": nodes 1 2 3 4 only
    assert row.tokens == [1, 2, 3, 4] and row.depths == [0, 1, 2, 3] and row.is_chain
    scored = {index: (nodes, tokens) for index, nodes, tokens in row.scored}
    assert scored == {0: ([2, 3], [4, 5]), 1: ([2], [6]), 2: ([3], [7])}
    branched = pack_rows([request(0, [1, 2, 3, 4, 5], 2), request(1, [1, 2, 3, 8, 9, 6], 1)], 64)[0]
    assert branched.tokens == [1, 2, 3, 4, 8, 9] and branched.depths == [0, 1, 2, 3, 3, 4]
    assert branched.ends == [6, 6, 6, 4, 6, 6] and not branched.is_chain


def test_unrelated_long_and_over_window_sequences_are_not_packed_together():
    # sharing only the first token (e.g. BOS) saves less than the longer attention costs: separate rows
    unrelated = [request(0, [1, 2, 3, 4], 1), request(1, [1, 5, 6, 7], 1)]
    assert [row.tokens for row in pack_rows(unrelated, 64, attention_cost=1 / 4)] == [[1, 2, 3], [1, 5, 6]]
    assert [row.tokens for row in pack_rows(unrelated, 64, attention_cost=1 / 64)] == [[1, 2, 3, 5, 6]]
    # the row never grows beyond max_row nodes
    rows = pack_rows([request(i, [1, 2, 3, 4, 10 + i, 0], 1) for i in range(4)], 7)
    assert [len(row) for row in rows] == [7, 5] and sum(len(row.scored) for row in rows) == 4
    # sliding-window models: a sequence longer than the window is alone (and forwarded unmasked)
    rows = pack_rows([request(0, [1, 2, 3, 4, 5], 1), request(1, [1, 2, 3, 4, 6], 1)], 64, max_tree_depth=3)
    assert len(rows) == 2 and all(row.is_chain for row in rows)


def test_trees_side_by_side_restart_positions_and_see_only_their_own_ancestors():
    trees = pack_rows(
        [request(0, [1, 2, 3, 4, 5], 2), request(1, [1, 2, 3, 8, 9, 6], 1), request(2, [7, 8, 9], 1)],
        64,
        attention_cost=1 / 4,
    )
    assert [tree.tokens for tree in trees] == [[1, 2, 3, 4, 8, 9], [7, 8]]
    rows = fill_rows(trees, width=8)
    assert len(rows) == 1
    row = rows[0]
    assert row.tokens == [1, 2, 3, 4, 8, 9, 7, 8] and row.depths == [0, 1, 2, 3, 3, 4, 0, 1]
    # the second tree's root (node 6) is nobody's descendant and sees nothing of the first tree
    assert row.ends == [6, 6, 6, 4, 6, 6, 8, 8] and not row.is_chain
    scored = {index: (nodes, tokens) for index, nodes, tokens in row.scored}
    assert scored == {0: ([2, 3], [4, 5]), 1: ([5], [6]), 2: ([7], [9])}
    # by default as wide as the longest tree: best fit, longest first, a tree never split
    lengths = [len(t) for t in fill_rows([*trees, *pack_rows([request(3, [5, 6, 7, 8, 9, 1, 2], 1)], 64)])]
    assert lengths == [6, 6, 2]
    # a sliding-window model's over-window sequence stays alone, a plain chain
    alone = pack_rows([request(0, [1, 2, 3, 4, 5], 1), request(1, [6, 7], 1)], 64, max_tree_depth=3)
    assert [row.tokens for row in fill_rows(alone, max_tree_depth=3)] == [[1, 2, 3, 4], [6]]


def forwarded_positions(rows: list, batch_size: int) -> int:
    """Rows x padded width of every batch ``hf-prefix`` forwards ``rows`` in (longest first)."""
    ordered = sorted(rows, key=lambda row: -len(row))
    return sum(len(batch) * max(map(len, batch)) for batch in batches(ordered, batch_size))


def test_filled_rows_forward_no_padding_but_their_unfilled_ends():
    """Many trees of 5 to 121 nodes, 32 rows per forward: the rows hold every node once, and forward fewer positions
    than one tree per row padded to its batch's longest (measured: 3,796 tokens in 3,909 positions, against 4,912)."""
    generator = torch.Generator().manual_seed(0)
    requests = []
    for n in range(60):
        context = torch.randint(10, 500, (int(torch.randint(3, 120, (1,), generator=generator)),), generator=generator)
        for k in range(3):
            requests.append(request(len(requests), [*context.tolist(), 600 + n, 700 + k], 1))
    trees = pack_rows(requests, 256, attention_cost=1 / 64)
    rows = fill_rows(trees)
    tokens = sum(len(tree) for tree in trees)
    assert sum(len(row) for row in rows) == tokens
    assert all(len(row) <= max(len(tree) for tree in trees) for row in rows)
    assert sorted(i for row in rows for i, _, _ in row.scored) == list(range(len(requests)))
    filled, one_tree_per_row = forwarded_positions(rows, 32), forwarded_positions(trees, 32)
    assert filled < 1.05 * tokens and one_tree_per_row > 1.25 * tokens, (tokens, filled, one_tree_per_row)


# --- loglikelihood() against HFLM -------------------------------------------------------------------------------------

CONTEXT = "Der Schachspieler war asiatisch. Viele Menschen leben in Äthiopien."
LONG = " ".join(["The chess player was asian and many people live in Ethiopia."] * 4)
PAIRS = [
    (CONTEXT, " Die Frau ist Ärztin."),
    (CONTEXT, " Die Frau ist Ärztin."),  # duplicate
    (CONTEXT, " Er"),
    (CONTEXT + " ", "Die Leute sind dünn."),  # trailing space moves to the continuation
    (CONTEXT, " Die Frau ist eine sehr gute Ärztin und der Mann ist ein Leader."),
    ("", "The chess player was asian."),  # empty context: prefix token
    ("", "The chess player was hispanic."),
    ("", "<|endoftext|>The woman is kind."),  # continuation starting with the prefix token
    ('"I am good at my job, she said.",', " he"),
    ('"I am good at my job, she said.",', " she"),
    ('"I am good at my job, she said.", the', " man"),
    (LONG, " The people are very thin."),  # longer than max_length: truncated from the left
    (LONG, " Kadın çok güzel."),
    ("Kontext: Ein Mann und eine Frau sprechen.", "A"),
]


@pytest.fixture(scope="module")
def models(tiny_causal: Path) -> dict:
    """``hf`` and ``hf-prefix`` per batch size, on the tiny model with a short window (so that truncation happens)."""
    common = {
        "pretrained": str(tiny_causal),
        "device": "cpu",
        "dtype": "float32",
        "max_length": 40,
        "max_batch_size": 8,
    }
    return {
        (kind, size): cls(batch_size=size, **common)
        for size in (1, 3, "auto")
        for kind, cls in (("hf", HFLM), ("prefix", HFPrefixLM))
    }


def assert_same(expected: list[tuple[float, bool]], actual: list[tuple[float, bool]]) -> None:
    assert len(expected) == len(actual)
    for n, ((ll, greedy), (ll2, greedy2)) in enumerate(zip(expected, actual)):
        assert abs(ll - ll2) <= TOLERANCE, (n, ll, ll2)
        assert greedy == greedy2, n


@pytest.mark.parametrize("batch_size", [1, 3, "auto"])
def test_loglikelihood_equals_hflm(models, batch_size):
    instances = [Instance("loglikelihood", {}, pair, n) for n, pair in enumerate(PAIRS)]
    prefix = models["prefix", batch_size]
    assert prefix.prefix_fallback_reason is None
    expected = models["hf", batch_size].loglikelihood(instances)
    assert_same(expected, prefix.loglikelihood(instances))
    # another order (packing sorts the requests), and every other request (other trees side by side): the same numbers
    assert_same(expected[::-1], prefix.loglikelihood(instances[::-1]))
    assert_same(expected[::2], prefix.loglikelihood(instances[::2]))
    windows = prefix.token_requests([(None, *prefix._encode_pair(*pair)) for pair in PAIRS if pair[0]])
    assert any(len(w.window) == prefix.max_length + 1 for w in windows), "no request was truncated"


@pytest.mark.parametrize("batch_size", [1, 3, "auto"])
def test_greedy_flags_equal_hflm(models, batch_size):
    """Token-level requests whose continuations are (or are not) the model's own arg-max tokens."""
    hf = models["hf", batch_size]
    requests = []
    for text in (CONTEXT, "The woman is", LONG):
        context = hf.tok_encode(text)[-30:]
        greedy = list(context)
        with torch.no_grad():
            for _ in range(4):
                greedy.append(int(hf.model(torch.tensor([greedy])).logits[0, -1].argmax()))
        continuation = greedy[len(context) :]
        wrong = (continuation[-1] + 1) % hf.model.config.vocab_size
        for cont in (continuation, continuation[:1], continuation[:3], [*continuation[:2], wrong]):
            requests.append((None, context, cont))
    expected = hf._loglikelihood_tokens(requests, disable_tqdm=True)
    assert sum(greedy for _, greedy in expected) == 9 and sum(not greedy for _, greedy in expected) == 3
    assert_same(expected, models["prefix", batch_size]._loglikelihood_tokens(requests, disable_tqdm=True))


def test_shared_context_is_forwarded_once(models):
    """The four requests on CONTEXT (one duplicate) are one row: the context once, then each distinct continuation."""
    prefix = models["prefix", 3]
    encoded = [(None, *prefix._encode_pair(*pair)) for pair in PAIRS[:4]]
    context = encoded[0][1]
    assert all(e[1] == context for e in encoded)
    rows = prefix.pack(prefix.token_requests(encoded))
    distinct = {tuple(e[2]) for e in encoded}
    assert len(rows) == 1 and not rows[0].is_chain
    assert len(rows[0]) <= len(context) + sum(len(cont) - 1 for cont in distinct)
    assert sorted(index for index, _, _ in rows[0].scored) == [0, 1, 2, 3]


def test_rolling_loglikelihood_is_hflm_s(models):
    instances = [Instance("loglikelihood_rolling", {}, (text,), n) for n, text in enumerate([CONTEXT, LONG])]
    assert models["prefix", 3].loglikelihood_rolling(instances) == models["hf", 3].loglikelihood_rolling(instances)


def test_progress_bar_counts_the_tokens_forwarded_and_the_requests_scored(models, monkeypatch, capsys):
    """The bar's total is the tokens the forwards compute (each batch: its rows times its widest row) and each batch
    advances it by exactly the size of the input it forwarded (captured at the model's input), so rate and estimate
    hold from the first batch; its postfix counts the requests scored; two lines before it say what packing did."""
    from lm_eval_stereo.models import hf_prefix

    bars = []

    class RecordingBar(hf_prefix.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.steps, self.postfixes = [], []
            bars.append(self)

        def update(self, n=1):
            self.steps.append(n)
            return super().update(n)

        def set_postfix_str(self, s="", refresh=True):
            self.postfixes.append(s)
            return super().set_postfix_str(s, refresh)

    prefix = models["prefix", 3]
    forwarded = []
    batch_inputs = prefix.batch_inputs

    def recording_inputs(batch, tree=None):
        kwargs, keep = batch_inputs(batch, tree)
        forwarded.append(kwargs["input_ids"].numel())
        return kwargs, keep

    monkeypatch.setattr(hf_prefix, "tqdm", RecordingBar)
    monkeypatch.setattr(prefix, "batch_inputs", recording_inputs)
    capsys.readouterr()
    prefix.loglikelihood([Instance("loglikelihood", {}, pair, n) for n, pair in enumerate(PAIRS)])
    [bar] = bars
    assert len(forwarded) >= 2 and bar.steps == forwarded and bar.total == bar.n == sum(forwarded)
    scored = [int(postfix.split("/")[0]) for postfix in bar.postfixes]
    assert len(scored) == len(forwarded) and scored == sorted(scored) and scored[0] > 0
    assert bar.postfixes[-1] == f"{len(PAIRS)}/{len(PAIRS)} requests"
    lines = capsys.readouterr().err.splitlines()
    assert f"hf-prefix: packing {len(PAIRS)} requests into prefix trees (the progress bar follows)" in lines
    packed = next(line for line in lines if line.startswith(f"hf-prefix: {len(PAIRS)} requests packed into "))
    assert packed.endswith(f" s), {len(forwarded)} batches of up to 3 rows, {sum(forwarded)} tokens to forward")


def test_auto_batch_size_tries_no_more_rows_than_there_are(models, monkeypatch):
    """``auto`` finds the batch size by forwarding a trial batch of the longest row: never more rows than the call
    packs (``max_batch_size`` 8 here), as no batch holds more."""
    prefix = models["prefix", "auto"]
    encoded = [(pair, *prefix._encode_pair(*pair)) for pair in PAIRS if pair[0]]
    rows = prefix.pack(prefix.token_requests(encoded))
    assert 1 < len(rows) < prefix.max_batch_size
    tried = []
    batch_inputs = prefix.batch_inputs

    def recording_inputs(batch, tree=None):
        tried.append(len(batch))
        return batch_inputs(batch, tree)

    monkeypatch.setattr(prefix, "batch_inputs", recording_inputs)
    prefix.loglikelihood([Instance("loglikelihood", {}, pair, n) for n, pair in enumerate(PAIRS) if pair[0]])
    assert tried[0] == len(rows) and max(tried) == len(rows)


def test_unsupported_model_falls_back_with_one_log_line(tiny_causal, tmp_path, caplog):
    """BLOOM (ALiBi, no position ids) cannot take packed trees: plain path, one warning, same numbers."""
    from transformers import AutoTokenizer, BloomConfig, BloomForCausalLM

    from lm_eval_stereo.local_models.tiny import save_seeded

    tokenizer = AutoTokenizer.from_pretrained(tiny_causal)
    config = BloomConfig(vocab_size=len(tokenizer), hidden_size=32, n_layer=2, n_head=2)
    path = save_seeded(tmp_path / "bloom", BloomForCausalLM, config, tokenizer, seed=0)
    with caplog.at_level(logging.INFO, logger="lm_eval_stereo.models.hf_prefix"):
        prefix = HFPrefixLM(pretrained=str(path), device="cpu", batch_size=2, dtype="float32")
    lines = [r.getMessage() for r in caplog.records if r.name == "lm_eval_stereo.models.hf_prefix"]
    assert len(lines) == 1 and lines[0].startswith("hf-prefix: ") and "plain hf path" in lines[0]
    assert prefix.prefix_fallback_reason
    instances = [Instance("loglikelihood", {}, pair, n) for n, pair in enumerate(PAIRS[:6])]
    hf = HFLM(pretrained=str(path), device="cpu", batch_size=2, dtype="float32")
    assert prefix.loglikelihood(instances) == hf.loglikelihood(instances)


# --- real lm_eval runs ------------------------------------------------------------------------------------------------


def write_generic_task(folder: Path) -> Path:
    """A plain lm_eval multiple-choice task over a local JSON-lines file (shared questions, answers of any length)."""
    return write_mc_task(folder, GENERIC_TASK, GENERIC_DOCS)


def lm_eval_args(model: str, tiny_causal: Path, tasks: list[str], batch_size: str, include: Path) -> list[str]:
    metadata = json.dumps({"pairs_file": str(PAIRS_FILE), "pairs_tokenizer_filter": False})
    return [
        *("--model", model, "--model_args", f"pretrained={tiny_causal},dtype=float32", "--batch_size", batch_size),
        *("--tasks", ",".join(tasks), "--limit", LIMIT, "--log_samples", "--metadata", metadata),
        *("--include_path", str(include)),
    ]


@pytest.fixture(scope="module")
def runs(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, LmEvalRun]:
    """``hf`` in one process, ``hf-prefix`` (``--batch_size auto``) under ``accelerate launch`` with 2 processes and
    in one process."""
    include = write_generic_task(tmp_path_factory.mktemp("generic_task"))
    tasks = [*SUITE_TASKS, GENERIC_TASK]
    args = [*lm_eval_args("hf", tiny_causal, tasks, "4", include), "--device", "cpu"]
    hf = run_lm_eval(args, tmp_path_factory.mktemp("hf"))
    launch = ["launch", "--cpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no"]
    launch += ["--dynamo_backend", "no", "--main_process_port", str(free_port()), "-m", "lm_eval"]
    args = lm_eval_args("hf-prefix", tiny_causal, tasks, "auto", include)
    one_row = [*lm_eval_args("hf-prefix", tiny_causal, tasks, "1", include), "--device", "cpu"]
    return {
        "hf": hf,
        "prefix": run_lm_eval(launch + args, tmp_path_factory.mktemp("prefix"), executable="accelerate"),
        "prefix_single": run_lm_eval([*args, "--device", "cpu"], tmp_path_factory.mktemp("prefix_single")),
        "prefix_one_row": run_lm_eval(one_row, tmp_path_factory.mktemp("prefix_one_row")),
    }


def per_request(run: LmEvalRun, task: str) -> dict[tuple[int, int], tuple[float, bool]]:
    """(doc_id, request index) -> (log-likelihood, greedy) from the samples file."""
    values = {}
    for sample in run.samples[task]:
        for n, response in enumerate(sample["resps"]):
            ll, greedy = response[0]
            values[sample["doc_id"], n] = (float(ll), greedy in (True, "True"))
    return values


def flagged_candidates(run: LmEvalRun, task: str) -> set[tuple[int, int]]:
    """(doc_id, candidate index) of the StereoSet intrasentence candidates whose reference tokens lm_eval's string
    split cannot say under ``hf`` (``boundaries_kept: False``): ``hf-prefix`` scores their reference tokens instead."""
    return {
        (sample["doc_id"], c)
        for sample in run.samples[task]
        for c, candidate in enumerate(sample["lms"]["candidates"])
        if not candidate.get("boundaries_kept", True)
    }


@pytest.mark.parametrize("prefix_run", ["prefix", "prefix_one_row"])
@pytest.mark.parametrize("task", [*SUITE_TASKS, GENERIC_TASK])
def test_lm_eval_samples_equal_hf(runs, task, prefix_run):
    """Every request of the task: same log-likelihood (within 1e-4) and greedy flag as ``hf`` (batch size 4), all
    documents gathered, whether ``hf-prefix`` packs as many rows per forward as fit (``auto``, 2 processes: each its
    own share of the requests, in its own order) or forwards one row at a time; but the documents with a candidate
    whose reference tokens strings cannot say, which ``hf-prefix`` scores exactly (checked against the reference
    below)."""
    assert runs[prefix_run].results["n-samples"][task] == runs["hf"].results["n-samples"][task]
    expected, actual = per_request(runs["hf"], task), per_request(runs[prefix_run], task)
    assert expected and expected.keys() == actual.keys()
    exact = {doc for doc, _ in flagged_candidates(runs["hf"], task)} if task.startswith("stereoset") else set()
    for key, (ll, greedy) in expected.items():
        if key[0] not in exact:
            assert abs(actual[key][0] - ll) <= TOLERANCE and actual[key][1] == greedy, (task, key, prefix_run)


def test_byte_start_candidates_are_the_reference_s_tokens_under_hf_prefix(runs, tiny_causal):
    """StereoSet intrasentence candidates whose first token is one byte of a character: counted under ``hf``; under
    ``hf-prefix`` (2 processes) none is counted and each scores as the plain reference loop (within 1e-4)."""
    from stereoset_reference import reference_intrasentence
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_causal, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal)
    checked = 0
    for lang in STEREOSET_LANGUAGES:
        task = f"stereoset_multi_{lang}"
        flagged = flagged_candidates(runs["hf"], task)
        assert runs["hf"].metric(task, "boundary_mismatches") == len(flagged)
        assert runs["prefix"].metric(task, "boundary_mismatches") == 0
        for sample in runs["prefix"].samples[task]:
            for c, candidate in enumerate(sample["lms"]["candidates"]):
                if (sample["doc_id"], c) in flagged:
                    sentence = sample["doc"][f"c{c + 1}_sentence"]
                    reference = reference_intrasentence(model, tokenizer, sentence)
                    assert candidate["boundaries_kept"] and abs(candidate["score"] - reference) <= TOLERANCE
                    checked += 1
    assert checked >= 1


@pytest.mark.parametrize("task", [*SUITE_TASKS, GENERIC_TASK])
def test_two_processes_give_the_single_process_metrics(runs, task):
    """``accelerate launch`` with 2 CPU processes: every metric of the task as one process computes it (within 1e-6;
    the ranks' batches differ, so log-likelihoods may differ in the last float bits)."""
    one, two = runs["prefix_single"].results, runs["prefix"].results
    assert two["n-samples"][task] == one["n-samples"][task] and one["n-samples"][task]["effective"] >= 1
    assert assert_same_metrics(one["results"][task], two["results"][task]) >= 1
