"""Publishing lm_eval runs: Every Eval Ever records (:mod:`.eee`, :mod:`.instances`) and a model-card table
(:mod:`.model_card`) of the headlines that :mod:`.headlines` reads from the results files and the metric
declarations; ``lm-eval-stereo export`` (:mod:`.command`) writes them."""
