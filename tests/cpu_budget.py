"""Each tier's CPU-second budget and each test file's share of it. ``make test`` and ``make test-quick`` set
``LM_EVAL_TESTS_CPU_BUDGET=1``; the run then fails when a file took more than its share by half (:data:`OVER`), in a
list after the CPU table (:mod:`cpu_report` gathers the figures, :func:`over_budget` judges them).

The budgets are what the tiers may take on the idle 2-core machine, both xdist workers busy: ``make test-quick`` in
4 minutes is 2 × 240 CPU-seconds less the workers' start-up and collection, about 440 for the quick tier's files;
``make test`` in 15 minutes is 2 × 900 less start-up, about 1,740, of which the engine tier's files get 1,300.

A file's share (:data:`SHARES`, per tier: a file with an engine test counts in the engine tier in ``make test``, with
its quick tests only in the quick tier in ``make test-quick``) is its part of the tier as measured, scaled to the
budget: the quick tier's from one ``make test-quick`` run on the shared machine (901.5 CPU-seconds, scaled by 0.425,
what leaves every other file :data:`MINIMUM_SHARE`), the engine tier's from the vLLM tier's run and the last whole
suite's figures. The others share what is left of their tier's budget equally, but never less than
:data:`MINIMUM_SHARE`. A file that grows past its share by half is a sign to move work into a shared fixture, or to
give it a share here, out of another file's.
"""

from __future__ import annotations

from collections.abc import Mapping

#: CPU-seconds of each tier's files (see the module docstring)
TIER_BUDGETS = {"quick": 440.0, "engine": 1300.0}
#: per tier, the files that need more than an equal share of what is left of its budget, with their CPU-seconds
SHARES: dict[str, dict[str, float]] = {
    "quick": {
        "tests/benchmarks/lm_eval_bias/test_lm_eval_bias.py": 33.7,
        "tests/reliability/test_files_written_whole.py": 28.9,
        "tests/hooks/test_plugin_discovery.py": 24.6,
        "tests/report/test_report.py": 23.0,
        "tests/benchmarks/mbbq/test_mbbq_tasks.py": 22.6,
        "tests/backends/test_hf_prefix.py": 21.2,
        "tests/results/test_runs_read_guarded.py": 18.5,
        "tests/suite/test_package_shape.py": 15.3,
        "tests/reliability/test_run_arguments_and_cache_files.py": 11.1,
        "tests/reliability/test_data_options_and_commands.py": 10.6,
        "tests/benchmarks/test_third_party_benchmark.py": 8.7,
        "tests/commands/test_data_command.py": 8.3,
        "tests/reliability/test_killed_runs.py": 7.8,
        "tests/backends/test_data_parallel.py": 7.7,
        "tests/benchmarks/test_new_benchmark_folder.py": 7.4,
        "tests/backends/test_served.py": 7.3,
        "tests/report/test_report_readings.py": 7.0,
        "tests/report/test_report_capability.py": 6.8,
        "tests/benchmarks/test_batch_invariance.py": 6.5,
        "tests/core/test_registry.py": 6.3,
        "tests/suite/test_tiers.py": 5.8,
        "tests/export/test_export_eee.py": 5.7,
        "tests/benchmarks/stereotype_leakage/test_stereotype_leakage.py": 5.6,
        "tests/benchmarks/eurogest/test_eurogest.py": 5.4,
        "tests/hooks/test_answer_cache.py": 5.1,
        "tests/benchmarks/stereoset_multi/test_stereoset_tasks.py": 5.0,
        "tests/core/test_extras.py": 4.6,
        "tests/commands/test_inventory.py": 4.3,
        "tests/reliability/test_windows_metadata_and_tokenizers.py": 4.2,
        "tests/backends/test_replay.py": 3.9,
        "tests/benchmarks/test_score_parity.py": 3.8,
        "tests/report/test_report_first_screen.py": 3.7,
        "tests/benchmarks/gest/test_gest_tasks.py": 3.4,
        "tests/benchmarks/rubia/test_rubia_tasks.py": 3.4,
        "tests/benchmarks/stereotype_leakage/test_leakage_comparisons.py": 3.4,
        "tests/benchmarks/s_jsd/test_s_jsd.py": 3.2,
    },
    "engine": {
        "tests/backends/test_vllm_served.py": 412.0,
        "tests/backends/test_vllm.py": 252.0,
        "tests/real_models/test_real_models_tier.py": 230.0,
        "tests/benchmarks/lm_eval_bias/test_lm_eval_bias.py": 145.0,
        "tests/backends/test_served.py": 135.0,
        "tests/backends/test_vllm_prefix.py": 54.0,
        "tests/backends/test_vllm_prefix_parts.py": 13.0,
    },
}
#: the least share of a file without one of its own (the smallest files' CPU-seconds are mostly noise)
MINIMUM_SHARE = 2.0
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
