"""Session fixtures for the masked-LM tests: tiny seeded BERT (WordPiece, NSP head) and XLM-R (Unigram, no NSP)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seeded tiny ``BertForPreTraining`` with a WordPiece tokenizer."""
    from lm_eval_stereo.local_models.tiny import build_bert

    return build_bert(tmp_path_factory.mktemp("tiny_bert"), seed=0)


@pytest.fixture(scope="session")
def tiny_xlmr(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seeded tiny ``XLMRobertaForMaskedLM`` with a SentencePiece-style Unigram tokenizer."""
    from lm_eval_stereo.local_models.tiny import build_xlmr

    return build_xlmr(tmp_path_factory.mktemp("tiny_xlmr"), seed=0)


__all__ = ["tiny_bert", "tiny_xlmr"]
