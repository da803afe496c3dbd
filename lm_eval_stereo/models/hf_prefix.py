"""``hf-prefix``: lm_eval's ``hf`` causal LM that computes every shared prefix once.

``HFPrefixLM`` is ``lm_eval.models.huggingface.HFLM`` (loading, tokenisation, ``_encode_pair``, empty context -> prefix
token, ``batch_size`` incl. ``auto``/``auto:N``, ``accelerate launch``, ``loglikelihood_rolling``, ``generate_until``)
with one method replaced: ``_loglikelihood_tokens`` for ``loglikelihood`` requests. Each request keeps HFLM's left
truncation (``(context + continuation)[-(max_length + 1):]``); the requests' input sequences are packed into prefix
trees (:mod:`lm_eval_stereo.models.prefix_tree`): a context is forwarded once for all its continuations, and so is any
longer shared prefix. The trees are then laid side by side into rows as wide as the longest tree (``fill_rows``), so
that rows need no padding but at their unfilled ends. A row is forwarded with a 4D attention mask (each token sees its
own tree's ancestors and itself) and position ids = depth in its tree; a row that is one plain sequence is forwarded
like HFLM does (no mask). Rows are sorted longest first and batched: at most ``batch_size`` rows per forward, none
shorter than half the first (``auto``: the largest batch of the longest row that fits). Only the scored positions go
through the output projection and the log-softmax. Log-likelihood = sum of the continuation tokens' log-softmax;
greedy = every continuation token is the arg-max, as in HFLM.

Token-exact requests: ``loglikelihood`` scores a request's ``reference_tokens`` (an optional field a task sets where
it knows the reference's token split, :mod:`lm_eval_stereo.core.token_split`) instead of lm_eval's split of its
strings, where those ids are this model's encoding of the request's text; such answers are ``ReferenceTokensAnswer``s,
so the task flags no token boundary for them. The plain-path fallback below scores them too.

Progress and the request cache: the progress bar counts the tokens forwarded (what a forward costs; batches hold very
different numbers of requests), the requests scored its postfix; packing, before it, is announced in two lines. With
``--use_cache`` each answer is stored as it is scored, those that scored reference tokens marked
(:class:`~lm_eval_stereo.core.token_split.MarkingCacheHook`), and the file holds this backend's answers only (:mod:`lm_eval_stereo.hooks.answer_cache`).

Why packing and not a reused KV cache: both were prototyped on the bench model (GPT-2 shape, 8 layers, width 512, CPU,
batch 32) over stereoset_multi + gest_en + gerbbq_mc (20 documents per task, 500 requests) and timed in one run against
plain ``hf`` (37,187 tokens, 68.1 s): the KV cache (contexts first, then the continuations against their context's
cache, copied per continuation) forwarded 19,192 tokens in 69.5 s, no faster, as the cache copies and the second, short
forward ate the saving; packing the continuations behind their context forwarded 19,200 tokens in 53.4 s. Packing also
needs no cache API (which changes across transformers versions) and extends to prefixes shared inside continuations.

Fallback: a model this cannot serve is scored by the plain HFLM path, with one log line saying why: a non-causal
(seq2seq) backend, flash attention (takes no 4D mask), a forward without ``attention_mask``/``position_ids``, or a
start-up probe (five requests in two trees, three sharing one context and two another, packed into one row and scored
both ways) that fails or disagrees. GPT-2 and Llama-style models (SmolLM2) of the installed transformers take the 4D
float mask and the restarting position ids (tests/backends/test_hf_prefix.py); BLOOM (ALiBi, no position ids) falls back.
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import time
from collections.abc import Iterator, Sequence

import torch
import torch.nn.functional as F
from accelerate import find_executable_batch_size
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
from lm_eval.models.utils_hf import clear_torch_cache
from tqdm import tqdm

from lm_eval_stereo.core import window
from lm_eval_stereo.core.token_split import TokenSplit, reference_tokens_of
from lm_eval_stereo.models.hf_mixin import HFMixin
from lm_eval_stereo.models.prefix_tree import Row, TokenRequest, fill_rows, pack_rows, truncate

eval_logger = logging.getLogger(__name__)

#: (cache key, context tokens, continuation tokens): what lm_eval hands ``_loglikelihood_tokens``
EncodedRequest = tuple[tuple[str, str] | None, list[int], list[int]]

#: two contexts and their continuations: two trees in one row (positions restart, neither sees the other)
PROBE = (
    (
        "Once upon a time a quick brown fox jumped over the lazy dog, and then",
        (" it ran away into the dark forest.", " it slept.", " the dog barked at the fox all night long."),
    ),
    ("Kontext: Ein Mann und eine Frau sprechen über das Wetter.", (" Es regnet.", " Die Sonne scheint heute.")),
)


def takes_boolean_logits_to_keep(model: torch.nn.Module) -> bool:
    """Whether ``model.forward`` can project only a 2D boolean selection of positions (transformers >= 5)."""
    import transformers.modeling_utils

    return hasattr(transformers.modeling_utils, "slice_logits_to_keep") and (
        "logits_to_keep" in inspect.signature(model.forward).parameters
    )


def batches(rows: list[Row], batch_size: int) -> Iterator[list[Row]]:
    """``rows`` (sorted longest first) in batches of at most ``batch_size``, chains and trees apart (chains need no
    mask); a batch also ends before a row shorter than half its first row, so padding stays under half of it."""
    for chain in (True, False):
        batch: list[Row] = []
        for row in rows:
            if row.is_chain is not chain:
                continue
            if batch and (len(batch) == batch_size or 2 * len(row) < len(batch[0])):
                yield batch
                batch = []
            batch.append(row)
        if batch:
            yield batch


def forwarded_tokens(batch: list[Row]) -> int:
    """Positions one forward of ``batch`` computes: its rows, each as wide as the widest (padding included)."""
    return len(batch) * max(len(row) for row in batch)


class HFPrefixLM(HFMixin, HFLM):
    """HFLM whose ``loglikelihood`` forwards every shared prefix (context) once; see the module docstring. With what the
    plugin's view of ``hf`` does for every task it runs (:class:`~lm_eval_stereo.models.hf_mixin.HFMixin`: the clear
    line for a tokenizer without a prefix token)."""

    def __init__(self, *args, **kwargs) -> None:
        #: the ``reference_tokens`` of the requests ``loglikelihood`` is scoring (None outside it)
        self._reference_splits: list[TokenSplit | None] | None = None
        super().__init__(*args, **kwargs)
        self._takes_logits_to_keep = takes_boolean_logits_to_keep(self.model)
        self.prefix_fallback_reason = self._unsupported_reason()
        if self.prefix_fallback_reason:
            eval_logger.warning("hf-prefix: %s; scoring with the plain hf path", self.prefix_fallback_reason)

    # --- capability checks --------------------------------------------------------------------------------------------

    def _unsupported_reason(self) -> str | None:
        """Why this model cannot use packed prefix trees, or None; ends with the probe."""
        if self.backend != "causal":
            return f"not a decoder-only model (backend {self.backend})"
        attention = str(getattr(self.model.config, "_attn_implementation", "") or "")
        if attention.startswith("flash"):
            return f"attention implementation {attention} takes no 4D attention mask"
        parameters = inspect.signature(self.model.forward).parameters
        takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        missing = [name for name in ("attention_mask", "position_ids") if name not in parameters and not takes_kwargs]
        if missing:
            return f"{type(self.model).__name__}.forward takes no {' or '.join(missing)}"
        return self._probe()

    def _probe(self) -> str | None:
        """Score two trees of requests (:data:`PROBE`) packed into one row and plainly; a difference beyond float noise
        (or an error) disables packing."""
        probe = [
            (None, *self._encode_pair(context, continuation))
            for context, continuations in PROBE
            for continuation in continuations
        ]
        try:
            trees = pack_rows(self.token_requests(probe), self.max_length)  # packs whatever is shared: two trees
            rows = fill_rows(trees, width=sum(len(tree) for tree in trees))
            if len(rows) != 1:
                return "the probe's two trees do not fit one row"
            packed = [answer for _, answer in sorted(self._score_batch(rows))]
            plain = super()._loglikelihood_tokens(probe, disable_tqdm=True, override_bs=len(probe))
        except Exception as exc:  # noqa: BLE001 - any failure means: use the plain path
            return f"the packed probe failed ({type(exc).__name__}: {exc})"
        exact = self.model.dtype in (torch.float32, torch.float64) and self.mixed_precision_dtype is None
        tolerance = 1e-4 if exact else 5e-2
        worst = max(abs(a - b) / max(1.0, abs(b)) for (a, _), (b, _) in zip(packed, plain))
        if worst > tolerance:
            return f"the packed probe differs from the plain forward by {worst:.2g} (relative; allowed {tolerance:g})"
        return None

    @property
    def max_tree_depth(self) -> int | None:
        """A sliding-window (or chunked) attention span: sequences longer than it are not packed."""
        config = getattr(self.model.config, "text_config", None) or self.model.config
        if getattr(config, "use_sliding_window", True) is False:
            return None
        spans = [getattr(config, name, None) for name in ("sliding_window", "attention_chunk_size")]
        spans = [span for span in spans if isinstance(span, int) and span > 0]
        return min(spans) if spans else None

    def pack(self, requests: Sequence[TokenRequest]) -> list[Row]:
        """The model's rows: prefix trees of at most ``max_length`` nodes (attention cost ``1 / hidden size``) laid side
        by side into rows as wide as the longest."""
        config = getattr(self.model.config, "text_config", None) or self.model.config
        hidden = getattr(config, "hidden_size", None) or 1024
        trees = pack_rows(requests, self.max_length, self.max_tree_depth, attention_cost=1 / hidden)
        return fill_rows(trees, self.max_tree_depth)

    # --- scoring -----------------------------------------------------------------------------------------------------

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        r"""HFLM's ``loglikelihood`` (lm_eval's encoding of each string pair), scoring a request's ``reference_tokens``
        (:mod:`lm_eval_stereo.core.token_split`) instead where they are that encoding up to the reference's cut; those
        answers are :class:`ReferenceTokensAnswer`\ s."""
        self._reference_splits = [reference_tokens_of(request) for request in requests]
        try:
            return super().loglikelihood(requests, disable_tqdm=disable_tqdm)
        finally:
            self._reference_splits = None

    def _loglikelihood_tokens(
        self,
        requests: list[EncodedRequest],
        disable_tqdm: bool = False,
        override_bs: int | None = None,
    ) -> list[tuple[float, bool]]:
        """Packed prefix trees for ``loglikelihood``; HFLM's own path for rolling windows and unsupported models (both
        score the reference's tokens where ``loglikelihood`` was handed them).

        HFLM's ``loglikelihood_rolling`` is the only caller passing ``override_bs``: it is delegated unchanged.
        """
        splits = self._reference_splits
        exact: set[int] = set()
        if override_bs is None and splits is not None and len(splits) == len(requests):
            requests, exact = self.with_reference_tokens(requests, splits)
        if override_bs is not None:
            return super()._loglikelihood_tokens(requests, disable_tqdm=disable_tqdm, override_bs=override_bs)
        scorer = super()._loglikelihood_tokens if self.prefix_fallback_reason else self._prefix_loglikelihood
        return window.score_within_window(
            self,
            requests,
            self.max_length + 1,
            functools.partial(scorer, disable_tqdm=disable_tqdm),
            "hf-prefix",
            frozenset(exact),
        )

    def with_reference_tokens(
        self, requests: list[EncodedRequest], splits: Sequence[TokenSplit | None]
    ) -> tuple[list[EncodedRequest], set[int]]:
        """``requests`` with each given reference split in place of lm_eval's, and the indices replaced.

        A split is used when its context and continuation ids, joined, are the start of this model's ids of the whole
        text (``tok_encode(context + continuation)``, as lm_eval encodes it before cutting off the context; an empty
        context: the prefix token, then the continuation): the same tokenizer cut elsewhere, never other text. The
        others keep lm_eval's split, counted in one warning.
        """
        out, exact, refused = list(requests), set(), 0
        for n, ((key, context, continuation), split) in enumerate(zip(requests, splits)):
            if split is None:
                continue
            reference_context, reference_continuation = split
            text_context, text_continuation = key if key is not None else ("", "")
            if text_context:
                whole = tuple(self.tok_encode(text_context + text_continuation))
            else:
                whole = (*context, *continuation)
            joined = (*reference_context, *reference_continuation)
            if reference_context and reference_continuation and whole[: len(joined)] == joined:
                out[n] = (key, list(reference_context), list(reference_continuation))
                exact.add(n)
            else:
                refused += 1
        if refused:
            eval_logger.warning(
                "hf-prefix: %d request(s) carry reference tokens that are not this model's encoding of their text "
                "(another tokenizer, or add_bos_token differs): scored as lm_eval splits their strings",
                refused,
            )
        return out, exact

    def token_requests(self, requests: Sequence[EncodedRequest]) -> list[TokenRequest]:
        """HFLM's checks and left truncation of each (context, continuation) token pair (those longer than the window
        were counted before, :func:`~lm_eval_stereo.core.window.beyond_window`)."""
        return truncate([(context, continuation) for _, context, continuation in requests], self.max_length)

    def _prefix_loglikelihood(
        self, requests: list[EncodedRequest], disable_tqdm: bool = False
    ) -> list[tuple[float, bool]]:
        """Pack, then score batch by batch. The progress bar counts the tokens forwarded (each batch's rows times its
        widest row: what a forward costs), so that its rate and estimate hold from the first batch on (batches hold
        very different numbers of requests: the longest rows come first); the requests scored so far are its postfix.
        Packing and choosing the batch size come before the bar: a line says that it starts and one what it gave."""
        shown = not disable_tqdm and self.rank == 0
        say = functools.partial(tqdm.write, file=sys.stderr) if shown else lambda line: None
        started = time.perf_counter()
        auto = str(self.batch_size).startswith("auto")
        say(
            f"hf-prefix: packing {len(requests):,} requests into prefix trees"
            + (", then trying the largest batch that fits (batch_size auto)" if auto else "")
            + " (the progress bar follows)"
        )
        rows = self.pack(self.token_requests(requests))
        rows.sort(key=lambda row: -len(row))
        packed = time.perf_counter()
        batch_size = self._rows_batch_size(rows)
        planned = list(batches(rows, batch_size))
        costs = [forwarded_tokens(batch) for batch in planned]
        say(
            f"hf-prefix: {len(requests):,} requests packed into {len(rows):,} rows ({packed - started:.1f} s), "
            f"{len(planned):,} batches of up to {batch_size} rows"
            + (f" (found in {time.perf_counter() - packed:.1f} s)" if auto else "")
            + f", {sum(costs):,} tokens to forward"
        )
        results: list[tuple[float, bool] | None] = [None] * len(requests)
        pbar = tqdm(
            total=sum(costs),
            disable=not shown,
            desc="Running loglikelihood requests (shared prefixes)",
            unit="tok",
            unit_scale=True,
        )
        scored = 0
        for batch, cost in zip(planned, costs):
            answers = self._score_batch(batch)
            for index, answer in answers:
                results[index] = answer
                key = requests[index][0]
                if key is not None:
                    self.cache_hook.add_partial("loglikelihood", key, answer)
            scored += len(answers)
            pbar.set_postfix_str(f"{scored:,}/{len(requests):,} requests", refresh=False)
            pbar.update(cost)
        pbar.close()
        return results  # type: ignore[return-value]

    def _rows_batch_size(self, rows: list[Row]) -> int:
        """``batch_size`` rows, or with ``auto`` (and ``auto:N``) the largest batch of the longest row that fits.

        Detected once per call, as a tree row (the costlier layout), halving on out-of-memory (accelerate's
        ``find_executable_batch_size`` from ``max_batch_size``, or from the number of rows when there are fewer: a
        batch never holds more, and the trial forward costs as much as the batch it tries); data-parallel ranks take
        the minimum, like HFLM.
        """
        if not str(self.batch_size).startswith("auto"):
            return int(self.batch_size)
        if not rows:
            return 1
        longest = rows[0]
        most_rows = len(rows)
        if self.world_size > 1:
            most_rows = int(self.all_gather(torch.tensor([most_rows], device=self.device)).max())

        @find_executable_batch_size(starting_batch_size=max(1, min(self.max_batch_size, most_rows)))
        def forward(batch_size: int) -> int:
            self._forward_scored([longest] * batch_size, tree=True)
            return batch_size

        try:
            batch_size = forward()
        except RuntimeError as exc:
            if "No executable batch size found" not in str(exc):
                raise
            batch_size = 1
        if self.world_size > 1:
            gathered = self.all_gather(torch.tensor([batch_size], device=self.device))
            batch_size = int(gathered.min())
        clear_torch_cache()
        eval_logger.info("hf-prefix: batch size %d rows of up to %d tokens", batch_size, len(longest))
        return batch_size

    def batch_inputs(self, batch: list[Row], tree: bool | None = None) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """The model's keyword arguments for ``batch`` and the (rows, width) mask of its scored nodes.

        ``tree`` forces (True) the tree layout; by default a batch of chains is forwarded without mask, as HFLM does.
        """
        width = max(len(row) for row in batch)
        ids = torch.zeros((len(batch), width), dtype=torch.long)
        keep = torch.zeros((len(batch), width), dtype=torch.bool)
        for r, row in enumerate(batch):
            ids[r, : len(row)] = torch.tensor(row.tokens)
            for _, nodes, _ in row.scored:
                keep[r, nodes] = True
        kwargs = {"input_ids": ids.to(self.device)}
        if tree or not all(row.is_chain for row in batch):
            kwargs.update(self._tree_inputs(batch, width))
        if self._takes_logits_to_keep:
            kwargs["logits_to_keep"] = keep.to(self.device)
        return kwargs, keep

    def _forward_scored(self, batch: list[Row], tree: bool | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-softmax over the scored nodes of ``batch`` (flattened row by row) and each node's flat offset."""
        kwargs, keep = self.batch_inputs(batch, tree)
        with (
            torch.no_grad(),
            torch.autocast(
                device_type=self.device.type,
                dtype=self.mixed_precision_dtype,
                enabled=self.mixed_precision_dtype is not None,
            ),
        ):
            logits = self.model(**kwargs).logits
        if not self._takes_logits_to_keep:
            logits = logits[keep.to(logits.device)]
        offsets = torch.cumsum(keep.flatten(), 0).view_as(keep) - 1
        return F.log_softmax(logits, dim=-1, dtype=self.softmax_dtype), offsets

    def _tree_inputs(self, batch: list[Row], width: int) -> dict[str, torch.Tensor]:
        """Position ids (depths) and the additive 4D mask: node q sees node k iff k <= q < end[k]; pads see themselves."""
        positions = torch.zeros((len(batch), width), dtype=torch.long)
        ends = torch.arange(1, width + 1).repeat(len(batch), 1)
        for r, row in enumerate(batch):
            positions[r, : len(row)] = torch.tensor(row.depths)
            ends[r, : len(row)] = torch.tensor(row.ends)
        node = torch.arange(width)
        visible = (node[None, :, None] >= node[None, None, :]) & (node[None, :, None] < ends[:, None, :])
        dtype = self.model.dtype if self.model.dtype.is_floating_point else torch.float32
        mask = torch.zeros(visible.shape, dtype=dtype).masked_fill_(~visible, torch.finfo(dtype).min)
        return {"attention_mask": mask[:, None].to(self.device), "position_ids": positions.to(self.device)}

    def _score_batch(self, batch: list[Row]) -> list[tuple[int, tuple[float, bool]]]:
        """(request index, (log-likelihood, greedy)) for every request packed in ``batch``."""
        log_probs, offsets = self._forward_scored(batch)
        greedy = log_probs.argmax(dim=-1).cpu()
        owners, flat, targets = [], [], []
        for r, row in enumerate(batch):
            for index, nodes, tokens in row.scored:
                owners += [index] * len(nodes)
                flat += offsets[r, nodes].tolist()
                targets += tokens
        flat_t, targets_t = torch.tensor(flat), torch.tensor(targets)
        picked = log_probs[flat_t.to(log_probs.device), targets_t.to(log_probs.device)].cpu()
        misses = (greedy[flat_t] != targets_t).long()
        slot = {index: n for n, index in enumerate(dict.fromkeys(owners))}
        owner_t = torch.tensor([slot[index] for index in owners])
        sums = torch.zeros(len(slot), dtype=picked.dtype).index_add_(0, owner_t, picked)
        wrong = torch.zeros(len(slot), dtype=torch.long).index_add_(0, owner_t, misses)
        return [(index, (float(sums[n]), bool(wrong[n] == 0))) for index, n in slot.items()]
