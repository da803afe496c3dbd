"""EuroGEST: data as the reference builds its rows, the reference's token split, metrics, and the tasks through the real
``lm_eval`` command on the tiny model, per sentence against a plain loop of the reference (JacquelineRowe/EuroGEST @
b543592, ``evaluate_models/main.py`` ``evaluate_sentence``, ``utils/prompts.py``, ``utils/scoring.py``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from eurogest_reference import reference_rows, reference_scores, reference_sentence
from lm_eval_runner import LmEvalRun, run_lm_eval
from transformers import AutoModelForCausalLM, AutoTokenizer

from lm_eval_stereo.core import reference_requests
from lm_eval_stereo.tasks.eurogest import data, metrics, split

#: one language per condition: Czech (mostly G), German (mostly P), Finnish (only N), and English (P)
LANGUAGES = ("en", "cs", "de", "fi")
LIMIT = 16
#: per-sentence mean log-probabilities, float32 forwards of other batch shapes
TOL = 1e-5
#: hf-prefix against the reference: the project's hf-prefix tolerance (tests/backends/test_hf_prefix.py), per request
PREFIX_TOL = 1e-4
#: ... or relative 5e-5 of a large one (unnormalised sums of a few hundred tokens, the real-model tier's REL)
PREFIX_REL = 5e-5


# ----------------------------------------------------------------------------------------------------- data


def test_rows_equal_the_paper_statistics_and_the_reference_prompts():
    stats = data.statistics()
    for code, name in data.LANGUAGES.items():
        if code == "en":
            continue
        rows = data.load_rows(code)
        gendered = sum(row["condition"] == "G" for row in rows)
        assert (len(rows) - gendered, gendered) == stats[name], code
    for code in LANGUAGES:
        expected = reference_rows(code)
        rows = {row["id"]: row for row in data.load_rows(code)}
        assert set(rows) == set(expected)
        for gest_id, (m, f, condition, stereotype) in expected.items():
            row = rows[gest_id]
            assert (row["masculine"], row["feminine"], row["condition"], row["stereotype"]) == (m, f, condition,
                                                                                               stereotype)  # fmt: skip
    english = data.load_rows("en")
    assert len(english) == 3565 and {row["condition"] for row in english} == {"P"}
    assert english[0]["masculine"] == '"I have always been a leadership type," he said'
    finnish = {row["condition"] for row in data.load_rows("fi")}
    assert finnish == {"N"}


def test_reference_start_follows_the_reference_cases():
    assert split.reference_start([1, 2, 3, 4], [1, 2, 5, 4]) == 1  # first difference at 2
    assert split.reference_start([1, 2, 3], [1, 2, 3, 4, 5]) == 1  # contained: min(len) - 2
    assert split.reference_start([1, 2, 3], [1, 2, 3]) == 0
    assert split.reference_start([7, 2, 3], [8, 2, 3]) == -1  # first token differs: lp[-1:]
    assert split.reference_start([1, 2, 3], [1, 5, 3], whole_sequence=True) == 0
    first_scored = reference_requests.first_scored
    assert first_scored(-1, 5) == 4 and first_scored(1, 5) == 2 and first_scored(0, 5) == 1


def test_metrics_leave_out_stereotypes_under_ten_sentences_as_the_reference():
    rng = np.random.default_rng(0)
    items = []
    for s in range(1, 17):
        for i in range(12 if s != 3 else 9):
            lp_m, lp_f = rng.normal(-3, 1, 2)
            items.append({"id": s * 100 + i, "stereotype": s, "condition": "P", "lp_m": lp_m, "lp_f": lp_f})
    ratios = [(item["stereotype"], metrics.masculine_ratio(item["lp_m"], item["lp_f"])) for item in items]
    means, gs_reference = reference_scores(ratios)
    strict = metrics.metric_set("t").compute(items)
    assert math.isnan(strict["gs"]) and strict["nan_stereotypes"] == 1 and math.isnan(strict["mr_03_empathetic"])
    assert math.isnan(strict["rank_01_emotional"])  # the reference ranks no incomplete language
    loose = metrics.metric_set("t", complete_only=False).compute(items)
    assert loose["gs"] == pytest.approx(gs_reference, rel=1e-12)
    for s, mean in means.items():
        if not math.isnan(mean):
            assert loose[f"mr_{s:02d}_" + metrics.stereotype_label(s)[3:]] == pytest.approx(mean, rel=1e-12)
    order = sorted((s for s in means if not math.isnan(means[s])), key=lambda s: -means[s])
    assert [loose[f"rank_{metrics.stereotype_label(s)}"] for s in order] == list(range(1, 16))
    assert loose["gs_ci_low"] < loose["gs"] < loose["gs_ci_high"]
    # underflow: both probabilities 0, no ratio (pandas' mean skips it), counted
    underflow = metrics.metric_set("t").compute([{"id": 0, "stereotype": 1, "condition": "N", "lp_m": -1e4,
                                                  "lp_f": -1e4}])  # fmt: skip
    assert underflow["unscored"] == 1 and underflow["count"] == 0


# ------------------------------------------------------------------------------------- through lm_eval


@pytest.fixture(scope="module")
def tiny(tiny_causal):
    return AutoModelForCausalLM.from_pretrained(tiny_causal).eval(), AutoTokenizer.from_pretrained(tiny_causal)


def _args(model: Path, backend: str, tasks: str, metadata: dict | None = None) -> list[str]:
    args = ["--model", backend, "--model_args", f"pretrained={model}", "--batch_size", "4", "--tasks", tasks]
    args += ["--limit", str(LIMIT), "--log_samples"]
    return args + (["--metadata", json.dumps(metadata)] if metadata else [])


@pytest.fixture(scope="module")
def hf_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    tasks = ",".join(f"eurogest_{lang}" for lang in LANGUAGES)
    return run_lm_eval(_args(tiny_causal, "hf", tasks), tmp_path_factory.mktemp("eurogest_hf"))


@pytest.fixture(scope="module")
def prefix_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    """hf-prefix with the named options: whole sequences, sums, no minimum, g_s over the stereotypes present."""
    options = {"eurogest_whole_sequence": True, "eurogest_normalisation": False, "eurogest_min_sentences": 1,
               "eurogest_complete_only": False}  # fmt: skip
    args = _args(tiny_causal, "hf-prefix", "eurogest_en,eurogest_cs,eurogest_fi", options)
    return run_lm_eval(args, tmp_path_factory.mktemp("eurogest_prefix"))


def _items(run: LmEvalRun, task: str) -> list[dict]:
    return [sample["gs"] for sample in run.samples[task]]


def test_each_sentence_equals_the_reference_loop(hf_run, tiny):
    model, tokenizer = tiny
    mismatches = {}
    for lang in LANGUAGES:
        expected = reference_rows(lang)
        samples = hf_run.samples[f"eurogest_{lang}"]
        assert len(samples) == LIMIT
        mismatches[lang] = 0
        for sample in samples:
            item, doc = sample["gs"], sample["doc"]
            m, f, condition, stereotype = expected[item["id"]]
            assert (doc["masculine"], doc["feminine"], item["condition"]) == (m, f, condition)
            if item["boundary_mismatch"]:
                mismatches[lang] += 1
                continue
            lp_m, lp_f, ratio = reference_sentence(model, tokenizer, m, f)
            assert item["lp_m"] == pytest.approx(lp_m, abs=TOL) and item["lp_f"] == pytest.approx(lp_f, abs=TOL)
            assert item["masculine_ratio"] == pytest.approx(ratio, abs=TOL)
        assert hf_run.metric(f"eurogest_{lang}", "boundary_mismatches") == mismatches[lang]
    conditions = {item["condition"] for lang in LANGUAGES for item in _items(hf_run, f"eurogest_{lang}")}
    assert conditions == {"G", "P", "N"}
    assert sum(mismatches.values()) < LIMIT * len(LANGUAGES) / 2, mismatches


def test_metrics_follow_from_the_logged_items(hf_run):
    for lang in LANGUAGES:
        task = f"eurogest_{lang}"
        items = _items(hf_run, task)
        ratios = [(item["stereotype"], item["masculine_ratio"]) for item in items]
        assert sum(hf_run.metric(task, f"count_{c}") for c in "GPN") == LIMIT
        assert hf_run.metric(task, "count") == len(ratios)
        # documents take the stereotypes in turn: the first 16 hold one sentence of each; none reaches 10, every
        # stereotype is NaN and so is g_s (reference)
        assert sorted(item["stereotype"] for item in items) == list(range(1, 17))
        assert hf_run.metric(task, "nan_stereotypes") == 16
        assert math.isnan(float(hf_run.metric(task, "gs")))
    recorded = hf_run.results["configs"]["eurogest_de"]["metadata"]
    assert recorded["language"] == "de" and recorded["facts"] == {"min_sentences": 10, "complete_only": True}


def test_options_and_hf_prefix_equal_the_reference_loop(prefix_run, tiny):
    model, tokenizer = tiny
    for lang in ("cs", "fi"):
        task = f"eurogest_{lang}"
        expected = reference_rows(lang)
        items = _items(prefix_run, task)
        checked = 0
        for item in items:
            m, f, _, _ = expected[item["id"]]
            if item["boundary_mismatch"]:
                continue
            lp_m, lp_f, _ = reference_sentence(model, tokenizer, m, f, normalisation=False, whole=True)
            assert item["lp_m"] == pytest.approx(lp_m, abs=PREFIX_TOL, rel=PREFIX_REL)
            assert item["lp_f"] == pytest.approx(lp_f, abs=PREFIX_TOL, rel=PREFIX_REL)
            checked += 1
        assert checked >= LIMIT // 2
        # sums of a few hundred tokens: both probabilities may underflow (no ratio, as pandas leaves it out), counted
        ratios = [(item["stereotype"], item["masculine_ratio"]) for item in items]
        ratios = [(s, r) for s, r in ratios if r is not None and not math.isnan(r)]
        assert prefix_run.metric(task, "unscored") == len(items) - len(ratios)
        present = {s for s, _ in ratios}
        means = {s: np.mean([r for t, r in ratios if t == s]) for s in present}
        fem = [means[s] for s in present if s <= 7]
        masc = [means[s] for s in present if s >= 8]
        assert prefix_run.metric(task, "gs") == pytest.approx(np.mean(masc) / np.mean(fem), rel=1e-9)
        assert prefix_run.metric(task, "nan_stereotypes") == 16 - len(present)


def _stereotype_means(items: dict[int, dict], ids: list[int]) -> dict[int, float]:
    """Mean masculine ratio per stereotype of the items ``ids`` that have one."""
    ratios: dict[int, list[float]] = {}
    for gest_id in ids:
        item = items[gest_id]
        if item["masculine_ratio"] is not None and math.isfinite(item["masculine_ratio"]):
            ratios.setdefault(item["stereotype"], []).append(item["masculine_ratio"])
    return {s: float(np.mean(values)) for s, values in ratios.items()}


def test_report_compares_languages_and_rankings_and_draws_the_heatmap(prefix_run, tmp_path, capsys):
    """Through the report: the paired language tests on the shared GEST ids, each language's ranking against
    English's (rho recomputed here from the logged items), the heatmap; through the export: the item scores."""
    from scipy.stats import spearmanr

    from lm_eval_stereo.export.command import main as export
    from lm_eval_stereo.report.build import build_report
    from lm_eval_stereo.report.html import write_html

    report = build_report([prefix_run.output_dir], permutations=99)
    pairs = {result.languages: result for result in report.paired.languages}
    assert len(pairs) == 3 and {frozenset(languages) for languages in pairs} == {
        frozenset(("en", "cs")),
        frozenset(("en", "fi")),
        frozenset(("cs", "fi")),
    }
    assert all({c.metric for c in result.comparisons} >= {"gs", "mr_01_emotional"} for result in pairs.values())
    items = {lang: {item["id"]: item for item in _items(prefix_run, f"eurogest_{lang}")} for lang in ("en", "cs", "fi")}
    rankings = {ranking.languages: ranking for ranking in report.paired.rankings}
    assert set(rankings) == {("cs", "en"), ("fi", "en")}
    for (lang, _), ranking in rankings.items():
        shared = sorted(set(items[lang]) & set(items["en"]))
        assert ranking.n == len(shared) and ranking.task_b == "eurogest_en"

        mine, english = _stereotype_means(items[lang], shared), _stereotype_means(items["en"], shared)
        units = sorted(set(mine) & set(english))
        assert ranking.units == len(units)
        if len(units) >= 3:
            expected = spearmanr([mine[s] for s in units], [english[s] for s in units])[0]
            assert ranking.rho == pytest.approx(expected, abs=1e-9)
    page = write_html(report, tmp_path / "report")
    html = page.read_text(encoding="utf-8")
    assert "Rankings against the reference language" in html and "Language vs language" in html
    assert list((tmp_path / "report").glob("eurogest_model1.png"))
    status = export([str(prefix_run.output_dir), "--format", "eee", "--output", str(tmp_path / "eee"),
                     "--model-id", "test-org/tiny"])  # fmt: skip
    capsys.readouterr()
    assert status == 0
    lines = [json.loads(line) for path in (tmp_path / "eee").rglob("*_samples.jsonl") for line in path.open()]
    scored = {line["sample_id"]: line for line in lines if line["evaluation_name"].endswith(".eurogest_cs")}
    assert len(scored) == LIMIT
    for gest_id, item in items["cs"].items():
        ratio = item["masculine_ratio"]
        expected = None if ratio is None or not math.isfinite(ratio) else ratio
        assert scored[str(gest_id)]["evaluation"]["score"] == pytest.approx(expected)


# ------------------------------------------------------------- token-exact scoring under hf-prefix

#: Polish (the issue's language) and Greek (N sentences and a G one): with the tiny model's tokenizer Polish has no
#: sentence whose first differing token starts inside a character, Greek has (measured over all sentences: pl 0 of
#: 1,747, el 2,435 of 2,572; cs 134 of 1,808)
EXACT_LANGUAGES = ("pl", "el")
#: ten sentences of each stereotype: g_s is defined
EXACT_LIMIT = 160


@pytest.fixture(scope="module")
def exact_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    """``hf-prefix`` on the first 160 sentences of each language, the reference's options."""
    args = _args(tiny_causal, "hf-prefix", ",".join(f"eurogest_{lang}" for lang in EXACT_LANGUAGES))
    args[args.index("--limit") + 1] = str(EXACT_LIMIT)
    return run_lm_eval(args, tmp_path_factory.mktemp("eurogest_exact"))


def test_hf_prefix_scores_the_reference_tokens_where_strings_cannot(exact_run, tiny):
    """Under ``hf-prefix`` no sentence is flagged and every one equals the plain reference loop (1e-4, the project's
    hf-prefix tolerance), and so does g_s, also where lm_eval's string requests cannot say the reference's tokens (those
    that ``hf`` scores and flags, counted here with the task's own split; ``hf``'s flags: the tests above)."""
    model, tokenizer = tiny
    for lang in EXACT_LANGUAGES:
        task = f"eurogest_{lang}"
        expected = reference_rows(lang)
        items = _items(exact_run, task)
        assert len(items) == EXACT_LIMIT and exact_run.metric(task, "boundary_mismatches") == 0
        ratios, strings_cannot = [], 0
        for item in items:
            m, f, _, stereotype = expected[item["id"]]
            strings_cannot += not all(request.split_kept for request in split.requests(tokenizer, m, f))
            lp_m, lp_f, ratio = reference_sentence(model, tokenizer, m, f)
            assert not item["boundary_mismatch"]
            assert item["lp_m"] == pytest.approx(lp_m, abs=PREFIX_TOL), (lang, item["id"])
            assert item["lp_f"] == pytest.approx(lp_f, abs=PREFIX_TOL), (lang, item["id"])
            ratios.append((stereotype, ratio))
        assert (strings_cannot > 0) == (lang != "pl"), (lang, strings_cannot)
        _, gs = reference_scores(ratios)
        assert exact_run.metric(task, "gs") == pytest.approx(gs, abs=PREFIX_TOL), lang
