"""Near ties (``lm_eval_stereo.core.near_ties``): judgements that rest on a log-likelihood difference within the
backends' tested agreement (:data:`ENGINE_AGREEMENT_NATS` a request) are counted per task (``near_ties``), and each
headline reports its range over them (``<headline>_near_tie_low`` / ``_near_tie_high``); no headline changes.

Unit level: the threshold's link to the parity tests' tolerances, the core rules (bounds, ties, rivals, overlapping
ranges, the headline ranges against a brute force), and the marks of every benchmark family that judges by comparing
log-likelihoods (StereoSet, S_JSD's CPS and B.S_JSD, RuBia, the BBQ family's MBBQ, KoBBQ and GerBBQ+ multiple choice,
GEST). Through ``lm_eval``: a tiny seeded model whose final layer norm is scaled down (its next-token distributions
nearly flat, so candidates' log-likelihoods lie within a few 1e-4 of each other) on StereoSet and GEST: the count of
near ties recomputed from the logged log-likelihoods, SS unchanged and its range recomputed item by item, and the
report's line beside SS; GEST's near ties are counted and move no headline (g_s is continuous in the scores)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from lm_eval_runner import TESTS, LmEvalRun, run_lm_eval

from lm_eval_stereo.core import near_ties
from lm_eval_stereo.core.near_ties import ALTERNATIVES, ENGINE_AGREEMENT_NATS, NEAR_TIE
from lm_eval_stereo.report import build_report, render_markdown, report_json
from lm_eval_stereo.results.run import load_run
from lm_eval_stereo.tasks.lm_eval_bias.offline_tasks import write_offline_tasks
from lm_eval_stereo.tasks.stereoset_multi import metrics as stereoset

#: the parity tests' per-request tolerances between backends, by the module that declares them (tests/vllm_tier.py, the
#: vLLM tier's: vLLM, vllm-prefix and served replicas against hf; tests/backends/test_hf_prefix.py: hf-prefix against hf)
PARITY_TOLERANCES = {"vllm_tier": 1e-3, "test_hf_prefix": 1e-4}


def test_the_threshold_is_the_parity_tests_largest_tolerance():
    """The agreement is what the parity tests allow a backend (not what one run measured): a backend that passes
    them may differ by this much a request, so a judgement within it can come out otherwise."""
    source = {name: next(TESTS.rglob(f"{name}.py")).read_text() for name in PARITY_TOLERANCES}
    assert "TOLERANCE = 1e-3" in source["vllm_tier"] and "TOLERANCE = 1e-4" in source["test_hf_prefix"]
    assert ENGINE_AGREEMENT_NATS == max(PARITY_TOLERANCES.values())
    assert near_ties.bound() == 1e-3 and near_ties.bound(2, 4) == 5e-4
    assert near_ties.bound(1, 0) == math.inf


def test_two_single_requests_tie_within_twice_the_agreement_exact_ties_included():
    assert near_ties.near_tie(-3.0, -3.0019) and near_ties.near_tie(-3.0, -3.0)
    assert not near_ties.near_tie(-3.0, -3.0021)
    assert near_ties.near_tie(-1.0, -1.0004, 2e-4, 2e-4) and not near_ties.near_tie(-1.0, -1.0005, 2e-4, 2e-4)
    assert not near_ties.near_tie(math.nan, math.nan) and not near_ties.near_tie(-math.inf, -math.inf)
    assert near_ties.overlap((0.1, 0.3), (0.3, 0.5)) and not near_ties.overlap((0.1, 0.29), (0.3, 0.5))


def test_rivals_are_the_options_another_backend_could_pick_instead_of_the_first_highest():
    one = near_ties.bound()
    assert near_ties.rivals([-5.0, -5.0015, -9.0], [one] * 3) == [1]
    assert near_ties.rivals([-5.0015, -5.0, -5.001], [one] * 3) == [0, 2]
    assert near_ties.rivals([-5.0, -5.0, -5.0], [one] * 3) == [1, 2]  # ties go to the first: the others are rivals
    assert near_ties.rivals([-5.0, -5.003, -9.0], [one] * 3) == []
    assert near_ties.rivals([-5.0, math.nan], [one] * 2) == []


def test_a_reversed_pair_swaps_different_scores_and_breaks_a_tie_either_way():
    assert near_ties.reversed_pair(2.0, 1.0) == [(1.0, 2.0)]
    (above, tied), (same, higher) = near_ties.reversed_pair(1.0, 1.0)
    assert above > tied == 1.0 and higher > same == 1.0


def _share(items):
    """A share headline (the items' mean ``x``) and a ratio of sums (``x`` over ``w``)."""
    xs = [item["x"] for item in items]
    return {"share": sum(xs) / len(xs), "ratio": sum(xs) / sum(item["w"] for item in items)}


def test_headline_ranges_are_the_extremes_over_every_near_tie_judged_either_way():
    items = [
        {"x": 1, "w": 1, NEAR_TIE: True, ALTERNATIVES: [{"x": 0, "w": 2}, {"x": 2}]},
        {"x": 0, "w": 1, NEAR_TIE: True, ALTERNATIVES: [{"x": 1}]},
        {"x": 1, "w": 3},
        {"x": 0, "w": 1, NEAR_TIE: True, ALTERNATIVES: []},
    ]
    found = near_ties.headline_ranges(_share, items, ["share", "ratio"])
    choices = [[{}, *item.get(ALTERNATIVES, [])] for item in items]
    every = [_share([{**item, **pick} for item, pick in zip(items, combo)]) for combo in itertools.product(*choices)]
    for name in ("share", "ratio"):
        assert found[f"{name}_near_tie_low"] == pytest.approx(min(values[name] for values in every)), name
        assert found[f"{name}_near_tie_high"] == pytest.approx(max(values[name] for values in every)), name
    assert near_ties.count(items) == 3
    without = near_ties.headline_ranges(_share, items[2:], ["share"])  # a near tie with nothing to flip moves nothing
    assert without == {"share_near_tie_low": 0.5, "share_near_tie_high": 0.5}


# ------------------------------------------------------------------------------------------- per benchmark family


def stereoset_doc(test: str = "intersentence") -> dict:
    from lm_eval_stereo.tasks.stereoset_multi.data import load_rows

    return next(row for row in load_rows("en") if row["test"] == test)


def test_stereoset_marks_each_comparison_an_item_is_judged_on():
    from lm_eval_stereo.tasks.stereoset_multi.task import item_from_scores

    doc = stereoset_doc()
    labels = [doc[f"c{c}_gold_label"] for c in (1, 2, 3)]
    by_label = {"stereotype": -2.0000, "anti-stereotype": -2.0003, "unrelated": -2.5}
    scores = [by_label[label] for label in labels]
    details = [{"loglik": 5 * score, "units": 5} for score in scores]
    bounds = [near_ties.bound(1, 5)] * 3  # one request over 5 tokens: 2e-4 each, a pair within 4e-4
    item = item_from_scores(doc, scores, details, "tokens", None, bounds)
    assert item[NEAR_TIE] is True
    assert item[ALTERNATIVES] == [{"stereotype": -2.0003, "anti-stereotype": -2.0}]  # pro could go either way
    assert stereoset._judgements([{**item, **item[ALTERNATIVES][0]}])[0][0] == 0.0  # flipped: not pro
    apart = item_from_scores(doc, [s - 0.001 * (label == "anti-stereotype") for s, label in zip(scores, labels)],
                             details, "tokens", None, bounds)  # fmt: skip
    assert apart[NEAR_TIE] is False and apart[ALTERNATIVES] == []
    tied = {label: -1.0 for label in stereoset.LABELS}
    marks = stereoset.near_tie_fields(tied, dict.fromkeys(stereoset.LABELS, 1e-3))
    assert len(marks[ALTERNATIVES]) == 6  # three tied comparisons, each broken either way
    without = item_from_scores(doc, scores, details, "tokens")  # no bounds (the masked LMs' one backend): no mark
    assert NEAR_TIE not in without


def test_s_jsd_marks_cps_and_b_s_jsd_near_ties_from_the_shared_tokens():
    from lm_eval_stereo.tasks.s_jsd.metrics import near_tie_fields, pair_scores

    def marks(more, less):
        values = pair_scores([math.exp(v) for v in more], [math.exp(v) for v in less], more, less)
        return values, near_tie_fields(values, more, less)

    values, found = marks([-1.0, -2.0, -3.0], [-1.0, -2.0, -3.004])  # 3 tokens a side: CPS within 6e-3
    assert values["cps"] == 1 and found[NEAR_TIE] and {"cps": 0} in found[ALTERNATIVES]
    assert {"binary": 0} in found[ALTERNATIVES]  # the distances' ranges overlap as well
    values, found = marks([-1.0, -2.0, -3.0], [-1.0, -2.0, -3.1])
    assert not found[NEAR_TIE] and found[ALTERNATIVES] == []
    # summed log-probabilities 1.08 apart (CPS clear), summed distances within the range the moves give them
    values, found = marks([-0.5, -2.0], [-0.3, -3.278])
    assert (values["cps"], values["binary"]) == (1, 1) and found == {NEAR_TIE: True, ALTERNATIVES: [{"binary": 0}]}


def test_rubia_marks_pairs_whose_mean_nlls_lie_within_their_bounds():
    from lm_eval_stereo.tasks.rubia.task import pair_near_ties, perplexity

    def item(total_pro, total_anti, tokens=4):
        found = {}
        for side, total in (("pro", total_pro), ("anti", total_anti)):
            found[f"nll_{side}"], found[f"ppl_{side}"] = perplexity(total, tokens)
        return found | pair_near_ties(found, {"pro": tokens, "anti": tokens})

    close = item(-8.0, -8.0007)  # mean NLLs 2.0 and 2.000175: within 2 x 1e-3/4
    assert close[NEAR_TIE]
    (swapped,) = close[ALTERNATIVES]
    assert swapped == {"ppl_pro": close["ppl_anti"], "ppl_anti": close["ppl_pro"]}
    assert not item(-8.0, -8.003)[NEAR_TIE]
    assert len(item(-8.0, -8.0)[ALTERNATIVES]) == 2  # a tie (not biased) could go either way


def _bare(task_class, **options):
    """A task object for its ``item`` alone (no lm_eval config: the documents are the benchmark's own)."""
    task = task_class.__new__(task_class)
    task.options = options
    return task


def test_mbbq_rivals_follow_its_length_normalisation_and_flip_the_answer_counts():
    from lm_eval_stereo.tasks.mbbq.data import load_docs
    from lm_eval_stereo.tasks.mbbq.task import MbbqChoiceTask, rival_answers

    assert rival_answers([-5.0, -5.0015, -9.0], ["a", "b", "c"]) == [1]
    # per character: -5.0 / 10 and -5.012 / 10 lie within 1e-4 + 1e-4; unnormalised they are 0.012 apart
    assert rival_answers([-5.0, -5.0012, -9.0], ["x" * 10] * 3, length_norm=True) == [1]
    assert rival_answers([-5.0, -5.012, -9.0], ["x" * 10] * 3) == []
    task = _bare(MbbqChoiceTask, mbbq_length_norm=False, mbbq_keep_undetermined=False)
    doc = next(doc for doc in load_docs("en", False) if doc["context_condition"] == "ambig")
    unknown = int(doc["unknown_loc"])
    other = next(index for index in range(3) if index != unknown)
    lls = [-20.0] * 3
    lls[unknown], lls[other] = -4.0, -4.0005
    item = task.item(doc, [(value, False) for value in lls])
    assert item["predictions"] == [unknown] and item["correct"] == 1 and item[NEAR_TIE]
    (alternative,) = item[ALTERNATIVES]
    assert alternative["predictions"] == [other] and alternative["correct"] == 0
    lls[other] = -4.01
    assert not task.item(doc, [(value, False) for value in lls])[NEAR_TIE]


def test_kobbq_and_gerbbq_multiple_choice_rivals_are_their_other_answers():
    from lm_eval_stereo.tasks.german_gender_bias.data import load_gerbbq
    from lm_eval_stereo.tasks.german_gender_bias.gerbbq.task import GerbbqChoiceTask
    from lm_eval_stereo.tasks.kobbq.data import choice_docs, load_prompts, load_samples
    from lm_eval_stereo.tasks.kobbq.task import CHOICE_PROMPT, KobbqChoiceTask

    doc = choice_docs(load_samples(), load_prompts()[CHOICE_PROMPT])[0]
    item = _bare(KobbqChoiceTask).item(doc, [(-3.0, False), (-3.0009, False), (-3.0011, False)])
    assert item["answer_read"] == "A" and item[NEAR_TIE]
    assert [alternative["answer_read"] for alternative in item[ALTERNATIVES]] == ["B", "C"]
    assert all(alternative["counts"] != item["counts"] for alternative in item[ALTERNATIVES])
    far = _bare(KobbqChoiceTask).item(doc, [(-3.0, False), (-3.0021, False), (-9.0, False)])
    assert not far[NEAR_TIE] and far[ALTERNATIVES] == []

    doc = {**load_gerbbq("amb")[0], "condition": "amb"}
    task = _bare(GerbbqChoiceTask, exclude_undetermined=True)
    item = task.item(doc, [(-7.0, False), (-7.0, False), (-12.0, False)])  # an exact tie: A, B its rival
    assert item["letters"] == ["A"] and item[NEAR_TIE]
    assert [alternative["letters"] for alternative in item[ALTERNATIVES]] == [["B"]]


def test_gest_marks_a_template_whose_two_words_lie_within_the_agreement_with_nothing_to_flip():
    from lm_eval_stereo.tasks.gest.data import load_gest
    from lm_eval_stereo.tasks.gest.task import GestEnglishTask

    doc = load_gest("1.1")[0]
    task = _bare(GestEnglishTask)
    close = task.item(doc, [(-2.0, False), (-2.0018, False), (-3.0, False), (-4.0, False)])
    assert close[NEAR_TIE] is True and ALTERNATIVES not in close  # g_s rests on no item's sign
    assert task.item(doc, [(-2.0, False), (-2.0025, False), (-3.0, False), (-4.0, False)])[NEAR_TIE] is False


def test_gest_g_s_moves_by_at_most_a_factor_exp_4_agreement_over_ln_10_between_backends():
    """What docs/RUNNING.md says of a continuous headline: every GEST score (log10 P(male) - log10 P(female)) moves by
    at most 2 x the agreement / ln 10, so g_s = e^(masculine mean - feminine mean) by at most a factor
    e^(4 x agreement / ln 10) (0.17%), reached where every masculine stereotype's scores rise and every feminine one's
    fall."""
    from lm_eval_stereo.tasks.gest.metrics import FEMALE_STEREOTYPES, STEREOTYPES, compute

    items = [{"stereotype": s, "score": 0.05 * ((7 * s + k) % 11 - 5)} for s in STEREOTYPES for k in range(3)]
    move = 2 * ENGINE_AGREEMENT_NATS / math.log(10)
    worst = [{**item, "score": item["score"] + (-move if item["stereotype"] in FEMALE_STEREOTYPES else move)}
             for item in items]  # fmt: skip
    factor = compute(worst)["gs"] / compute(items)["gs"]
    assert factor == pytest.approx(math.exp(4 * ENGINE_AGREEMENT_NATS / math.log(10)), rel=1e-12)
    assert 1.0017 < factor < 1.0018


# --------------------------------------------------------------------------------------------- through lm_eval

TASKS = ("stereoset_multi_en", "gest_en")
#: lm_eval's own tasks the plugin's readers declare (their results stay lm_eval's; the report counts their near ties)
LM_EVAL_TASKS = ("crows_pairs_english", "esbbq_age")
#: the factor the final layer norm is scaled by: next-token log-probabilities within about 1e-3 of each other
FLATTEN = 0.01


@pytest.fixture(scope="module")
def flat_causal(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeded tiny causal LM with its final layer norm scaled by :data:`FLATTEN`: candidates' scores lie within a
    few 1e-4 of each other, so some of them are near ties and others not."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tmp_path_factory.mktemp("flat_causal")
    model = AutoModelForCausalLM.from_pretrained(tiny_causal)
    with torch.no_grad():
        model.transformer.ln_f.weight.mul_(FLATTEN)
        model.transformer.ln_f.bias.mul_(FLATTEN)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny_causal).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def run(flat_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    offline = tmp_path_factory.mktemp("offline_tasks")
    write_offline_tasks(offline)
    result = run_lm_eval(
        ["--model", "hf", "--model_args", f"pretrained={flat_causal},dtype=float32", "--tasks",
         ",".join((*TASKS, *LM_EVAL_TASKS)), "--include_path", str(offline), "--limit", "12", "--log_samples"],
        tmp_path_factory.mktemp("near_ties"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def logged_items(run: LmEvalRun, task: str) -> list[tuple[dict, dict]]:
    """(sample, item) of every logged document of ``task`` (the item under the task's first metric)."""
    first = {"stereoset_multi_en": "lms", "gest_en": "gs"}[task]
    return [(sample, sample[first]) for sample in run.samples[task]]


def test_the_count_is_the_items_whose_logged_log_likelihoods_compare_within_the_bounds(run):
    found = 0
    for sample, item in logged_items(run, "stereoset_multi_en"):
        lls = [float(answer[0][0]) for answer in sample["resps"]]
        per_candidate = len(lls) // 3
        scores, bounds = {}, {}
        for index, candidate in enumerate(item["candidates"]):
            total = sum(lls[index * per_candidate : (index + 1) * per_candidate])
            assert total == pytest.approx(candidate["loglik"], abs=1e-9)
            scores[candidate["gold_label"]] = total / candidate["units"]
            bounds[candidate["gold_label"]] = per_candidate * ENGINE_AGREEMENT_NATS / candidate["units"]
        tie = any(
            abs(scores[one] - scores[other]) <= bounds[one] + bounds[other] for one, other in stereoset.JUDGED_PAIRS
        )
        assert item[NEAR_TIE] is tie, item["key"]
        found += tie
    assert 0 < found < len(run.samples["stereoset_multi_en"]), "the flattened model gives near ties and clear items"
    assert run.metric("stereoset_multi_en", "near_ties") == found
    gest = 0
    for sample, _ in logged_items(run, "gest_en"):
        lls = [float(answer[0][0]) for answer in sample["resps"]]
        gest += abs(lls[0] - lls[1]) <= 2 * ENGINE_AGREEMENT_NATS or abs(lls[2] - lls[3]) <= 2 * ENGINE_AGREEMENT_NATS
    assert gest > 0 and run.metric("gest_en", "near_ties") == gest
    assert "near_ties" in run.stdout.split("stereoset_multi_en")[1].split("\n\n")[0]  # in lm_eval's console table


def test_no_headline_changes_and_the_range_is_every_near_tie_judged_either_way(run):
    items = [item for _, item in logged_items(run, "stereoset_multi_en")]
    pro = [float(item["stereotype"] > item["anti-stereotype"]) for item in items]
    assert run.metric("stereoset_multi_en", "ss") == pytest.approx(100 * sum(pro) / len(pro))  # as the reference
    options = [
        {pro_of(item), *(pro_of({**item, **alternative}) for alternative in item[ALTERNATIVES])} for item in items
    ]
    low, high = (100 * sum(pick(values) for values in options) / len(items) for pick in (min, max))
    assert (
        run.metric("stereoset_multi_en", "ss_near_tie_low"),
        run.metric("stereoset_multi_en", "ss_near_tie_high"),
    ) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    assert low <= run.metric("stereoset_multi_en", "ss") <= high and low < high
    assert (
        run.metric("gest_en", "gs_near_tie_low")
        == run.metric("gest_en", "gs_near_tie_high")
        == run.metric("gest_en", "gs")
    )


def pro_of(item: dict) -> float:
    return float(item["stereotype"] > item["anti-stereotype"])


def test_the_report_says_beside_ss_what_another_backend_could_give(run):
    report = build_report([run.output_dir])
    markdown = render_markdown(report, details=True)
    ss, low, high = (run.metric("stereoset_multi_en", name) for name in ("ss", "ss_near_tie_low", "ss_near_tie_high"))
    count = run.metric("stereoset_multi_en", "near_ties")
    message = (
        f"ss {ss:.1f} could be anywhere from {low:.1f} to {high:.1f} on another backend: {count} of the task's items are "
        "judged on a log-likelihood difference within the backends' agreement (0.001 nats a request), counted as "
        "near_ties, not re-scored"
    )
    assert message in markdown
    meaning = "whose headline another backend could move"
    (grouped,) = [line for line in markdown.splitlines() if line.startswith("- ⚠") and meaning in line]
    assert " near ties: " in grouped and "stereoset_multi_en" in grouped
    assert "gest_en" not in grouped  # its near ties move no headline
    (cell,) = report_json(report)["tasks"]["stereoset_multi_en"].values()
    assert f"{low:.1f} to {high:.1f} on another backend ({count} near ties)" in cell["metrics"]["ss"]["caveats"]
    (gest,) = report_json(report)["tasks"]["gest_en"].values()
    assert not any("near ties" in caveat for caveat in gest["metrics"]["gs"]["caveats"])  # g_s moves by no judgement
    section = markdown.split("## gest_en")[1].split("\n## ")[0]
    lines = [[cell.strip() for cell in line.split("|")] for line in section.splitlines() if line.startswith("|")]
    at = next(index for index, cells in enumerate(lines) if "near_ties" in cells)
    row = lines[at + 2]  # the header, its rule, the model's row: the count in the task's table
    assert row[lines[at].index("near_ties")] == str(run.metric("gest_en", "near_ties"))


def test_lm_evals_own_tasks_keep_lm_evals_results_and_the_report_counts_their_near_ties(run):
    """CrowS-Pairs (two sentences) and EsBBQ (eleven options, the unknown ones booked as one answer): lm_eval's results
    hold no near-tie field (lm_eval's own numbers, unchanged); the reader counts the near ties from the logged
    log-likelihoods and gives each headline its range, pct_stereotype's exactly as every near-tie pair judged either
    way."""
    for task in LM_EVAL_TASKS:
        assert not any("near_tie" in key for key in run.results["results"][task]), task
    (path,) = run.output_dir.rglob("results_*.json")
    loaded = load_run(path)
    crows = loaded.values("crows_pairs_english")
    pairs = [[float(answer[0][0]) for answer in sample["resps"]] for sample in run.samples["crows_pairs_english"]]
    tied = [abs(more - less) <= 2 * ENGINE_AGREEMENT_NATS for more, less in pairs]
    assert 0 < sum(tied) < len(pairs) and crows["near_ties"] == sum(tied)
    stereotyped = [float(more > less) for more, less in pairs]
    low = (sum(stereotyped) - sum(s for s, tie in zip(stereotyped, tied) if tie)) / len(pairs)
    high = (sum(stereotyped) + sum(1 - s for s, tie in zip(stereotyped, tied) if tie)) / len(pairs)
    assert crows["pct_stereotype"] == pytest.approx(sum(stereotyped) / len(pairs))  # lm_eval's, unchanged
    assert (crows["pct_stereotype_near_tie_low"], crows["pct_stereotype_near_tie_high"]) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    esbbq = loaded.values("esbbq_age")
    found = 0
    for sample in run.samples["esbbq_age"]:
        lls = [float(answer[0][0]) for answer in sample["resps"]]
        chosen = min(lls.index(max(lls)), 2)  # lm_eval's esbbq: every unknown wording is answer 2
        found += any(min(i, 2) != chosen and max(lls) - ll <= 2 * ENGINE_AGREEMENT_NATS for i, ll in enumerate(lls))
    assert esbbq["near_ties"] == found
    report = report_json(build_report([run.output_dir]))
    (cell,) = report["tasks"]["crows_pairs_english"].values()
    assert cell["counts"]["near_ties"] == sum(tied)
    if low < high:
        caveat = f"to {high:.3f} on another backend ({sum(tied)} near ties)"
        assert any(caveat in text for text in cell["metrics"]["pct_stereotype"]["caveats"])
