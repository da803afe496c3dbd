"""``lm-eval-stereo data``: list, fetch, mirror and verify the pinned upstream files of the benchmarks.

:mod:`~lm_eval_stereo.datastore.catalogue` says which files each benchmark needs, :mod:`~.mirror` writes and checks
the offline mirror layout, :mod:`~.command` is the command line. The sources are those the registered benchmarks
declare (:mod:`lm_eval_stereo.core.registry`); where files come from and how they are verified is
:mod:`lm_eval_stereo.core.sources`.
"""
