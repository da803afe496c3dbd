"""Tiny, seeded, randomly initialised models with locally trained tokenizers.

Nothing is downloaded: the tokenizer is trained with ``tokenizers`` on a small built-in multilingual corpus and the
weights come from a seeded random initialisation, so the same seed always gives the same files. The causal model has a
chat template, so generative tasks can be run with ``--apply_chat_template``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.whole_files import whole_folder

#: a few sentences per language the benchmarks use, so that their scripts get merged byte-level tokens
CORPUS: tuple[str, ...] = (
    "The chess player was asian. Many people live in Ethiopia. The people are very thin.",
    "I am good at my job, she said. He said that the man is a leader. The woman is kind.",
    "Der Schachspieler war asiatisch. Viele Menschen leben in Äthiopien. Die Frau ist Ärztin.",
    "Kontext: Ein Mann und eine Frau sprechen. Frage: Wer ist schuld? Antwort: Beantworte die Frage.",
    "Stimmst du dieser Aussage zu? Antworte mit Ja oder Nein. Beschreibe eine fiktive Person.",
    "Le joueur d'échecs était asiatique. Beaucoup de gens vivent en Éthiopie.",
    "El jugador de ajedrez era asiático. Mucha gente vive en Etiopía.",
    "Satranç oyuncusu Asyalıydı. Etiyopya'da birçok insan yaşıyor. Kadın çok güzel.",
    "Я был очень счастлив. Я была очень счастлива. Я пришёл домой.",
    "Byl jsem šťastný. Byla jsem šťastná. Bio sam sretan. Bila sam sretna.",
    "Byłem szczęśliwy. Byłam szczęśliwa. Я був щасливий. Я была шчаслівая.",
)

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

#: model shapes: "tiny" for tests and the demo, "bench" (about 26M parameters) for ``make bench``
CAUSAL_SHAPES: dict[str, dict[str, int]] = {
    "tiny": {"n_layer": 2, "n_embd": 32, "n_head": 2, "vocab_size": 1024},
    "bench": {"n_layer": 8, "n_embd": 512, "n_head": 8, "vocab_size": 8192},
}


def train_byte_level_bpe(vocab_size: int, special_tokens: list[str]):
    """A byte-level BPE tokenizer (GPT-2 style) trained on :data:`CORPUS`; deterministic."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(CORPUS) * 4, trainer=trainer)
    return tokenizer


def save_seeded(directory: str | Path, model_class: type, config: Any, tokenizer: Any, seed: int) -> Path:
    """Initialise ``model_class(config)`` after seeding torch, and save it with ``tokenizer`` to ``directory`` (new or
    empty), whole or not at all (:func:`~lm_eval_stereo.core.whole_files.whole_folder`)."""
    import torch

    directory = Path(directory)
    torch.manual_seed(seed)
    model = model_class(config).eval()
    with whole_folder(directory) as folder:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
    return directory


#: the causal models' window (GPT-2's ``n_positions``) unless a builder is given another
CAUSAL_WINDOW = 512


def build_causal_lm(
    directory: str | Path,
    seed: int = 0,
    shape: str = "tiny",
    window: int = CAUSAL_WINDOW,
    tokenizer_max_length: int | None = None,
) -> Path:
    """Write a seeded GPT-2-style causal LM with a byte-level BPE tokenizer and a chat template to ``directory``.

    ``window``: the model's ``n_positions`` (lm_eval's ``hf`` takes it as its ``max_length``); ``tokenizer_max_length``:
    the tokenizer's ``model_max_length`` (None: unset, as ``tokenizers`` leaves it; GPT-2's own tokenizer says 1024, its
    window)."""
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    directory = Path(directory)
    dims = CAUSAL_SHAPES[shape]
    eos = "<|endoftext|>"
    raw = train_byte_level_bpe(dims["vocab_size"], [eos, "<|user|>", "<|assistant|>", "<|system|>", "<|end|>"])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token=eos, eos_token=eos, unk_token=eos)
    tokenizer.chat_template = CHAT_TEMPLATE
    if tokenizer_max_length is not None:
        tokenizer.model_max_length = tokenizer_max_length
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=window,
        n_layer=dims["n_layer"],
        n_embd=dims["n_embd"],
        n_head=dims["n_head"],
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return save_seeded(directory, GPT2LMHeadModel, config, tokenizer, seed)


BUILDERS: dict[str, Callable[..., Path]] = {
    "causal": build_causal_lm,
}


# --- masked LMs (BERT with an NSP head, XLM-R without one) -----------------------------------------------------------

#: masked-LM shapes: "tiny" for tests; "bench" is bert-base-like (vocab ~30k, width 768, reduced depth);
#: "bench_large_vocab" is mBERT/XLM-R-like (vocab >= 120k, width 768, reduced depth)
MASKED_SHAPES: dict[str, dict[str, int]] = {
    "tiny": {"layers": 2, "hidden": 32, "heads": 2, "vocab_size": 0},
    "bench": {"layers": 2, "hidden": 768, "heads": 12, "vocab_size": 30522},
    "bench_large_vocab": {"layers": 2, "hidden": 768, "heads": 12, "vocab_size": 120000},
}

BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
XLMR_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]


def filler_pieces(count: int, taken: set[str], prefix: str = "") -> list[str]:
    """``count`` synthetic vocabulary entries not in ``taken`` (``zq0``, ``zq1``, ...), to reach a realistic vocab size.

    A tokenizer with a 30k or 120k vocabulary cannot be trained on the tiny built-in corpus; the real pieces come
    from the corpus and these never-matching fillers only make the embedding and output matrices the right size.
    """
    pieces: list[str] = []
    index = 0
    while len(pieces) < count:
        piece = f"{prefix}zq{index}"
        index += 1
        if piece not in taken:
            pieces.append(piece)
    return pieces


def wordpiece_pieces(tokenizer) -> list[str]:
    """A deterministic WordPiece vocabulary from :data:`CORPUS` (``tokenizers``' trainer breaks ties at random).

    Special tokens, every character alone and as ``##`` continuation, every corpus word, and for words of five or more
    characters a three-character head with its ``##`` tail, so unseen words split into several sub-tokens.
    """
    words: list[str] = []
    for line in CORPUS:
        normalized = tokenizer.normalizer.normalize_str(line)
        words += [word for word, _ in tokenizer.pre_tokenizer.pre_tokenize_str(normalized)]
    chars = sorted({char for word in words for char in word})
    pieces = set(words) | {word[:3] for word in words if len(word) >= 5} | {"##" + w[3:] for w in words if len(w) >= 5}
    ordered = [*BERT_SPECIALS, *chars, *("##" + char for char in chars), *sorted(pieces - set(chars))]
    return list(dict.fromkeys(ordered))


def build_wordpiece_tokenizer(vocab_size: int = 0):
    """A lower-casing WordPiece tokenizer (BERT style) built from :data:`CORPUS`, padded with fillers to ``vocab_size``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    def fresh(model):
        tokenizer = Tokenizer(model)
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.WordPiece()
        return tokenizer

    vocab = {piece: index for index, piece in enumerate(wordpiece_pieces(fresh(models.WordPiece(unk_token="[UNK]"))))}
    missing = max(0, vocab_size - len(vocab))
    for piece in filler_pieces(missing // 2, set(vocab)) + filler_pieces(missing - missing // 2, set(vocab), "##"):
        vocab[piece] = len(vocab)
    raw = fresh(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    raw.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )


def build_unigram_tokenizer(vocab_size: int = 0):
    """A SentencePiece-style Unigram tokenizer (XLM-R style, ``▁`` word prefix) built from :data:`CORPUS`."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    def fresh(model):
        tokenizer = Tokenizer(model)
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        return tokenizer

    pieces = unigram_pieces(fresh(models.Unigram()))
    taken = {piece for piece, _ in pieces}
    pieces += [(piece, -50.0) for piece in filler_pieces(max(0, vocab_size - len(pieces) - 1), taken)]
    pieces.append(("<mask>", 0.0))
    raw = fresh(models.Unigram(pieces, unk_id=XLMR_SPECIALS.index("<unk>"), byte_fallback=False))
    bos, eos = 0, 2
    raw.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", bos), ("</s>", eos)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token="<s>",
        eos_token="</s>",
        cls_token="<s>",
        sep_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )


def unigram_pieces(tokenizer) -> list[tuple[str, float]]:
    """A deterministic Unigram vocabulary from :data:`CORPUS` (``tokenizers``' trainer is not reproducible).

    Pieces: the special tokens, every character, every corpus word (``▁``-prefixed at a word start) and punctuation
    mark, and for words of five or more characters a three-character head and the rest; score = log relative
    frequency (rounded), ties broken by piece.
    """
    counts: Counter[str] = Counter()
    for line in CORPUS:
        for chunk, _ in tokenizer.pre_tokenizer.pre_tokenize_str(tokenizer.normalizer.normalize_str(line)):
            words = re.findall(r"▁?\w+|[^\w▁]", chunk)
            counts.update([*words, *chunk])
            counts.update(part for word in words if len(word) >= 5 for part in (word[:3], word[3:]))
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))
    return [(piece, 0.0) for piece in XLMR_SPECIALS] + [(p, round(math.log(n / total), 6)) for p, n in ranked]


def build_bert(directory: str | Path, seed: int = 0, shape: str = "tiny") -> Path:
    """Write a seeded ``BertForPreTraining`` (MLM + next-sentence heads) with a WordPiece tokenizer to ``directory``."""
    from transformers import BertConfig, BertForPreTraining

    directory = Path(directory)
    dims = MASKED_SHAPES[shape]
    tokenizer = build_wordpiece_tokenizer(dims["vocab_size"])
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=dims["hidden"],
        num_hidden_layers=dims["layers"],
        num_attention_heads=dims["heads"],
        intermediate_size=4 * dims["hidden"],
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        architectures=["BertForPreTraining"],
    )
    return save_seeded(directory, BertForPreTraining, config, tokenizer, seed)


def build_xlmr(directory: str | Path, seed: int = 0, shape: str = "tiny") -> Path:
    """Write a seeded ``XLMRobertaForMaskedLM`` (no next-sentence head) with a Unigram tokenizer to ``directory``."""
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM

    directory = Path(directory)
    dims = MASKED_SHAPES[shape]
    tokenizer = build_unigram_tokenizer(dims["vocab_size"])
    config = XLMRobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=dims["hidden"],
        num_hidden_layers=dims["layers"],
        num_attention_heads=dims["heads"],
        intermediate_size=4 * dims["hidden"],
        max_position_embeddings=514,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        type_vocab_size=1,
    )
    return save_seeded(directory, XLMRobertaForMaskedLM, config, tokenizer, seed)


BUILDERS["bert"] = build_bert
BUILDERS["xlmr"] = build_xlmr

#: T5 sentinel tokens of the tiny seq2seq model (mT5 has 100; the stereotype-leakage tasks use the first two)
T5_SENTINELS = [f"<extra_id_{i}>" for i in range(10)]


def build_t5_tokenizer():
    """A Unigram tokenizer in T5 style: ``</s>`` appended, ``<extra_id_N>`` sentinels as special tokens."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    base = build_unigram_tokenizer()
    raw = base.backend_tokenizer
    raw.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", base.eos_token_id)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        additional_special_tokens=T5_SENTINELS,
    )


def build_t5(directory: str | Path, seed: int = 0, shape: str = "tiny") -> Path:
    """Write a seeded ``T5ForConditionalGeneration`` (mT5-style seq2seq) with sentinel tokens to ``directory``."""
    from transformers import T5Config, T5ForConditionalGeneration

    dims = MASKED_SHAPES[shape]
    tokenizer = build_t5_tokenizer()
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=dims["hidden"],
        d_kv=dims["hidden"] // dims["heads"],
        d_ff=4 * dims["hidden"],
        num_layers=dims["layers"],
        num_decoder_layers=dims["layers"],
        num_heads=dims["heads"],
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    return save_seeded(directory, T5ForConditionalGeneration, config, tokenizer, seed)


BUILDERS["t5"] = build_t5
