"""RuBia's reference scorers for the tests: the authors' ``lmppl`` (``Analysis/lmppl-main.zip``, imported from the zip
as they ship it) and the same loops written plainly.

``lmppl`` runs here unchanged but for two things it cannot do offline under transformers 5: its ``from_pretrained``
calls pass ``use_auth_token`` (removed in transformers 5; dropped here, it is False anyway) and it probes
``http://google.com`` for ``local_files_only`` (answered "offline"); the ``openai`` module its package imports for an
API scorer the tests do not use is stubbed where it is not installed. Under transformers 4, which the authors ran,
``lmppl.LM``'s ``config`` is the model's own and ``resize_token_embeddings`` grows its ``vocab_size`` with the
``<<PAD>>`` row; transformers 5 gives the model a copy, so :func:`causal_scorer` hands the model's config back.
"""

from __future__ import annotations

import importlib
import math
import sys
import types
import zipfile
from pathlib import Path
from typing import Any

import torch
import transformers
from lm_eval_runner import shared_data_dir

ZIP = Path("rubia") / "Analysis" / "lmppl-main.zip"


class _WithoutAuthToken:
    """A transformers auto class whose ``from_pretrained`` drops ``use_auth_token``."""

    def __init__(self, auto: Any) -> None:
        self.auto = auto

    def from_pretrained(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("use_auth_token", None)
        return self.auto.from_pretrained(*args, **kwargs)


def import_lmppl(folder: Path) -> types.ModuleType:
    """The authors' ``lmppl`` package, extracted from the zip into ``folder`` and imported."""
    with zipfile.ZipFile(shared_data_dir() / ZIP) as archive:
        for name in archive.namelist():
            if name.startswith("lmppl-main/lmppl/") and name.endswith(".py"):
                target = folder / "lmppl" / Path(name).name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(name))
    if importlib.util.find_spec("openai") is None:
        sys.modules.setdefault("openai", types.ModuleType("openai"))
    sys.path.insert(0, str(folder))
    try:
        lmppl = importlib.import_module("lmppl")
    finally:
        sys.path.remove(str(folder))
    shim = types.SimpleNamespace(
        AutoTokenizer=_WithoutAuthToken(transformers.AutoTokenizer),
        AutoConfig=_WithoutAuthToken(transformers.AutoConfig),
        AutoModelForCausalLM=_WithoutAuthToken(transformers.AutoModelForCausalLM),
        AutoModelForMaskedLM=_WithoutAuthToken(transformers.AutoModelForMaskedLM),
    )
    for module in ("ppl_recurrent_lm", "ppl_mlm"):
        loaded = importlib.import_module(f"lmppl.{module}")
        loaded.transformers = shim
        loaded.internet_connection = lambda *args, **kwargs: False
    return lmppl


def padded_with_eos(model: Path, folder: Path) -> Path:
    """A copy of ``model`` in ``folder`` whose tokenizer has a pad token (its EOS, which no RuBia sentence holds), so
    that ``lmppl.LM`` adds no ``<<PAD>>`` row."""
    transformers.AutoModelForCausalLM.from_pretrained(model).save_pretrained(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(model)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.save_pretrained(folder)
    return folder


def causal_scorer(lmppl: types.ModuleType, model: Path) -> Any:
    """``lmppl.LM(model)`` with its config the model's own, as under transformers 4 (see the module docstring)."""
    scorer = lmppl.LM(str(model))
    scorer.config = scorer.model.config
    return scorer


@torch.no_grad()
def causal_nll(model: Any, tokenizer: Any, text: str, extra_row: torch.Tensor | None = None) -> float:
    """Mean NLL of every token of ``tokenizer(text)`` after the first; ``extra_row``: one more output-embedding row in
    the softmax (the row ``lmppl.LM`` adds for its ``<<PAD>>`` token)."""
    ids = tokenizer(text)["input_ids"]
    if len(ids) < 2:
        return math.nan
    output = model(torch.tensor([ids]), output_hidden_states=True)
    logits = output.logits[0, :-1].double()
    if extra_row is not None:
        hidden = output.hidden_states[-1][0, :-1].double()
        logits = torch.cat([logits, (hidden @ extra_row.double())[:, None]], dim=1)
    logprobs = torch.log_softmax(logits, dim=-1)
    return -float(sum(logprobs[i, ids[i + 1]] for i in range(len(ids) - 1)) / (len(ids) - 1))


@torch.no_grad()
def masked_nll(model: Any, tokenizer: Any, text: str) -> float:
    """Mean NLL of every token of ``tokenizer.tokenize(text)``, each masked alone between the tokenizer's own prefix
    and suffix special tokens."""
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
    framed = tokenizer(text)["input_ids"]  # the tokenizer's own prefix + ids + suffix
    start = next(i for i in range(len(framed)) if framed[i : i + len(ids)] == ids)
    total = 0.0
    for position in range(len(ids)):
        masked = list(framed)
        masked[start + position] = tokenizer.mask_token_id
        logits = model(torch.tensor([masked])).logits[0, start + position].double()
        total -= float(torch.log_softmax(logits, dim=-1)[ids[position]])
    return total / len(ids)
