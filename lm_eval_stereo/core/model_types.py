"""Model types that decide which protocol a model is scored with: encoder-only models that transformers can load as
a causal LM (and that lm_eval's ``hf`` backend would then score as one) are masked LMs, served by ``--model hf-mlm``.

Cheap to import: no third-party package.
"""

from __future__ import annotations

#: encoder-only model types that transformers can load as a causal LM only with ``is_decoder=True``
ENCODER_MODEL_TYPES = frozenset(
    {"bert", "camembert", "data2vec-text", "electra", "ernie", "megatron-bert", "rembert", "roberta",
     "roberta-prelayernorm", "roc_bert", "xlm-roberta", "xlm-roberta-xl", "xmod"}
)  # fmt: skip
#: the modes of the ``masked_span`` request (:mod:`lm_eval_stereo.core.masked_requests`) that ``--model hf-mlm``
#: serves (:mod:`lm_eval_stereo.models.masked_lm`)
SPAN_MODES = ("l2r_single", "l2r", "all")
MASKED_LM_HINT = (
    "the plugin's log-likelihood tasks need a causal (decoder) LM; masked LMs (BERT, XLM-R, ...) run the masked-LM "
    "tasks with --model hf-mlm (e.g. --tasks stereoset_multi_mlm,gest_en_mlm)"
)
