"""Tiny, seeded, randomly initialised models with locally trained tokenizers.

Nothing is downloaded: the tokenizer is trained with ``tokenizers`` on a small built-in multilingual corpus and the
weights come from a seeded random initialisation, so the same seed always gives the same files. The causal model has a
chat template, so generative tasks can be run with ``--apply_chat_template``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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


def build_causal_lm(directory: str | Path, seed: int = 0, shape: str = "tiny") -> Path:
    """Write a seeded GPT-2-style causal LM with a byte-level BPE tokenizer and a chat template to ``directory``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    directory = Path(directory)
    dims = CAUSAL_SHAPES[shape]
    eos = "<|endoftext|>"
    raw = train_byte_level_bpe(dims["vocab_size"], [eos, "<|user|>", "<|assistant|>", "<|system|>", "<|end|>"])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token=eos, eos_token=eos, unk_token=eos)
    tokenizer.chat_template = CHAT_TEMPLATE
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=512,
        n_layer=dims["n_layer"],
        n_embd=dims["n_embd"],
        n_head=dims["n_head"],
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config).eval()
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


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


def build_wordpiece_tokenizer(vocab_size: int = 0):
    """A lower-casing WordPiece tokenizer (BERT style) trained on :data:`CORPUS`, padded with fillers to ``vocab_size``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    def fresh(model):
        tokenizer = Tokenizer(model)
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.WordPiece()
        return tokenizer

    raw = fresh(models.WordPiece(unk_token="[UNK]"))
    trainer = trainers.WordPieceTrainer(vocab_size=2000, special_tokens=BERT_SPECIALS, show_progress=False)
    raw.train_from_iterator(list(CORPUS) * 4, trainer=trainer)
    vocab = raw.get_vocab()
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
    """A SentencePiece-style Unigram tokenizer (XLM-R style, ``▁`` word prefix) trained on :data:`CORPUS`."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    def fresh(model):
        tokenizer = Tokenizer(model)
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        return tokenizer

    raw = fresh(models.Unigram())
    trainer = trainers.UnigramTrainer(
        vocab_size=600, special_tokens=XLMR_SPECIALS, unk_token="<unk>", show_progress=False
    )
    raw.train_from_iterator(list(CORPUS) * 4, trainer=trainer)
    pieces = _unigram_pieces(raw)
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


def _unigram_pieces(raw) -> list[tuple[str, float]]:
    """(piece, log-probability) pairs of a trained ``tokenizers`` Unigram model, in id order."""
    import json

    return [tuple(entry) for entry in json.loads(raw.to_str())["model"]["vocab"]]


def build_bert(directory: str | Path, seed: int = 0, shape: str = "tiny") -> Path:
    """Write a seeded ``BertForPreTraining`` (MLM + next-sentence heads) with a WordPiece tokenizer to ``directory``."""
    import torch
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
    torch.manual_seed(seed)
    model = BertForPreTraining(config).eval()
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_xlmr(directory: str | Path, seed: int = 0, shape: str = "tiny") -> Path:
    """Write a seeded ``XLMRobertaForMaskedLM`` (no next-sentence head) with a Unigram tokenizer to ``directory``."""
    import torch
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
    torch.manual_seed(seed)
    model = XLMRobertaForMaskedLM(config).eval()
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


BUILDERS["bert"] = build_bert
BUILDERS["xlmr"] = build_xlmr
