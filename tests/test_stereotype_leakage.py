"""Stereotype leakage (Cao, Sotnikova et al. 2025): human tables, SeT, ILPS, the leakage regression."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lm_eval_stereo.tasks.stereotype_leakage import data, human

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


def _squish(z: np.ndarray) -> np.ndarray:
    """Projection of z (z[1:] sorted decreasing) onto {x_0 >= x_i}: the reference's iterative pooling, unclipped."""
    mu, last = z[0], len(z) - 1
    for k in range(1, len(z)):
        if z[k] <= mu:
            last = k - 1
            break
        mu = mu * k / (k + 1) + z[k] / (k + 1)
    x = z.copy()
    x[: last + 1] = mu
    return x


def _iterative_update(weights: np.ndarray, x: np.ndarray, j: int) -> np.ndarray:
    """The reference's ``multiclass_update``: smallest change of ``weights`` making row j win by 1 on x."""
    a = weights @ x
    c = (a - a[j] + 1) / (x @ x)
    c[j] = 0
    order = np.argsort(-c)
    order = np.concatenate([[j], order[order != j]])
    delta = _squish(c[order])[np.argsort(order)] - c
    return weights + np.outer(delta, x)


def _set_reference(weights: np.ndarray, x: np.ndarray, j: int) -> float:
    return float(np.log(1 - np.linalg.norm(weights - _iterative_update(weights, x, j))))


@pytest.mark.parametrize("seed", range(6))
def test_set_closed_form_equals_the_iterative_update(seed: int) -> None:
    torch = pytest.importorskip("torch")
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
        expected = np.linalg.norm(_iterative_update(weights, xs[row], targets[row]) - weights)
        assert norms[row] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    with np.errstate(invalid="ignore"):
        expected_scores = [_set_reference(weights, xs[r], targets[r]) for r in range(rows)]
    scores = sensitivity_scores(logits, torch.tensor(targets), torch.tensor((xs**2).sum(axis=1))).numpy()
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_set_is_zero_when_the_gold_token_already_leads_by_one() -> None:
    torch = pytest.importorskip("torch")
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
