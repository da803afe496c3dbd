"""Stereotype leakage (Cao, Sotnikova et al. 2025): human tables, SeT, ILPS, the leakage regression."""

from __future__ import annotations

import numpy as np
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
