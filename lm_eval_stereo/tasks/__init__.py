"""The plugin's benchmarks, one folder each (lm_eval's task layout). :data:`FOLDERS` is the one place where a benchmark
is added, one line: each folder's ``__init__.py`` declares its :class:`~lm_eval_stereo.core.registry.Benchmark`, and
importing this package registers them in this order (lm_eval imports it before any plugin task class, see
:mod:`lm_eval_stereo.core.registry`; the registry also finds :data:`BENCHMARKS` through the entry-point group
``lm_eval_stereo.benchmarks``, as it finds a benchmark from outside)."""

from importlib import import_module

from lm_eval_stereo.core.registry import register

#: the benchmark folders, in the order the registry, the README and the report list them
FOLDERS = (
    "stereoset_multi",
    "gest",
    "german_gender_bias",
    "s_jsd",
    "stereotype_leakage",
    "mbbq",
    "kobbq",
    "eurogest",
    "rubia",
    "lm_eval_bias",
)

BENCHMARKS = tuple(import_module(f"{__name__}.{folder}").BENCHMARK for folder in FOLDERS)
register(*BENCHMARKS)
