"""The "sensitivity test" score SeT of Cao, Sotnikova et al. (2025, §3.3) in closed form.

For one masked position with BERT-head features x = transform(h) and output layer W' = [W | b] (V x (d+1)), the
reference (``multiclassUpdate.multiclass_update``) finds the smallest change of W' (Frobenius norm) that makes the
gold token j win by a margin of 1::

    min ||W'_new - W'||_F   s.t.   (W'_new x')_j >= (W'_new x')_i + 1  for all i != j,     x' = [x, 1]

Every optimal change is a rank-one ``delta x'^T``, so with the logits a = W'x' and

    C_i = (a_i - a_j + 1) / ||x'||^2   (i != j),   C_j = 0,

delta = P(C) - C, where P is the Euclidean projection onto {z : z_j >= z_i for all i}: sort the C_i (i != j) in
decreasing order and pool C_j = 0 with the largest ones while each exceeds the running mean mu of the pool
(Bittorf et al. 2012, Alg. 5 without clipping, as ``column_squishing(..., do_proj=False)``); pooled entries become mu.
Then ||W'_new - W'||_F = ||delta||_2 ||x'||_2, and the score of the position is

    s = ln(1 - ||W'_new - W'||_F)

(0 when the gold token already leads by >= 1; NaN when the norm exceeds 1 and -inf when it equals 1, as the
reference's ``np.log``). SeT of a trait = sum of s over its sub-tokens, unmasked left to right.
"""

from __future__ import annotations

import torch


def minimum_update_norm(logits: torch.Tensor, targets: torch.Tensor, x_norm_sq: torch.Tensor) -> torch.Tensor:
    """||W'_new - W'||_F for each row: ``logits`` (N, V) = W'x', ``targets`` (N,), ``x_norm_sq`` (N,) = ||x'||^2.

    Computed in float64.
    """
    a = logits.double()
    norm_sq = x_norm_sq.double()
    gold = a.gather(1, targets[:, None].long())
    c = (a - gold + 1.0) / norm_sq[:, None]
    c.scatter_(1, targets[:, None].long(), float("-inf"))  # the gold entry leaves the sorted list of the others
    others = c.sort(dim=1, descending=True).values[:, :-1]  # (N, V-1), the -inf (gold) dropped
    counts = torch.arange(2, others.shape[1] + 2, dtype=a.dtype, device=a.device)
    means = others.cumsum(dim=1) / counts  # mean of {C_j = 0, first m others}, m = 1..V-1
    previous = torch.cat([torch.zeros_like(means[:, :1]), means[:, :-1]], dim=1)
    pooled = (others > previous).long().cumprod(dim=1)  # others pooled until the first one not above the mean
    m = pooled.sum(dim=1)
    mu = torch.where(m > 0, means.gather(1, (m - 1).clamp(min=0)[:, None])[:, 0], torch.zeros_like(m, dtype=a.dtype))
    spread = ((mu[:, None] - others) ** 2 * pooled).sum(dim=1)
    return torch.sqrt((mu**2 + spread) * norm_sq)


def sensitivity_scores(logits: torch.Tensor, targets: torch.Tensor, x_norm_sq: torch.Tensor) -> torch.Tensor:
    """s = ln(1 - ||W'_new - W'||_F) per row (float64; NaN where the norm exceeds 1)."""
    return torch.log1p(-minimum_update_norm(logits, targets, x_norm_sq))
