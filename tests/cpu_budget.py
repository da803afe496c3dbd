"""Each tier's CPU-second budget and each test file's share of it. ``make test`` and ``make test-quick`` set
``LM_EVAL_TESTS_CPU_BUDGET=1``; the run then fails when a file took more than its share by half (:data:`OVER`), in a
list after the CPU table (:mod:`cpu_report` gathers the figures, :func:`over_budget` judges them).

The budgets are what the tiers took, not what they should take: the quick tier's files 948 and 1,014 CPU-seconds
and the engine tier's 1,663 and 1,620 in two whole ``make test`` runs (2 xdist workers) on the 2-core machine, the
first while a bench run shared it, the second alone; the quick tier's budget also holds the quick parts of the two files
that count in the engine tier there. The targets, ``make test-quick`` in 4 minutes and ``make test`` in 15 on 2 idle
cores, would need about 440 and 1,300 (2 × 240 and 2 × 900 CPU-seconds less the workers' start-up and collection):
not met (docs/TESTED.md). The budget guards against growth: a file's share (:data:`SHARES`, per tier: a file with an
engine test counts in the engine tier in ``make test``, with its quick tests only in the quick tier in ``make
test-quick``) is the larger of its CPU-seconds in those runs; the files under 4 CPU-seconds share what is left of
their tier's budget equally, but never less than :data:`MINIMUM_SHARE` (a start of ``lm_eval`` alone takes about 3).
A file that grows past its share by half is a sign to move work into a
shared fixture, or to give it a share here, out of another file's.
"""

from __future__ import annotations

from collections.abc import Mapping

#: CPU-seconds of each tier's files (see the module docstring)
TIER_BUDGETS = {"quick": 1260.0, "engine": 1700.0}
#: per tier, the files that need more than an equal share of what is left of its budget, with their CPU-seconds
SHARES: dict[str, dict[str, float]] = {
    "quick": {
        # quick tests of files whose engine tests put them in the engine tier in `make test`: their quick part,
        # measured in `make test-quick`
        "tests/benchmarks/lm_eval_bias/test_lm_eval_bias.py": 109.7,
        "tests/backends/test_served.py": 132.1,
        "tests/bench/test_bench_workers.py": 5.4,
        "tests/commands/test_demo_tasks.py": 4.5,
        "tests/hooks/test_answer_cache.py": 4.0,
        "tests/hooks/test_stock_tasks.py": 125.6,
        "tests/hooks/test_plugin_discovery.py": 87.8,
        "tests/report/test_report.py": 60.7,
        "tests/reliability/test_files_written_whole.py": 67.6,
        "tests/backends/test_hf_prefix.py": 54.3,
        "tests/backends/test_data_parallel.py": 46.1,
        "tests/results/test_runs_read_guarded.py": 43.3,
        "tests/suite/test_package_shape.py": 42.8,
        "tests/reliability/test_data_options_and_commands.py": 27.6,
        "tests/reliability/test_lm_eval_files_whole.py": 34.3,
        "tests/reliability/test_run_arguments_and_cache_files.py": 26.7,
        "tests/benchmarks/mbbq/test_mbbq_tasks.py": 22.9,
        "tests/benchmarks/test_new_benchmark_folder.py": 18.8,
        "tests/benchmarks/test_third_party_benchmark.py": 19.4,
        "tests/report/test_report_capability.py": 17.3,
        "tests/report/test_report_readings.py": 16.9,
        "tests/commands/test_data_command.py": 20.4,
        "tests/reliability/test_killed_runs.py": 18.9,
        "tests/benchmarks/test_batch_invariance.py": 15.1,
        "tests/core/test_registry.py": 19.3,
        "tests/reliability/test_secrets_everywhere.py": 16.0,
        "tests/benchmarks/eurogest/test_eurogest.py": 14.1,
        "tests/suite/test_tiers.py": 13.3,
        "tests/benchmarks/stereotype_leakage/test_stereotype_leakage.py": 13.0,
        "tests/benchmarks/stereoset_multi/test_stereoset_tasks.py": 11.1,
        "tests/export/test_export_eee.py": 12.9,
        "tests/core/test_extras.py": 12.4,
        "tests/report/test_report_first_screen.py": 9.4,
        "tests/reliability/test_windows_metadata_and_tokenizers.py": 10.0,
        "tests/backends/test_replay.py": 11.4,
        "tests/benchmarks/rubia/test_rubia_tasks.py": 9.2,
        "tests/commands/test_inventory.py": 8.0,
        "tests/benchmarks/s_jsd/test_s_jsd.py": 7.9,
        "tests/benchmarks/test_score_parity.py": 8.6,
        "tests/benchmarks/gest/test_gest_tasks.py": 8.2,
        "tests/benchmarks/stereotype_leakage/test_leakage_comparisons.py": 6.8,
        "tests/benchmarks/kobbq/test_kobbq.py": 6.1,
        "tests/benchmarks/german_gender_bias/test_persona_lm_eval.py": 6.1,
        "tests/results/test_provenance.py": 5.6,
        "tests/bench/test_bench_precision.py": 5.3,
        "tests/benchmarks/german_gender_bias/test_gerbbq_tasks.py": 5.4,
        "tests/core/test_near_ties.py": 5.6,
        "tests/benchmarks/stereotype_leakage/test_stereotype_leakage_gen.py": 4.1,
    },
    "engine": {
        "tests/backends/test_vllm_stock_tasks.py": 420.1,
        "tests/backends/test_vllm_served.py": 395.7,
        "tests/backends/test_vllm.py": 302.8,
        "tests/real_models/test_real_models_tier.py": 237.1,
        "tests/backends/test_served.py": 139.1,
        "tests/benchmarks/lm_eval_bias/test_lm_eval_bias.py": 111.8,
        "tests/backends/test_vllm_prefix.py": 55.6,
        "tests/backends/test_vllm_prefix_parts.py": 12.9,
    },
}
#: the least share of a file without one of its own (the smallest files' CPU-seconds are mostly noise)
MINIMUM_SHARE = 4.0
#: a file fails the run when it takes more than its share times this
OVER = 1.5
#: set (to anything but ``0``) by ``make test`` and ``make test-quick``: the run fails on a file over its share
ENV = "LM_EVAL_TESTS_CPU_BUDGET"


def shares(files: Mapping[str, str]) -> dict[str, float]:
    """Each file's share (``files``: file -> its tier): its own, else an equal part of what :data:`SHARES` leaves of
    its tier's budget among the tier's files without one, at least :data:`MINIMUM_SHARE`."""
    result: dict[str, float] = {}
    for tier, budget in TIER_BUDGETS.items():
        members = [name for name, of in files.items() if of == tier]
        listed = SHARES.get(tier, {})
        own = {name: listed[name] for name in members if name in listed}
        others = [name for name in members if name not in own]
        left = max(budget - sum(own.values()), 0.0)
        result |= own | {name: max(MINIMUM_SHARE, left / len(others)) for name in others}
    return result


def over_budget(figures: Mapping[str, tuple[float, str]]) -> list[str]:
    """The files (``figures``: file -> (CPU-seconds, tier)) that took more than :data:`OVER` times their share, one
    line each, the largest first."""
    share = shares({name: tier for name, (_, tier) in figures.items()})
    over = [(cpu, name) for name, (cpu, _) in figures.items() if cpu > OVER * share[name]]
    return [
        f"{name}: {cpu:.1f} CPU-seconds, over {OVER} × its share of {share[name]:.1f} "
        f"(the {figures[name][1]} tier's budget: {TIER_BUDGETS[figures[name][1]]:g})"
        for cpu, name in sorted(over, reverse=True)
    ]
