"""Plugin model backends for lm-evaluation-harness (``hf-mlm``: masked LMs and BERT's next-sentence head)."""
