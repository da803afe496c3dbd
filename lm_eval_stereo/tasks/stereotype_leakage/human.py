"""Human stereotype tables H_L (32 traits x 30 groups per language) from the raw annotator files.

Aggregation (reproduces the upstream ``aggregated_data_{EN,RU,ZH,HI}.csv``; the upstream script is not published)::

    H[left(p), g]  = sum_a max(0, -s_a(g, p)) / N_g
    H[right(p), g] = sum_a max(0,  s_a(g, p)) / N_g

with s_a(g, p) in [-50, 50] the slider of annotator a for trait pair p = (left, right) and N_g the number of annotators
who rated group g. Unrated rule: the 18 shared groups are always kept (even with one annotator); a language-specific
group is kept only with N_g >= :data:`MIN_ANNOTATORS`, otherwise its 32 cells are NaN (999 upstream).
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.tasks.stereotype_leakage.data import (
    GROUPS,
    LANGUAGES,
    SHARED_GROUPS,
    SOURCE,
    TRAITS,
    UNRATED,
    aggregated_path,
    language,
    load_annotations,
)

#: a language-specific group needs this many annotators to be kept
MIN_ANNOTATORS = 5


def annotator_counts(lang: str, path: Path | None = None) -> dict[str, int]:
    """N_g: how many annotators of ``lang`` rated each group (groups nobody rated are absent)."""
    counts: Counter[str] = Counter()
    for groups in load_annotations(lang, path).values():
        counts.update(groups.keys())
    return dict(counts)


def human_associations(lang: str, path: Path | None = None) -> pd.DataFrame:
    """H_lang: DataFrame of 32 traits (rows, :data:`TRAITS`) x 30 groups (columns, :data:`GROUPS`), NaN if unrated."""
    annotations = load_annotations(lang, path)
    row = {trait: i for i, trait in enumerate(TRAITS)}
    column = {group: j for j, group in enumerate(GROUPS)}
    sums = np.zeros((len(TRAITS), len(GROUPS)))
    raters = np.zeros(len(GROUPS))
    for groups in annotations.values():
        for group, pairs in groups.items():
            j = column[group]
            raters[j] += 1
            for (left, right), score in pairs.items():
                sums[row[left], j] += max(0.0, -score)
                sums[row[right], j] += max(0.0, score)
    kept = np.array([n > 0 and (g in SHARED_GROUPS or n >= MIN_ANNOTATORS) for g, n in zip(GROUPS, raters)])
    values = np.where(kept, sums / np.maximum(raters, 1), np.nan)
    return pd.DataFrame(values, index=list(TRAITS), columns=list(GROUPS))


def published_associations(lang: str, path: Path | None = None) -> pd.DataFrame:
    """The upstream aggregated table of ``lang`` in the same shape, its 999 cells as NaN."""
    path = Path(path) if path is not None else sources.fetch(SOURCE, aggregated_path(lang))
    frame = pd.read_csv(path, index_col=0, encoding="utf-8-sig")
    if list(frame.index) != list(TRAITS) or list(frame.columns) != list(GROUPS):
        raise MalformedDataError(str(path), "expected the 32 ABC traits as rows and the 30 groups as columns")
    return frame.astype(float).mask(frame == UNRATED)


def human_correlations(tables: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """The paper's human-agreement table: Pearson r between two languages over one shared group's 32 trait values.

    Rows: the 18 shared groups and ``mean`` (per language pair, over groups); columns: ``EN-RU``, ``EN-ZH``, ... (the
    six pairs) and ``mean`` (per group, over pairs). ``tables`` defaults to :func:`human_associations` of each language.
    """
    tables = tables if tables is not None else {lang: human_associations(lang) for lang in LANGUAGES}
    pairs = list(itertools.combinations([language(lang) for lang in tables], 2))
    columns = [f"{LANGUAGES[a][1]}-{LANGUAGES[b][1]}" for a, b in pairs]
    result = pd.DataFrame(index=list(SHARED_GROUPS), columns=columns, dtype=float)
    for (a, b), column in zip(pairs, columns):
        for group in SHARED_GROUPS:
            result.loc[group, column] = np.corrcoef(tables[a][group], tables[b][group])[0, 1]
    result["mean"] = result.mean(axis=1)
    result.loc["mean"] = result.loc[list(SHARED_GROUPS)].mean(axis=0)
    return result
