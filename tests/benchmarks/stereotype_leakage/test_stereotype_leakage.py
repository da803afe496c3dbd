"""Stereotype leakage (Cao, Sotnikova et al. 2025): human tables, SeT, ILPS, the leakage regression."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures_mlm import *  # noqa: F403  (session fixtures tiny_bert, tiny_xlmr)
from lm_eval_encoding import split_survives
from lm_eval_runner import LmEvalRun, run_lm_eval

from bench.set_reference import minimal_update, output_layer, reference_set, set_score
from lm_eval_stereo.tasks.stereotype_leakage import data, human, reference, templates

# ---------------------------------------------------------------------------------------------- human stereotypes


@pytest.mark.parametrize("lang", list(data.LANGUAGES))
def test_human_aggregation_equals_the_published_tables(lang: str) -> None:
    ours, published = human.human_associations(lang), human.published_associations(lang)
    assert ours.shape == (32, 30)
    assert ours.isna().equals(published.isna())
    rated = published.notna().to_numpy()
    assert rated.sum() == {"en": 704, "ru": 704, "zh": 672, "hi": 736}[lang]
    np.testing.assert_allclose(ours.to_numpy()[rated], published.to_numpy()[rated], rtol=0, atol=1e-8)


def test_annotators_and_the_unrated_rule() -> None:
    assert {lang: len(data.load_annotations(lang)) for lang in data.LANGUAGES} == {
        "en": 34,
        "ru": 36,
        "zh": 41,
        "hi": 40,
    }
    ru = human.annotator_counts("ru")
    assert ru["Brahmin person"] == 1  # the typo "Bahmin people", mapped; too few annotators -> unrated
    assert human.human_associations("ru")["Brahmin person"].isna().all()
    hi = human.annotator_counts("hi")
    assert hi["immigrant"] == 1 and human.human_associations("hi")["immigrant"].notna().all()  # shared: always kept
    assert hi["Texan"] == 5 and human.human_associations("hi")["Texan"].notna().all()


def test_human_correlations_cover_shared_groups_and_language_pairs() -> None:
    table = human.human_correlations()
    assert list(table.columns) == ["EN-RU", "EN-ZH", "EN-HI", "RU-ZH", "RU-HI", "ZH-HI", "mean"]
    assert list(table.index) == [*data.SHARED_GROUPS, "mean"]
    en, ru = human.human_associations("en"), human.human_associations("ru")
    assert table.loc["man", "EN-RU"] == pytest.approx(np.corrcoef(en["man"], ru["man"])[0, 1])
    assert table.loc["mean", "EN-RU"] == pytest.approx(table.loc[list(data.SHARED_GROUPS), "EN-RU"].mean())
    assert table.notna().all().all()


def test_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown stereotype-leakage language 'de'.*en, ru, zh, hi"):
        human.human_associations("de")


# ---------------------------------------------------------------------------------------------- SeT closed form


@pytest.mark.parametrize("seed", range(6))
def test_set_closed_form_equals_the_iterative_update(seed: int) -> None:
    import torch

    from lm_eval_stereo.models.sensitivity import minimum_update_norm, sensitivity_scores

    rng = np.random.default_rng(seed)
    vocab, dim, rows = 40, 6, 8
    scale = [0.05, 0.2, 1.0][seed % 3]  # small scales give norms < 1, large ones NaN scores
    weights = rng.normal(size=(vocab, dim + 1)) * scale
    xs = np.concatenate([rng.normal(size=(rows, dim)), np.ones((rows, 1))], axis=1)
    targets = rng.integers(0, vocab, size=rows)
    logits = torch.tensor(xs @ weights.T)
    norms = minimum_update_norm(logits, torch.tensor(targets), torch.tensor((xs**2).sum(axis=1))).numpy()
    for row in range(rows):
        expected = np.linalg.norm(minimal_update(weights, xs[row], targets[row]))
        assert norms[row] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    expected_scores = [set_score(weights, xs[r], targets[r]) for r in range(rows)]
    scores = sensitivity_scores(logits, torch.tensor(targets), torch.tensor((xs**2).sum(axis=1))).numpy()
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_set_is_zero_when_the_gold_token_already_leads_by_one() -> None:
    import torch

    from lm_eval_stereo.models.sensitivity import sensitivity_scores

    logits = torch.tensor([[5.0, 1.0, 3.9], [0.0, 0.0, 0.5]])
    scores = sensitivity_scores(logits, torch.tensor([0, 2]), torch.tensor([2.0, 2.0]))
    assert scores[0] == 0.0 and scores[1] < 0.0


# ---------------------------------------------------------------------------------------------- leakage regression


def _fixture_tables(seed: int = 0) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    rng = np.random.default_rng(seed)
    humans = {lang: human.human_associations(lang) for lang in data.LANGUAGES}
    trait_effect = rng.normal(size=(32, 1))
    values = 0.5 * humans["en"].fillna(0).to_numpy() + trait_effect + rng.normal(size=(32, 30))
    return humans, pd.DataFrame(values, index=list(data.TRAITS), columns=list(data.GROUPS))


def test_leakage_regression_equals_statsmodels_on_a_fixture_table() -> None:
    import statsmodels.formula.api as smf

    from lm_eval_stereo.tasks.stereotype_leakage import metrics

    humans, model = _fixture_tables()
    frame = metrics.leakage_frame(model, humans, scale=100.0)
    assert len(frame) == 960 and list(frame.columns) == ["trait", "group", "model", "H_EN", "H_RU", "H_ZH", "H_HI"]
    fit = metrics.fit_leakage(frame, "ru")
    expected = smf.mixedlm("model ~ H_EN + H_RU + H_ZH + H_HI", frame, groups="trait").fit()  # REML by default
    for lang, column in zip(data.LANGUAGES, ["H_EN", "H_RU", "H_ZH", "H_HI"]):
        assert fit.coef[lang] == pytest.approx(expected.params[column], rel=1e-10)
        assert fit.p[lang] == pytest.approx(expected.pvalues[column], rel=1e-8)
    assert fit.coef["en"] == pytest.approx(50.0, rel=0.1) and fit.p["en"] < 1e-6
    assert fit.leaks() == ["en"] and fit.n_leaks == 1 and fit.own_coef == fit.coef["ru"] and fit.cells == 960
    assert metrics.fit_leakage(frame, "en").n_leaks == 0  # the target's own language is no leak


def test_unrated_cells_zero_or_dropped_and_nan_model_cells_dropped() -> None:
    from lm_eval_stereo.tasks.stereotype_leakage import metrics

    humans, model = _fixture_tables()
    model.iloc[0, 0] = np.nan
    zero = metrics.leakage_frame(model, humans)
    drop = metrics.leakage_frame(model, humans, unrated="drop")
    rated_everywhere = sum(all(humans[lang][g].notna().all() for lang in humans) for g in data.GROUPS)
    assert len(zero) == 959 and not zero.isna().any().any()
    assert len(drop) == 32 * rated_everywhere - 1 and rated_everywhere == 19  # 18 shared + migrant worker
    with_mono = metrics.leakage_frame(model, humans, mono=model * 2)
    fit = metrics.fit_leakage(with_mono, "en")
    assert fit.mono_coef == pytest.approx(0.5, rel=1e-4)  # model = mono / 2 exactly
    with pytest.raises(ValueError, match="unrated must be one of zero, drop"):
        metrics.leakage_frame(model, humans, unrated="impute")


def test_association_table_pearson_and_too_small_fits() -> None:
    from lm_eval_stereo.tasks.stereotype_leakage import metrics

    table = metrics.association_table([("woman", "warm", 1.0), ("woman", "warm", 3.0), ("man", "cold", np.nan)])
    assert table.loc["warm", "woman"] == 2.0 and np.isnan(table.loc["cold", "man"]) and table.notna().sum().sum() == 1
    humans, model = _fixture_tables()
    assert metrics.pearson(model, humans["en"]) == pytest.approx(
        np.corrcoef(
            model.to_numpy()[humans["en"].notna().to_numpy()], humans["en"].to_numpy()[humans["en"].notna().to_numpy()]
        )[0, 1]
    )
    fit = metrics.fit_leakage(metrics.leakage_frame(table, humans), "en")
    assert np.isnan(fit.coef["en"]) and fit.n_leaks == 0 and "too few cells" in fit.notes[0]


# ---------------------------------------------------------------------------------------------- templates


def test_template_runs_as_the_reference_runs_them() -> None:
    counts = {(lang, s): len({r.id.split("-")[0] for r in templates.recipes(lang, s)}) for lang in data.LANGUAGES
              for s in templates.TEMPLATE_SETS}  # fmt: skip
    assert counts[("en", "mlm")] == 35 and counts[("zh", "mlm")] == 23 and counts[("ru", "mlm")] == 45
    assert counts[("zh", "seq2seq")] == 10 and counts[("ru", "seq2seq")] == 30
    assert counts[("hi", "mlm")] == 1 and counts[("hi", "mlm_full")] == 45  # mBERT-HI: the comp pair only
    ru = {r.id: r for r in templates.recipes("ru")}
    fem, masc = ru["sing_plur10-fem"], ru["sing_plur10-masc"]
    assert fem.prior_word == "Человек" and fem.prior_traits == masc.traits != fem.traits  # prior: masculine forms
    hi = templates.recipes("hi")
    assert [r.id for r in hi] == ["comp0-fem", "comp0-masc", "comp0-neutral"]
    assert hi[0].prior_template == hi[1].template != hi[0].template  # feminine groups: prior in the masculine template
    assert hi[0].traits[data.TRAITS.index("untrustworthy")] == hi[0].traits[data.TRAITS.index("dishonest")]
    for lang in data.LANGUAGES:
        assert {name for r in templates.recipes(lang, "mlm_full") for name, _ in r.groups} == set(data.GROUPS)
    assert templates.split("The <group> is <mask>.", "woman", "en") == ("The woman is", " ", ".")
    assert templates.split("<group>是<mask>的。", "女人", "zh") == ("女人是", "", "的。")


def _upstream(path: str) -> str:
    """``path`` at the pinned commit, from the offline mirror (sha256-verified by the data layer)."""
    from lm_eval_stereo.core.sources import fetch

    return fetch(data.SOURCE, path).read_text(encoding="utf-8")


def test_lists_are_the_literals_of_asso_py_parsed_never_executed() -> None:
    parsed = reference.extract_literals(
        "raise SystemExit\ndef f():\n    a = {'b', 'a'}\n    b = len(a)\n    c = ('x', 1)\n    for i in a:\n"
        "        d = 1\nx = 2\n"
    )
    assert parsed == {"f": {"a": ["a", "b"], "c": ["x", 1]}}  # top level, calls and nested statements skipped
    literals = reference.extract_literals(_upstream(reference.ASSO))
    assert {f"{prefix}_{lang}" for prefix in reference.FUNCTIONS.values() for lang in data.LANGUAGES} <= set(literals)
    assert (literals["mbert_en"]["prior_g_plur"], literals["bert_ru"]["prior_g_cs"]) == ("people", "Человек")
    lists = reference.reference_lists()
    assert lists == reference.convert(literals)
    assert lists["hi"]["priors"] == {"s": "व्यक्ति", "p": "लोग", "pgroup2": "लोगों"}
    assert lists["zh"]["priors"] == {"group": "人"} and lists["hi"]["templates"]["mlm"]["extra"] == {}
    assert list(lists["zh"]["groups"]["group"]) == sorted(lists["zh"]["groups"]["group"])  # a set upstream: sorted
    # the English model-code trait names (egotistic, low-status, ...) are index-aligned with the human tables' rows
    assert [data.canonical_trait(word) for word in lists["en"]["traits"]["trait"]] == list(data.TRAITS)


def test_lists_come_from_the_downloaded_asso_py_without_a_mirror(tmp_path: Path, monkeypatch) -> None:
    from lm_eval_stereo.core import registry, sources
    from lm_eval_stereo.core.errors import DataUnavailableError

    commit = registry.get_source(data.SOURCE).commit
    cached = tmp_path / data.SOURCE / commit / "asso.py"
    cached.parent.mkdir(parents=True)
    cached.write_text(_upstream("asso.py"), encoding="utf-8")  # as a verified download leaves it in the cache
    monkeypatch.delenv(sources.DATA_DIR_ENV)
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv(sources.OFFLINE_ENV, "1")
    mirror_lists = reference.reference_lists()
    reference.asso_literals.cache_clear()
    try:
        assert reference.convert(reference.asso_literals()) == mirror_lists
        cached.write_text(cached.read_text(encoding="utf-8") + "#", encoding="utf-8")
        reference.asso_literals.cache_clear()
        with pytest.raises(DataUnavailableError, match="cannot be downloaded"):  # a changed file is never read
            reference.asso_literals()
    finally:
        reference.asso_literals.cache_clear()


def test_group_and_trait_names_equal_the_maps_of_aggre_tem_py() -> None:
    import ast

    maps = {}
    for node in ast.parse(_upstream("aggre_tem.py")).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            maps[node.targets[0].id] = ast.literal_eval(node.value)
    upstream_map = {
        ("en", "sgroup"): "group_en2en", ("en", "pgroup"): "pluralgroup_en2en",
        ("en", "cpgroup"): "pluralcapgroup_en2en", ("zh", "group"): "group_zh2en",
        ("ru", "csgroup_fem"): "csgroup_fem_ru2en", ("ru", "csgroup_masc"): "csgroup_masc_ru2en",
        ("ru", "pgroup"): "pluralgroup_pgroup_ru2en", ("ru", "cpgroup"): "pluralgroup_cpgroup_ru2en",
        **{("hi", slot): f"{slot}_hi2en" for slot in ("sfgroup", "smgroup", "pfgroup", "pmgroup", "sngroup",
                                                      "pngroup", "pgroup2")},
    }  # fmt: skip
    lists = reference.reference_lists()
    assert {(lang, slot) for lang in lists for slot in lists[lang]["groups"]} == set(upstream_map)
    for (lang, slot), name in upstream_map.items():
        assert lists[lang]["groups"][slot] == maps[name], (lang, slot)
    trait_maps = {
        ("en", "trait"): "trait_en2en", ("zh", "trait"): "trait_zh2en", ("hi", "trait"): "trait_hi2en",
        ("ru", "strait_fem"): "strait_fem_ru2en", ("ru", "strait_masc"): "strait_masc_ru2en",
        ("ru", "ptrait"): "pluraltrait_ptrait_ru2en", ("ru", "ptrait2"): "pluraltrait_ptrait2_ru2en",
    }  # fmt: skip
    for (lang, form), name in trait_maps.items():
        names = [data.canonical_trait(maps[name][word]) for word in lists[lang]["traits"][form]]
        expected = list(data.TRAITS)
        if lang == "hi":  # the same word for untrustworthy and dishonest: the map's duplicate key keeps dishonest
            expected[data.TRAITS.index("untrustworthy")] = "dishonest"
        assert names == expected, (lang, form)


# ---------------------------------------------------------------------------------------------- masked-LM tasks


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models run ~20x faster with one intra-op thread on a loaded machine (restored afterwards)."""
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


ONE_THREAD = {"OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def ru_set_run(tiny_bert: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    args = ["--model", "hf-mlm", "--model_args", f"pretrained={tiny_bert},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "8", "--tasks", "stereotype_leakage_mlm_ru", "--limit", "2", "--log_samples"]
    return run_lm_eval(args, tmp_path_factory.mktemp("leak_ru"), env=ONE_THREAD)


def test_set_task_equals_the_reference_loop_per_item(ru_set_run: LmEvalRun, tiny_bert: Path) -> None:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(tiny_bert).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    weights = output_layer(model)
    samples = ru_set_run.samples["stereotype_leakage_mlm_ru"]
    assert len(samples) == 2
    for sample in samples:
        doc, item = sample["doc"], sample["n_leaks"]
        assert doc["template_id"] == "sing_plur10-fem" and doc["prior_trait_word"] != doc["trait_word"]
        prior = reference_set(
            model, tokenizer, weights, doc["prior_template"], doc["prior_word"], doc["prior_trait_word"], "ru"
        )
        assert item["prior"] == pytest.approx(prior, rel=1e-5, abs=1e-7)
        for group in doc["groups"]:
            expected = reference_set(model, tokenizer, weights, doc["template"], group["word"], doc["trait_word"], "ru")
            expected -= prior
            assert item["associations"][group["name"]] == pytest.approx(expected, rel=1e-5, abs=1e-7)
    results = ru_set_run.results["results"]["stereotype_leakage_mlm_ru"]
    assert results["score,none"] == "set" and results["scored_cells,none"] == 2 * 19
    assert results["nan_scores,none"] == 0 and results["n_leaks,none"] in (0, 1, 2, 3)


def test_set_scores_do_not_depend_on_the_batch_size(ru_set_run: LmEvalRun, tiny_bert: Path) -> None:
    from lm_eval.api.instance import Instance

    from lm_eval_stereo.models.masked_lm import HFMaskedLM
    from lm_eval_stereo.tasks.stereotype_leakage.task_mlm import masked_requests

    lm = HFMaskedLM(pretrained=str(tiny_bert), device="cpu", batch_size=1, dtype="float32")
    sample = ru_set_run.samples["stereotype_leakage_mlm_ru"][0]
    requests = [
        Instance(request_type=kind, doc={}, arguments=args, idx=i)
        for i, (kind, args) in enumerate(masked_requests(sample["doc"], "ru", "set"))
    ]
    totals = [sum(scores) for scores in lm.masked_sensitivity(requests)]
    expected = sample["n_leaks"]
    assert totals[0] == pytest.approx(expected["prior"], rel=1e-6)
    for group, total in zip(sample["doc"]["groups"], totals[1:]):
        assert total - totals[0] == pytest.approx(expected["associations"][group["name"]], rel=1e-5, abs=1e-7)


def test_ilps_option_serves_masked_lms_without_a_bert_head(tiny_xlmr: Path) -> None:
    from lm_eval.api.instance import Instance

    from lm_eval_stereo.models.masked_lm import HFMaskedLM
    from lm_eval_stereo.tasks.stereotype_leakage.task import custom_dataset
    from lm_eval_stereo.tasks.stereotype_leakage.task_mlm import masked_requests

    doc = custom_dataset("en", "committed", "copy", {"committed": "mlm"})["test"][0]
    requests = masked_requests(doc, "en", "ilps")
    assert requests[0] == ("masked_span", ("The person is ", "powerless", ".", "l2r"))
    lm = HFMaskedLM(pretrained=str(tiny_xlmr), device="cpu", batch_size=4, dtype="float32")
    instances = [Instance(kind, {}, args, i) for i, (kind, args) in enumerate(requests)]
    totals = [sum(logps) for logps in lm.masked_span(instances)]
    assert len(totals) == 31 and np.isfinite(totals).all() and max(totals) < 0 and len(set(totals)) > 20


def test_set_on_a_head_it_cannot_use_names_the_ilps_option(tiny_xlmr: Path) -> None:
    from lm_eval.api.instance import Instance

    from lm_eval_stereo.models.masked_lm import HFMaskedLM

    lm = HFMaskedLM(pretrained=str(tiny_xlmr), device="cpu", batch_size=2, dtype="float32")
    arguments = ("The woman is", "warm", ".", " ")
    request = Instance("masked_sensitivity", {}, arguments, 0, ("stereotype_leakage_mlm_en", 0, 1))
    with pytest.raises(ValueError, match="""stereotype_leakage_mlm_en.*XLMRobertaForMaskedLM.*'{"score": "ilps"}'"""):
        lm.masked_sensitivity([request])


def test_masked_tasks_need_a_masked_lm_with_a_mask_token(tiny_bert: Path) -> None:
    from transformers import AutoTokenizer

    from lm_eval_stereo.models.sensitivity import sensitivity_inputs

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    tokenizer.mask_token = None
    with pytest.raises(ValueError, match="mask token"):
        sensitivity_inputs(tokenizer, "The woman is", "warm", ".", " ")


# ---------------------------------------------------------------------------------------------- causal adaptation


def _continuation_logprob(model, tokenizer, context: str, continuation: str) -> float:
    """log P(continuation | context) as lm_eval's HFLM splits the pair (one encoding of the whole text)."""
    import torch

    whole = tokenizer(context + continuation)["input_ids"]
    start = len(tokenizer(context)["input_ids"])
    ids = torch.tensor([[tokenizer.bos_token_id, *whole]]) if not context else torch.tensor([whole])
    start = 1 if not context else start
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0].double(), dim=-1)
    return float(sum(logp[i - 1, ids[0, i]] for i in range(start, ids.shape[1])))


def test_causal_task_scores_the_trait_given_the_prefix(
    tiny_causal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "8", "--tasks", "stereotype_leakage_en", "--limit", "1", "--log_samples"]
    run = run_lm_eval(args, tmp_path, env=ONE_THREAD)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal)
    (sample,) = run.samples["stereotype_leakage_en"]
    doc, item = sample["doc"], sample["n_leaks"]
    assert doc["template"] == "The <group> is <mask>." and doc["trait_word"] == "powerless"
    prior = _continuation_logprob(model, tokenizer, "The person is", " powerless.")
    assert item["prior"] == pytest.approx(prior, rel=1e-4)
    for group in doc["groups"][:5]:
        score = _continuation_logprob(model, tokenizer, f"The {group['word']} is", " powerless.")
        assert item["associations"][group["name"]] == pytest.approx(score - prior, rel=1e-4, abs=1e-5)
    results = run.results["results"]["stereotype_leakage_en"]
    assert results["score,none"] == "causal" and results["scored_cells,none"] == 30
    requests = [(a["arg_0"], a["arg_1"]) for a in sample["arguments"].values()]
    assert len(requests) == 1 + len(doc["groups"])
    assert results["boundary_mismatches,none"] == sum(not split_survives(tokenizer, *r) for r in requests) == 0
    # the compact console table leaves the association table to the results file, which keeps it whole
    table = results["association_table,none"]
    assert len(table) > 60 and json.loads(table)
    assert "association_table" not in run.stdout and table not in run.stdout
    # with every metric printed (LM_EVAL_STEREO_TABLE=full) it is shortened to its size, as the plugin's task it is
    # where it was built (here: marked so, as building it marks it); lm_eval's own task's text is left whole
    from lm_eval_stereo.core import metrics
    from lm_eval_stereo.hooks.console import short_texts

    monkeypatch.setitem(metrics._TABLES, "stereotype_leakage_en", ("score",))
    shown = short_texts({"results": {"stereotype_leakage_en": results, "stock_task": results}}, "results")
    assert shown["results"]["stereotype_leakage_en"]["association_table,none"] == (
        f"({len(table):,} characters: see the results file)"
    )
    assert shown["results"]["stock_task"]["association_table,none"] == table


def test_boundary_mismatches_count_the_splits_a_tokenizer_merges() -> None:
    """A hand-made byte-level BPE that merges "gr"+"een" into one token: the request ("It is gr", "een.") loses its
    split (lm_eval would score "." given "It is green"), ("It is", " green.") keeps it; both checks agree."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from lm_eval_stereo.core.reference_requests import lm_eval_encoding

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    pieces = ["gr", "ee", "een", "green", "Ġgreen", "Ġi", "Ġis", "It"]
    vocab = {piece: i for i, piece in enumerate(sorted(alphabet) + pieces)}
    merges = [("g", "r"), ("e", "e"), ("ee", "n"), ("gr", "een"), ("Ġ", "green"), ("Ġ", "i"), ("Ġi", "s"), ("I", "t")]
    bpe = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe)
    requests = [("It is gr", "een."), ("It is", " green."), ("It is ", "green."), ("", "It is green.")]
    kept = [lm_eval_encoding(tokenizer, *request).split_kept for request in requests]
    assert kept == [split_survives(tokenizer, *request) for request in requests] == [False, True, True, True]


def test_causal_task_skips_templates_with_the_group_after_the_trait() -> None:
    from lm_eval_stereo.tasks.stereotype_leakage.task import custom_dataset
    from lm_eval_stereo.tasks.stereotype_leakage.task_causal import causal_pair

    sets = {"committed": "mlm"}
    kept = {doc["template_id"] for doc in custom_dataset("en", "committed", "copy", sets, full_sentence=False)["test"]}
    everything = {doc["template_id"] for doc in custom_dataset("en", "committed", "copy", sets)["test"]}
    assert everything - kept == {"gt_tg0"} and len(kept) == 34
    assert causal_pair("The <mask> people are <group>.", "men", "warm", "en", True) == ("", "The warm people are men.")
    assert causal_pair("<group>是<mask>的。", "女人", "温暖的", "zh", False) == ("女人是", "温暖的的。")


# ---------------------------------------------------------------------------------------------- leakage across runs


def _write_run(
    folder: Path,
    task: str,
    table: pd.DataFrame,
    score: str = "set",
    *,
    stamp: str = "2026-01-01T00-00-00",
    date: float | None = None,
) -> Path:
    """A fake lm_eval output folder: one logged sample per trait holding the table's row, and a results file (with
    lm_eval's ``date`` when given)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {"doc_id": i, "n_leaks": {"key": t, "trait": t, "prior": 0.0, "associations": table.loc[t].to_dict()}}
        )
        for i, t in enumerate(table.index)
    ]
    (folder / f"samples_{task}_{stamp}.jsonl").write_text("\n".join(lines), encoding="utf-8")
    results: dict = {"results": {task: {"score,none": score}}} | ({} if date is None else {"date": date})
    (folder / f"results_{stamp}.json").write_text(json.dumps(results))
    return folder


def test_leakage_cli_refits_a_run_and_writes_table_json_and_graph(ru_set_run: LmEvalRun, tmp_path: Path) -> None:
    import subprocess
    import sys

    out_json, out_png = tmp_path / "fits.json", tmp_path / "graph.png"
    command = [sys.executable, "-m", "lm_eval_stereo.cli", "leakage", str(ru_set_run.output_dir)]
    proc = subprocess.run([*command, "--json", str(out_json), "--png", str(out_png)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "stereotype_leakage_mlm_ru" in proc.stdout and "H_EN α (p)" in proc.stdout
    fit = json.loads(out_json.read_text())["fits"]["stereotype_leakage_mlm_ru"]
    results = ru_set_run.results["results"]["stereotype_leakage_mlm_ru"]
    assert fit["target"] == "ru" and fit["score"] == "set" and fit["mono_task"] is None
    for lang in data.LANGUAGES:  # the same table, options and fit as the task's own metrics
        assert fit["coef"][lang] == pytest.approx(results[f"leak_coef_{lang},none"], rel=1e-8, abs=1e-12)
    assert fit["n_leaks"] == results["n_leaks,none"] and fit["cells"] == results["cells,none"]
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_results_hold_the_table_that_the_cli_rebuilds_from_the_samples(ru_set_run: LmEvalRun) -> None:
    from lm_eval_stereo.tasks.stereotype_leakage.run_tables import read_tables

    logged = json.loads(ru_set_run.metric("stereotype_leakage_mlm_ru", "association_table"))
    table = pd.DataFrame.from_dict(logged, orient="index").astype(float)
    assert list(table.index) == list(data.TRAITS) and list(table.columns) == list(data.GROUPS)
    (rebuilt,) = read_tables(ru_set_run.output_dir)
    pd.testing.assert_frame_equal(table, rebuilt.table, check_exact=True)
    assert table.notna().to_numpy().sum() == ru_set_run.metric("stereotype_leakage_mlm_ru", "scored_cells") > 0


def test_leakage_cli_uses_the_mono_table_as_covariate(tmp_path: Path) -> None:
    from lm_eval_stereo.tasks.stereotype_leakage import across_runs
    from lm_eval_stereo.tasks.stereotype_leakage.run_tables import read_tables

    humans, mono = _fixture_tables(seed=1)
    rng = np.random.default_rng(2)
    multi = 0.3 * mono + 0.2 * humans["hi"].fillna(0) + 0.01 * rng.normal(size=mono.shape)
    _write_run(tmp_path / "multi", "stereotype_leakage_mlm_en", multi)
    _write_run(tmp_path / "mono", "stereotype_leakage_mlm_en", mono)
    report = across_runs.fit_runs(read_tables(tmp_path / "multi"), read_tables(tmp_path / "mono"))
    fit = report["fits"]["stereotype_leakage_mlm_en"]
    assert fit["mono_task"] == "stereotype_leakage_mlm_en" and fit["mono_coef"] == pytest.approx(0.3, rel=0.02)
    assert fit["coef"]["hi"] == pytest.approx(0.2 * 100, rel=0.02)  # x100: the reference scaling of SeT
    assert fit["leaks"] == ["hi"] and report["edges"][0]["source"] == "hi" and report["edges"][0]["target"] == "en"


def test_the_newest_run_is_the_newest_by_lm_evals_date_not_by_file_time(tmp_path: Path) -> None:
    """Two runs of one task whose files' modification times say the opposite of their ``date``: the table is the
    later run's by ``date`` (as the report picks runs), and its score comes from that run's own results."""
    import os

    from lm_eval_stereo.tasks.stereotype_leakage.run_tables import read_tables

    _, earlier = _fixture_tables(seed=3)
    _, later = _fixture_tables(seed=4)
    task = "stereotype_leakage_mlm_en"
    _write_run(tmp_path, task, earlier, "set", stamp="2026-01-01T00-00-00", date=1_000.0)
    _write_run(tmp_path, task, later, "ilps", stamp="2026-01-02T00-00-00", date=2_000.0)
    for stamp, mtime in (("2026-01-01T00-00-00", 3_000), ("2026-01-02T00-00-00", 1_500)):  # file times disagree
        for name in (f"results_{stamp}.json", f"samples_{task}_{stamp}.jsonl"):
            os.utime(tmp_path / name, (mtime, mtime))
    (table,) = read_tables(tmp_path)
    assert table.task == task and table.score == "ilps"
    pd.testing.assert_frame_equal(table.table, later, check_exact=True)


def test_runs_of_two_models_for_one_task_are_an_error_that_names_them(tmp_path: Path) -> None:
    from lm_eval_stereo.tasks.stereotype_leakage.run_tables import LeakageInputError, read_tables

    _, table = _fixture_tables(seed=5)
    for name in ("model-a", "model-b"):
        results = _write_run(tmp_path / name, "stereotype_leakage_mlm_en", table) / "results_2026-01-01T00-00-00.json"
        data = json.loads(results.read_text()) | {"config": {"model": "hf-mlm", "model_args": f"pretrained={name}"}}
        results.write_text(json.dumps(data))
    with pytest.raises(LeakageInputError, match="stereotype_leakage_mlm_en was run with 2 models .*pretrained=model-b"):
        read_tables(tmp_path / "model-a", tmp_path / "model-b")


def test_leakage_cli_rejects_folders_without_leakage_samples(tmp_path: Path, capsys) -> None:
    from lm_eval_stereo.tasks.stereotype_leakage import command as leakage_across_runs

    other = tmp_path / "other"
    other.mkdir()
    (other / "results_x.json").write_text(json.dumps({"results": {"gest_en": {}}}))
    with pytest.raises(SystemExit) as stopped:
        leakage_across_runs.main([str(other), "--no-png", "--json", str(tmp_path / "x.json")])
    assert (
        stopped.value.code == 2
        and "no logged samples of stereotype-leakage regression tasks" in capsys.readouterr().err
    )
    (other / "results_y.json").write_text(json.dumps({"results": {"stereotype_leakage_mlm_en": {}}}))
    with pytest.raises(SystemExit):
        leakage_across_runs.main([str(other), "--no-png"])
    assert "--log_samples" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        leakage_across_runs.main([str(tmp_path / "missing"), "--no-png"])
    assert f"argument OUT_MULTI: {tmp_path / 'missing'}: no such file or folder" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- seq2seq (mT5 ILPS)


def _reference_ilps(model, tokenizer, sentence: str, trait: str) -> float:
    """The reference's ``get_log_prob``: minus the mean cross-entropy of "<extra_id_0>{trait} <extra_id_1></s>"."""
    import torch

    input_ids = tokenizer(sentence, return_tensors="pt").input_ids
    labels = tokenizer(f"<extra_id_0>{trait} <extra_id_1>", return_tensors="pt").input_ids
    with torch.no_grad():
        return -float(model(input_ids=input_ids, labels=labels).loss)


def test_seq2seq_task_equals_the_reference_mean_log_probability(tmp_path: Path) -> None:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from lm_eval_stereo.local_models.tiny import build_t5

    t5 = build_t5(tmp_path / "t5", seed=0)
    args = ["--model", "hf", "--model_args", f"pretrained={t5},backend=seq2seq,dtype=float32", "--device", "cpu"]
    args += ["--batch_size", "8", "--tasks", "stereotype_leakage_seq2seq_ru", "--limit", "1", "--log_samples"]
    run = run_lm_eval(args, tmp_path / "out", env=ONE_THREAD)
    model = AutoModelForSeq2SeqLM.from_pretrained(t5).eval()
    tokenizer = AutoTokenizer.from_pretrained(t5)
    (sample,) = run.samples["stereotype_leakage_seq2seq_ru"]
    doc, item = sample["doc"], sample["n_leaks"]
    assert doc["template_id"] == "sing_plur10-fem" and doc["separate_prior_traits"]
    fill = doc["template"].replace("<mask>", "<extra_id_0>").replace
    prior = _reference_ilps(model, tokenizer, fill("<group>", doc["prior_word"]), doc["prior_trait_word"])  # no space
    assert item["prior"] == pytest.approx(prior, rel=1e-5)
    for group in doc["groups"][:5]:
        score = _reference_ilps(model, tokenizer, fill("<group>", group["word"]), " " + doc["trait_word"])
        assert item["associations"][group["name"]] == pytest.approx(score - prior, abs=1e-5)  # float32 losses
    results = run.results["results"]["stereotype_leakage_seq2seq_ru"]
    assert results["score,none"] == "seq2seq" and results["scored_cells,none"] == 19


def test_seq2seq_inputs_and_template_subsets() -> None:
    from lm_eval_stereo.tasks.stereotype_leakage.task_seq2seq import seq2seq_pair

    assert seq2seq_pair("<group>是<mask>的。", "女人", "弱小的", "zh") == (
        "女人是 <extra_id_0>的。",
        "<extra_id_0>弱小的 <extra_id_1>",
    )
    assert seq2seq_pair("The <group> is <mask>.", "man", " warm", "en") == (
        "The man is <extra_id_0>.",
        "<extra_id_0> warm <extra_id_1>",
    )
