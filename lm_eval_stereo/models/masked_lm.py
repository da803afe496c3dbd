"""``hf-mlm``: masked language models and BERT's next-sentence head as an lm-evaluation-harness model.

Loads any ``AutoModelForMaskedLM`` checkpoint through the harness's ``HFLM`` machinery (device, dtype, ``batch_size``
incl. ``auto``, ``accelerate launch`` data parallelism). BERT-family checkpoints (model types in
:data:`NSP_MODEL_TYPES`) are loaded with ``AutoModelForPreTraining`` so that their next-sentence head is available too.

Request semantics (every log-probability is a natural log):

- ``loglikelihood(context, continuation)`` -> ``(PLL, is_greedy)``: pseudo-log-likelihood of the continuation tokens
  (Salazar et al. 2020, Eq. 2): each continuation token is masked in turn, everything else visible, and
  ``log P(token | rest)`` is summed. ``context + continuation`` is tokenised as one string (trailing whitespace of the
  context moves to the continuation, as in the harness) and split after the context's tokens. Model argument
  ``pll=within_word_l2r`` also masks the later sub-tokens of the scored token's word (Kauf & Ivanova 2023, "PLL-word-l2r").
  ``is_greedy`` is true when every scored token is the arg-max at its masked position.
- ``loglikelihood_rolling(text)`` -> PLL of every token of the text.
- ``masked_span(left, span, right, mode)`` -> per-sub-token log-probabilities of the span. ``left + span + right`` is
  tokenised as one string; the span's sub-tokens are those whose character offsets overlap the span. ``mode``:
  ``"l2r"``: input i gives span sub-tokens < i and masks sub-tokens i..k-1, collecting P(sub-token i) (left-to-right
  unmasking); ``"all"``: one input with every span sub-token masked, collecting each; ``"l2r_single"``: input i gives
  sub-tokens < i, one mask for sub-token i and drops the later ones (one ``[MASK]`` per input).
- ``shared_tokens(more, less)`` -> per shared token of the pair (CrowS-Pairs alignment): softmax probability,
  log-probability and arg-max hit of the gold token in each sentence, each shared token masked alone (S_JSD,
  Steinborn et al. 2022); an over-length pair is reported, not truncated.
- ``next_sentence(first, second)`` -> ``log P(IsNext)``, the log of the float32 softmax of the NSP logits for
  ``[CLS] first [SEP] second [SEP]`` (segment ids 0 / 1), as the reference compares float32 probabilities.
- ``masked_fill(text, target)`` -> the log-probability of token id ``target`` at the FIRST mask token of ``text``,
  the text tokenised as it is (see :meth:`HFMaskedLM.masked_fill`).
- ``masked_sensitivity(left, trait, right, separator)`` -> SeT per trait sub-token (BERT-family heads;
  :mod:`lm_eval_stereo.models.sensitivity`).
- ``generate_until``: not supported (error).

Every input is ``prefix + tokens + suffix`` with the tokenizer's CLS/SEP (or BOS/EOS) tokens. Masked copies of all
requests are sorted by length and packed into batches; identical copies are computed once; only the scored positions
go through the output projection.
Inputs longer than the model's window keep the scored tokens and drop the far context (balanced on both sides;
``next_sentence`` drops the start of ``first``, then the end of ``second``); this is logged once. ``shared_tokens``
pairs are never cut: an over-length pair is answered unscored.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
import transformers
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
from tqdm import tqdm
from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

from lm_eval_stereo.core.alignment import shared_positions
from lm_eval_stereo.core.model_types import SPAN_MODES
from lm_eval_stereo.models.padding import pad_batch
from lm_eval_stereo.models.sensitivity import score_requests

eval_logger = logging.getLogger(__name__)

#: model types whose ``*ForPreTraining`` class carries BERT's next-sentence-prediction head (``cls.seq_relationship``)
NSP_MODEL_TYPES = frozenset({"bert", "ernie", "megatron-bert", "mobilebert"})
PLL_VARIANTS = ("original", "within_word_l2r")
#: RoBERTa-style models number positions from ``pad_token_id + 1``: their windows are that much shorter
OFFSET_POSITION_MODEL_TYPES = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "data2vec-text"})


@dataclass(frozen=True)
class MaskedCopy:
    """One model input: ``tokens`` (special tokens included) and the positions whose original ``targets`` are scored.

    ``owner`` is the request the scores belong to and ``slots`` the index of each score in that request's list.
    """

    tokens: tuple[int, ...]
    positions: tuple[int, ...]
    targets: tuple[int, ...]
    owner: int
    slots: tuple[int, ...]


def fit_window(n_tokens: int, start: int, end: int, width: int) -> tuple[int, int]:
    """The slice ``[a, b)`` of at most ``width`` tokens that keeps ``[start, end)`` and the nearest context around it.

    Spare room is shared equally between left and right context; what one side does not need goes to the other.
    """
    if end - start > width:
        raise ValueError(f"the scored span has {end - start} tokens but the model's window holds only {width}")
    spare = width - (end - start)
    left = min(start, max(spare // 2, spare - (n_tokens - end)))
    right = min(n_tokens - end, spare - left)
    return start - left, end + right


def pll_copies(
    ids: Sequence[int],
    scored: Sequence[int],
    mask_id: int,
    owner: int,
    word_ids: Sequence[int | None] | None = None,
) -> list[MaskedCopy]:
    """One copy per scored position p with p masked (Salazar et al. 2020, Eq. 2); with ``word_ids`` the later
    sub-tokens of p's word are masked too (Kauf & Ivanova 2023, PLL-word-l2r). ``ids`` include special tokens."""
    copies = []
    for slot, position in enumerate(scored):
        tokens = list(ids)
        tokens[position] = mask_id
        if word_ids is not None and word_ids[position] is not None:
            later = position + 1
            while later < len(ids) and word_ids[later] == word_ids[position]:
                tokens[later] = mask_id
                later += 1
        copies.append(MaskedCopy(tuple(tokens), (position,), (ids[position],), owner, (slot,)))
    return copies


def span_copies(ids: Sequence[int], start: int, end: int, mode: str, mask_id: int, owner: int) -> list[MaskedCopy]:
    """Masked copies scoring the span ``ids[start:end]`` in ``mode`` (see the module docstring)."""
    span = tuple(ids[start:end])
    if mode == "all":
        tokens = (*ids[:start], *([mask_id] * len(span)), *ids[end:])
        return [MaskedCopy(tokens, tuple(range(start, end)), span, owner, tuple(range(len(span))))]
    copies = []
    for i, target in enumerate(span):
        if mode == "l2r":
            tokens = (*ids[: start + i], *([mask_id] * (len(span) - i)), *ids[end:])
        elif mode == "l2r_single":
            tokens = (*ids[: start + i], mask_id, *ids[end:])
        else:
            raise ValueError(f"unknown masked_span mode {mode!r}; use one of {', '.join(SPAN_MODES)}")
        copies.append(MaskedCopy(tokens, (start + i,), (target,), owner, (i,)))
    return copies


class _LoadingInfo:
    """``from_pretrained`` front end that keeps the checkpoint's missing weight names (HFLM only calls from_pretrained)."""

    def __init__(self, auto_class: type) -> None:
        self.auto_class = auto_class
        self.missing_keys: set[str] = set()

    def from_pretrained(self, *args: Any, **kwargs: Any) -> transformers.PreTrainedModel:
        model, info = self.auto_class.from_pretrained(*args, output_loading_info=True, **kwargs)
        self.missing_keys = set(info["missing_keys"])
        return model


class HFMaskedLM(HFLM):
    """Masked LMs (BERT, mBERT, RoBERTa, XLM-R, ALBERT, DistilBERT, ELECTRA generators, ...) for the harness.

    Extra model arguments: ``pll`` (``original`` | ``within_word_l2r``) selects the PLL variant of the
    log-likelihood requests. All other arguments are those of ``--model hf``.
    """

    AUTO_MODEL_CLASS = transformers.AutoModelForMaskedLM

    def __init__(self, pretrained: str | transformers.PreTrainedModel, pll: str = "original", **kwargs: Any) -> None:
        if pll not in PLL_VARIANTS:
            raise ValueError(f"hf-mlm: unknown pll={pll!r}; use one of {', '.join(PLL_VARIANTS)}")
        self.pll = pll
        self._loader: _LoadingInfo | None = None
        self._truncation_logged = False
        super().__init__(pretrained, **kwargs)
        self._check_heads(pretrained)

    # ------------------------------------------------------------------ loading

    def _get_backend(self, config: Any, backend: str = "default", trust_remote_code: bool | None = False) -> None:
        """Pick the model class: the pre-training class for NSP-capable BERT-family checkpoints, else the MLM class."""
        model_type = getattr(config, "model_type", None)
        if model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not trust_remote_code:
            raise ValueError(
                f"hf-mlm: checkpoint model_type {model_type!r} has no masked-LM head class "
                f"(AutoModelForMaskedLM supports e.g. bert, roberta, xlm-roberta, albert, distilbert, electra). "
                "For causal LMs use --model hf."
            )
        self.backend = "masked"
        auto_class = transformers.AutoModelForPreTraining if model_type in NSP_MODEL_TYPES else self.AUTO_MODEL_CLASS
        self._loader = _LoadingInfo(auto_class)
        self.AUTO_MODEL_CLASS = self._loader  # type: ignore[assignment]

    def _create_tokenizer(self, *args: Any, **kwargs: Any) -> None:
        super()._create_tokenizer(*args, **kwargs)
        if self.tokenizer.mask_token_id is None:
            raise ValueError(
                f"hf-mlm: tokenizer {self.tokenizer.name_or_path!r} has no mask token; masked-LM scoring needs one"
            )
        if not self.tokenizer.is_fast:
            raise ValueError("hf-mlm needs a fast (tokenizers-backed) tokenizer for character offsets and word ids")

    def _check_heads(self, pretrained: Any) -> None:
        """Fail on an untrained MLM head; find the NSP head; split off the MLM head to score selected positions only."""
        missing = self._loader.missing_keys if self._loader is not None else set()
        prefix = self.model.base_model_prefix
        head_missing = sorted(k for k in missing if not k.startswith(prefix) and "seq_relationship" not in k)
        if head_missing:
            raise ValueError(
                f"hf-mlm: checkpoint {pretrained!r} has no trained masked-LM head (missing weights: "
                f"{', '.join(head_missing[:4])}{', ...' if len(head_missing) > 4 else ''})"
            )
        heads = getattr(self.model, "cls", None)
        self._nsp_head: torch.nn.Module | None = None
        if heads is not None and hasattr(heads, "seq_relationship"):
            nsp_missing = sorted(k for k in missing if "seq_relationship" in k or ".pooler." in k)
            if nsp_missing:
                self._nsp_problem = f"its weights lack the NSP head ({', '.join(nsp_missing)})"
            else:
                self._nsp_head = heads.seq_relationship
            self._mlm_head: Callable[[torch.Tensor], torch.Tensor] | None = heads.predictions
        else:
            self._nsp_problem = f"{type(self.model).__name__} has no next-sentence-prediction head"
            self._mlm_head = self._sequential_head()
        if self._mlm_head is not None and not self._head_matches_forward():
            eval_logger.warning(
                "hf-mlm: cannot split the MLM head off %s; scoring uses full forward passes", pretrained
            )
            self._mlm_head = None

    def _sequential_head(self) -> torch.nn.Sequential:
        """The modules after the encoder, in registration order (loss modules left out)."""
        base = self.model.base_model
        modules = [
            module
            for module in self.model.children()
            if module is not base and not isinstance(module, torch.nn.modules.loss._Loss)
        ]
        return torch.nn.Sequential(*modules)

    @torch.no_grad()
    def _head_matches_forward(self) -> bool:
        """Self-check: head(encoder(x)) must equal the model's own logits on a short input."""
        tokens = [*self._prefix, self.tokenizer.mask_token_id, *self.tok_encode("a b"), *self._suffix]
        ids, mask = pad_batch([tokens], self.tokenizer.pad_token_id)
        ids, mask = ids.to(self.device), mask.to(self.device)
        try:
            mine = self._mlm_head(self._encode(ids, mask)[0])
        except (TypeError, RuntimeError, AttributeError):
            return False
        theirs = self._full_logits(ids, mask)
        return mine.shape == theirs.shape and bool(torch.allclose(mine.float(), theirs.float(), atol=1e-4, rtol=1e-4))

    # ------------------------------------------------------------------ tokens

    @property
    def prefix_token_id(self) -> int:
        return self._prefix[0] if self._prefix else self.tokenizer.pad_token_id

    @property
    def eot_token_id(self) -> int:
        return self._suffix[0] if self._suffix else self.tokenizer.pad_token_id

    @property
    def _prefix(self) -> list[int]:
        tok = self.tokenizer
        first = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
        return [] if first is None else [first]

    @property
    def _suffix(self) -> list[int]:
        tok = self.tokenizer
        last = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
        return [] if last is None else [last]

    @property
    def window(self) -> int:
        """Most tokens (special tokens included) one input may hold."""
        limit = self.max_length
        if getattr(self.config, "model_type", None) in OFFSET_POSITION_MODEL_TYPES:
            limit -= (self.config.pad_token_id or 0) + 1
        return min(limit, self.tokenizer.model_max_length)

    def tok_encode(self, string: str, add_special_tokens: bool | None = None, **kwargs: Any) -> list[int]:
        """Token ids of ``string`` without special tokens (they are added around each model input)."""
        return self.tokenizer(string, add_special_tokens=False)["input_ids"]

    def _note_truncation(self, what: str) -> None:
        if not self._truncation_logged:
            self._truncation_logged = True
            eval_logger.warning(
                "hf-mlm: %s is longer than the model's window (%d tokens); the far context is cut, the scored tokens are "
                "kept (logged once)",
                what,
                self.window,
            )

    def _windowed(self, ids: list[int], start: int, end: int, what: str) -> tuple[list[int], int, int]:
        """``ids`` cut to the window around ``[start, end)``, with special tokens; returns the new span bounds."""
        width = self.window - len(self._prefix) - len(self._suffix)
        a, b = fit_window(len(ids), start, end, width)
        if (a, b) != (0, len(ids)):
            self._note_truncation(what)
        shift = len(self._prefix) - a
        return [*self._prefix, *ids[a:b], *self._suffix], start + shift, end + shift

    # ------------------------------------------------------------------ requests

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        copies: list[MaskedCopy] = []
        for owner, (context, continuation) in enumerate(req.args for req in requests):
            spaces = len(context) - len(context.rstrip())
            if spaces:
                context, continuation = context[:-spaces], context[-spaces:] + continuation
            encoding = self.tokenizer(context + continuation, add_special_tokens=False)
            start = len(self.tok_encode(context)) if context else 0
            copies += self._pll_for(encoding, start, len(encoding["input_ids"]), owner, "a log-likelihood request")
        results = []
        for request, scores in zip(requests, self._score(copies, len(requests)), strict=True):
            result = (float(sum(lp for lp, _ in scores)), all(greedy for _, greedy in scores))
            self.cache_hook.add_partial("loglikelihood", request.args, result)
            results.append(result)
        return results

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        copies: list[MaskedCopy] = []
        block = max(1, (self.window - len(self._prefix) - len(self._suffix)) // 2)
        for owner, (text,) in enumerate(req.args for req in requests):
            encoding = self.tokenizer(text, add_special_tokens=False)
            n = len(encoding["input_ids"])
            width = self.window - len(self._prefix) - len(self._suffix)
            bounds = [(0, n)] if n <= width else [(s, min(n, s + block)) for s in range(0, n, block)]
            for start, end in bounds:
                part = self._pll_for(encoding, start, end, owner, "a rolling log-likelihood text")
                copies += [MaskedCopy(c.tokens, c.positions, c.targets, c.owner, (c.slots[0] + start,)) for c in part]
        results = []
        for request, scores in zip(requests, self._score(copies, len(requests)), strict=True):
            total = float(sum(lp for lp, _ in scores))
            self.cache_hook.add_partial("loglikelihood_rolling", request.args, total)
            results.append(total)
        return results

    def _pll_for(self, encoding: Any, start: int, end: int, owner: int, what: str) -> list[MaskedCopy]:
        """PLL copies scoring tokens ``[start, end)`` of ``encoding`` (slots count from ``start``)."""
        ids = encoding["input_ids"]
        if start >= end:
            return []
        tokens, s, e = self._windowed(ids, start, end, what)
        word_ids = None
        if self.pll == "within_word_l2r":
            shift = s - start
            words = encoding.word_ids()
            word_ids = [None] * len(tokens)
            for position in range(len(self._prefix), len(tokens) - len(self._suffix)):
                word_ids[position] = words[position - shift]
        return pll_copies(tokens, range(s, e), self.tokenizer.mask_token_id, owner, word_ids)

    def masked_span(self, requests: list[Instance], disable_tqdm: bool = False) -> list[list[float]]:
        """Per-sub-token natural-log probabilities of each request's span (arguments: left, span, right, mode)."""
        copies: list[MaskedCopy] = []
        for owner, (left, span, right, mode) in enumerate(req.args for req in requests):
            if mode not in SPAN_MODES:
                raise ValueError(f"masked_span: unknown mode {mode!r}; use one of {', '.join(SPAN_MODES)}")
            encoding = self.tokenizer(left + span + right, add_special_tokens=False, return_offsets_mapping=True)
            lo, hi = len(left), len(left) + len(span)
            inside = [i for i, (a, b) in enumerate(encoding["offset_mapping"]) if a < hi and b > lo]
            if not inside:
                continue
            tokens, s, e = self._windowed(encoding["input_ids"], inside[0], inside[-1] + 1, "a masked-span request")
            copies += span_copies(tokens, s, e, mode, self.tokenizer.mask_token_id, owner)
        return [[lp for lp, _ in scores] for scores in self._score(copies, len(requests))]

    def next_sentence(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        """Natural log P(IsNext) from the next-sentence-prediction head for each (first, second) pair."""
        if self._nsp_head is None:
            raise ValueError(
                f"next_sentence requests need a next-sentence-prediction head, but checkpoint "
                f"{self.pretrained!r} cannot provide one: {self._nsp_problem}. Use a BERT checkpoint trained with NSP "
                "(e.g. bert-base-uncased, bert-base-multilingual-cased)."
            )
        pairs = []
        budget = self.window - 3
        for first, second in (req.args for req in requests):
            a, b = self.tok_encode(first), self.tok_encode(second)
            if len(a) + len(b) > budget:
                self._note_truncation("a next-sentence pair")
                keep_first = max(0, budget - len(b))
                a = a[len(a) - keep_first :] if keep_first else []
                b = b[: budget - len(a)]
            cls, sep = self._prefix + self._suffix
            pairs.append(([cls, *a, sep, *b, sep], len(a) + 2))
        order = sorted(range(len(pairs)), key=lambda i: -len(pairs[i][0]))
        out = [0.0] * len(pairs)

        def run(chunk: list[int]) -> None:
            ids, mask = pad_batch([pairs[i][0] for i in chunk], self.tokenizer.pad_token_id)
            types = torch.zeros_like(ids)
            for row, i in enumerate(chunk):
                types[row, pairs[i][1] : len(pairs[i][0])] = 1
            ids, mask, types = ids.to(self.device), mask.to(self.device), types.to(self.device)
            pooled = self.model.base_model(input_ids=ids, attention_mask=mask, token_type_ids=types)[1]
            p_isnext = F.softmax(self._nsp_head(pooled).float(), dim=-1)[:, 0].tolist()
            for row, i in enumerate(chunk):
                out[i] = math.log(p_isnext[row]) if p_isnext[row] > 0 else -math.inf

        self._batched(order, run)
        return out

    # ------------------------------------------------------------------ shared_tokens (S_JSD, issue 10)

    def shared_tokens(self, requests: list[Instance], disable_tqdm: bool = False) -> list[dict[str, Any]]:
        """Score the shared tokens of each sentence pair (arguments: more, less); see
        :mod:`lm_eval_stereo.core.masked_requests` for the response.

        Both sentences are encoded with the tokenizer's special tokens, aligned by
        :func:`~lm_eval_stereo.core.alignment.shared_positions`, and each shared token is masked alone (one copy per
        shared position and sentence). A pair with a sentence longer than the model's window is not scored and never
        truncated: its response has ``overlength`` set and empty lists.
        """
        copies: list[MaskedCopy] = []
        pairs = []
        mask_id = self.tokenizer.mask_token_id
        for owner, (more, less) in enumerate(req.args for req in requests):
            ids_more, ids_less = self.tokenizer(more)["input_ids"], self.tokenizer(less)["input_ids"]
            at_more, at_less = shared_positions(ids_more, ids_less)
            longest = max(len(ids_more), len(ids_less))
            overlength = longest > self.window
            pairs.append(([ids_more[p] for p in at_more] if not overlength else [], longest, overlength))
            if overlength:
                eval_logger.warning(
                    "hf-mlm: a sentence pair has %d tokens, more than the model's window of %d; it is not scored "
                    "(counted as overlength_pairs)",
                    longest,
                    self.window,
                )
                continue
            copies += pll_copies(ids_more, at_more, mask_id, 2 * owner)
            copies += pll_copies(ids_less, at_less, mask_id, 2 * owner + 1)
        scores = self._score(copies, 2 * len(requests), probabilities=True)
        responses = []
        for owner, (gold, longest, overlength) in enumerate(pairs):
            response: dict[str, Any] = {"gold": gold, "tokens": longest, "overlength": overlength}
            for side, scored in (("more", scores[2 * owner]), ("less", scores[2 * owner + 1])):
                response[f"prob_{side}"] = [p for _, _, p in scored]
                response[f"logprob_{side}"] = [lp for lp, _, _ in scored]
                response[f"hit_{side}"] = [hit for _, hit, _ in scored]
            responses.append(response)
        return responses

    # ------------------------------------------------------------------ masked_fill (StereoSet reference inputs)

    def masked_fill(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        """Per request ``(text, target)``: natural-log P(token id ``target``) at the first mask token of ``text``.

        The text comes ready-made from the task (the StereoSet reference builds it from decoded sub-tokens) and is
        tokenised as it is; later mask tokens in it stay masked and are not scored.
        """
        mask_id = self.tokenizer.mask_token_id
        copies: list[MaskedCopy] = []
        for owner, (text, target) in enumerate(req.args for req in requests):
            ids = self.tok_encode(text)
            if mask_id not in ids:
                raise ValueError(f"masked_fill: no mask token {self.tokenizer.mask_token!r} in {text!r}")
            position = ids.index(mask_id)
            tokens, start, _ = self._windowed(ids, position, position + 1, "a masked_fill text")
            copies.append(MaskedCopy(tuple(tokens), (start,), (int(target),), owner, (0,)))
        return [scores[0][0] for scores in self._score(copies, len(requests))]

    # ------------------------------------------------------------------ SeT (stereotype leakage)

    def masked_sensitivity(self, requests: list[Instance], disable_tqdm: bool = False) -> list[list[float]]:
        """SeT per trait sub-token of each (left, trait, right, separator): :mod:`~lm_eval_stereo.models.sensitivity`."""
        return score_requests(self, requests)

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        raise NotImplementedError(
            "hf-mlm scores masked LMs and cannot generate text; use --model hf (or vllm) for generative tasks"
        )

    # ------------------------------------------------------------------ scoring engine

    def _encode(self, ids: torch.Tensor, mask: torch.Tensor) -> Any:
        return self.model.base_model(input_ids=ids, attention_mask=mask)

    def _full_logits(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        output = self.model(input_ids=ids, attention_mask=mask)
        return output.logits if getattr(output, "logits", None) is not None else output.prediction_logits

    def _score(
        self, copies: list[MaskedCopy], n_owners: int, probabilities: bool = False
    ) -> list[list[tuple[float, ...]]]:
        """``(log p, greedy)`` of every scored position (``(log p, greedy, p)`` with ``probabilities``: p is the
        softmax itself, not exp(log p)), grouped by owner in slot order.

        Identical model inputs (the same masked copy made by several requests, e.g. the two gendered words of a GEST
        template masked at the same position, or both sentences of an identical pair) go through the model once;
        each scored (input, position) goes through the output head and the softmax once.
        """
        slots: list[dict[int, tuple[float, ...]]] = [{} for _ in range(n_owners)]
        inputs = self._model_inputs(copies)
        if len(inputs) < len(copies):
            eval_logger.debug("hf-mlm: %d masked copies, %d distinct inputs", len(copies), len(inputs))
        order = sorted(range(len(inputs)), key=lambda i: -len(inputs[i][0]))

        def run(chunk: list[int]) -> None:
            ids, mask = pad_batch([inputs[i][0] for i in chunk], self.tokenizer.pad_token_id)
            ids, mask = ids.to(self.device), mask.to(self.device)
            cells: dict[tuple[int, int], int] = {}  # (row, position) -> row of the head's output
            wanted = []  # (cell, target, owner, slot)
            for row, i in enumerate(chunk):
                for copy in inputs[i][1]:
                    for position, target, slot in zip(copy.positions, copy.targets, copy.slots, strict=True):
                        cell = cells.setdefault((row, position), len(cells))
                        wanted.append((cell, target, copy.owner, slot))
            rows = torch.tensor([r for r, _ in cells], device=self.device)
            cols = torch.tensor([p for _, p in cells], device=self.device)
            if self._mlm_head is not None:
                logits = self._mlm_head(self._encode(ids, mask)[0][rows, cols])
            else:
                logits = self._full_logits(ids, mask)[rows, cols]
            at = torch.tensor([w[0] for w in wanted], device=self.device)
            targets = torch.tensor([w[1] for w in wanted], device=self.device)
            columns = [
                F.log_softmax(logits.float(), dim=-1)[at, targets].tolist(),
                (logits.argmax(dim=-1)[at] == targets).tolist(),
            ]
            if probabilities:
                columns.append(F.softmax(logits.float(), dim=-1)[at, targets].tolist())
            for (_, _, owner, slot), *values in zip(wanted, *columns, strict=True):
                slots[owner][slot] = (values[0], bool(values[1]), *values[2:])

        self._batched(order, run)
        return [[scores[k] for k in sorted(scores)] for scores in slots]

    @staticmethod
    def _model_inputs(copies: list[MaskedCopy]) -> list[tuple[tuple[int, ...], list[MaskedCopy]]]:
        """The distinct model inputs of ``copies``, each with the copies that share it (first-seen order)."""
        users: dict[tuple[int, ...], list[MaskedCopy]] = {}
        for copy in copies:
            users.setdefault(copy.tokens, []).append(copy)
        return list(users.items())

    @torch.no_grad()
    def _batched(self, order: list[int], run: Callable[[list[int]], None]) -> None:
        """Call ``run`` on consecutive chunks of ``order`` (longest inputs first); ``batch_size=auto`` halves on OOM."""
        auto = str(self.batch_size).startswith("auto")
        size = self.max_batch_size if auto else int(self.batch_size)
        done = 0
        with tqdm(total=len(order), desc="hf-mlm: scoring masked inputs", disable=self.rank != 0) as progress:
            while done < len(order):
                chunk = order[done : done + size]
                try:
                    run(chunk)
                except torch.OutOfMemoryError:
                    if not auto or size == 1:
                        raise
                    size = max(1, size // 2)
                    eval_logger.info("hf-mlm: out of memory, batch size lowered to %d", size)
                    continue
                done += len(chunk)
                progress.update(len(chunk))
