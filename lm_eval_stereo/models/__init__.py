"""Plugin model backends for lm-evaluation-harness (``hf-mlm``: masked LMs and BERT's next-sentence head;
``hf-prefix``: lm_eval's ``hf`` causal LM forwarding every shared prefix once)."""
