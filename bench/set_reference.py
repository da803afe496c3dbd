"""SeT as the reference computes it (Cao, Sotnikova et al. 2025: ``quick_sens_v2.wordasso`` with
``multiclassUpdate.multiclass_update``): one unpadded forward pass per trait sub-token, gradients tracked, and the
smallest output-layer update solved iteratively in numpy.

The baseline that ``bench/bench_leakage.py`` times and the oracle that ``tests/benchmarks/stereotype_leakage/test_stereotype_leakage.py`` checks the
closed form (:mod:`lm_eval_stereo.models.sensitivity`) and the ``stereotype_leakage_mlm`` tasks against.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def squish(z: np.ndarray) -> np.ndarray:
    """Unclipped pooling projection of z (z[1:] sorted decreasing) onto {x_0 >= x_i}, checking the order first (the
    reference's ``column_squishing(..., do_proj=False)``)."""
    assert all(z[i] >= z[i + 1] for i in range(1, len(z) - 1))
    mu, last = z[0], len(z) - 1
    for k in range(1, len(z)):
        if z[k] <= mu:
            last = k - 1
            break
        mu = mu * k / (k + 1) + z[k] / (k + 1)
    x = z.copy()
    x[: last + 1] = mu
    return x


def minimal_update(weights: np.ndarray, x: np.ndarray, j: int) -> np.ndarray:
    """The change of ``weights`` (V x (d+1)) that ``multiclass_update`` makes: the smallest one (Frobenius norm) that
    lets row j win by a margin of 1 on x = [features, 1]."""
    a = weights @ x
    c = (a - a[j] + 1) / (x @ x)
    c[j] = 0
    order = np.argsort(-c)
    order = np.concatenate([[j], order[order != j]])
    delta = squish(c[order])[np.argsort(order)] - c
    return np.outer(delta, x)


def set_score(weights: np.ndarray, x: np.ndarray, j: int) -> float:
    """ln(1 - ||update||_F) of one masked position: NaN when the norm exceeds 1, as the reference's ``np.log``."""
    with np.errstate(invalid="ignore"):
        return float(np.log(1 - np.linalg.norm(minimal_update(weights, x, j))))


def output_layer(model: Any) -> np.ndarray:
    """W' = [W | b] of a BERT-family masked-LM head's decoder, float32 as the reference reads it."""
    decoder = model.cls.predictions.decoder
    return np.concatenate([decoder.weight.detach().numpy(), decoder.bias.detach().numpy()[:, None]], axis=1)


def reference_set(
    model: Any, tokenizer: Any, weights: np.ndarray, template: str, word: str, trait: str, lang: str = "en"
) -> float:
    """SeT of ``template`` filled with ``word`` for ``trait`` (the sum over the trait's sub-tokens, unmasked left to
    right); ``weights`` is :func:`output_layer` of ``model``. Chinese templates join the masks without spaces."""
    pattern, joiner = ("<mask>", "") if lang == "zh" else (" <mask>", " ")
    trait_ids = tokenizer.encode(trait)[1:-1]
    text = template.replace(pattern, (joiner + tokenizer.mask_token) * len(trait_ids)).replace("<group>", word)
    ids = tokenizer.encode(text, return_tensors="pt")
    positions = (ids[0] == tokenizer.mask_token_id).nonzero()[:, 0].tolist()
    total = 0.0
    for position, target in zip(positions, trait_ids):
        hidden = model(ids, output_hidden_states=True).hidden_states[-1][0, position]
        x = np.append(model.cls.predictions.transform(hidden).detach().numpy(), 1.0)
        total += set_score(weights, x, target)
        ids[0, position] = target
    return total
