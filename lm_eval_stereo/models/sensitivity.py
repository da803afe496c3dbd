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

``--model hf-mlm`` serves it as the request type ``masked_sensitivity(left, trait, right, separator)`` ->
``[s_0, ..., s_{k-1}]`` (:func:`score_requests`); inputs are built as the reference builds them
(:func:`sensitivity_inputs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from lm_eval_stereo.models.padding import pad_batch


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


@dataclass(frozen=True)
class SensitivityInput:
    """One forward pass of the left-to-right loop: ``tokens`` with the earlier sub-tokens filled in, the scored
    mask ``position`` and its gold ``target``."""

    tokens: tuple[int, ...]
    position: int
    target: int


def sensitivity_inputs(tokenizer: Any, left: str, trait: str, right: str, separator: str) -> list[SensitivityInput]:
    """The reference's inputs for one (template, trait): ``left + (separator + [MASK]) * k + right`` with special
    tokens, k = number of sub-tokens of ``trait`` tokenised alone; input i has masks 0..i-1 filled with the gold
    sub-tokens and scores mask i."""
    if tokenizer.mask_token is None:
        raise ValueError(f"SeT needs a tokenizer with a mask token; {tokenizer.name_or_path!r} has none (use hf-mlm)")
    trait_ids = tokenizer(trait, add_special_tokens=False)["input_ids"]
    text = left + (separator + tokenizer.mask_token) * len(trait_ids) + right
    ids = list(tokenizer(text)["input_ids"])
    positions = [i for i, token in enumerate(ids) if token == tokenizer.mask_token_id]
    if len(positions) != len(trait_ids):
        raise ValueError(f"SeT: {text!r} has {len(positions)} mask tokens for the {len(trait_ids)} of {trait!r}")
    inputs = []
    for position, target in zip(positions, trait_ids):
        inputs.append(SensitivityInput(tuple(ids), position, target))
        ids[position] = target
    return inputs


def bert_head(model: Any) -> tuple[torch.nn.Module, torch.nn.Module] | None:
    """(transform, decoder) of a BERT-family masked-LM head (``model.cls.predictions``), else None."""
    predictions = getattr(getattr(model, "cls", None), "predictions", None)
    transform, decoder = getattr(predictions, "transform", None), getattr(predictions, "decoder", None)
    return (transform, decoder) if transform is not None and isinstance(decoder, torch.nn.Linear) else None


def score_requests(lm: Any, requests: list[Any]) -> list[list[float]]:
    """SeT per sub-token (s_i, left to right) for each request ``(left, trait, right, separator)`` served by
    ``lm`` (an :class:`~lm_eval_stereo.models.masked_lm.HFMaskedLM`); every distinct input is scored once."""
    head = bert_head(lm.model)
    if head is None:
        tasks = sorted({str(r.task_name) for r in requests if getattr(r, "task_name", None)})
        raise ValueError(
            f"task(s) {', '.join(tasks) or '?'}: the SeT score needs a BERT-family masked-LM head "
            f"(cls.predictions.transform and .decoder), which {type(lm.model).__name__} lacks. Score the masked "
            'trait\'s log-probability instead with --metadata \'{"score": "ilps"}\'.'
        )
    transform, decoder = head
    per_request = [sensitivity_inputs(lm.tokenizer, *request.args) for request in requests]
    distinct = list(dict.fromkeys(item for inputs in per_request for item in inputs))
    too_long = [item for item in distinct if len(item.tokens) > lm.window]
    if too_long:
        raise ValueError(f"SeT: an input of {len(too_long[0].tokens)} tokens exceeds the model's window ({lm.window})")
    scores: dict[SensitivityInput, float] = {}
    order = sorted(range(len(distinct)), key=lambda i: -len(distinct[i].tokens))

    def run(chunk: list[int]) -> None:
        batch = [distinct[i] for i in chunk]
        ids, mask = pad_batch([item.tokens for item in batch], lm.tokenizer.pad_token_id)
        ids, mask = ids.to(lm.device), mask.to(lm.device)
        rows = torch.arange(len(batch), device=lm.device)
        cols = torch.tensor([item.position for item in batch], device=lm.device)
        features = transform(lm._encode(ids, mask)[0][rows, cols])
        logits = decoder(features)
        x_norm_sq = features.double().pow(2).sum(dim=-1) + 1.0  # ||[x, 1]||^2
        targets = torch.tensor([item.target for item in batch], device=lm.device)
        for item, value in zip(batch, sensitivity_scores(logits, targets, x_norm_sq).tolist()):
            scores[item] = value

    lm._batched(order, run)
    return [[scores[item] for item in inputs] for inputs in per_request]
