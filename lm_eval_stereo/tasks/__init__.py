"""The plugin's benchmarks, one folder each (lm_eval's task layout). This list is the one place where a benchmark is
added: each folder's ``__init__.py`` declares its :class:`~lm_eval_stereo.core.registry.Benchmark`, and importing this
package registers them (lm_eval imports it before any plugin task class, see :mod:`lm_eval_stereo.core.registry`)."""

from lm_eval_stereo.core.registry import register
from lm_eval_stereo.tasks import (
    eurogest,
    german_gender_bias,
    gest,
    kobbq,
    lm_eval_bias,
    mbbq,
    s_jsd,
    stereoset_multi,
    stereotype_leakage,
)

BENCHMARKS = (
    stereoset_multi.BENCHMARK,
    gest.BENCHMARK,
    german_gender_bias.BENCHMARK,
    s_jsd.BENCHMARK,
    stereotype_leakage.BENCHMARK,
    mbbq.BENCHMARK,
    kobbq.BENCHMARK,
    eurogest.BENCHMARK,
    lm_eval_bias.BENCHMARK,
)
register(*BENCHMARKS)
