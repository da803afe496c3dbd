"""Each tier's CPU-second budget and each test file's share of it. ``make test`` and ``make test-quick`` set
``LM_EVAL_TESTS_CPU_BUDGET=1``; the run then fails when a file took more than its share by half (:data:`OVER`), in a
list after the CPU table (:mod:`cpu_report` gathers the figures, :func:`over_budget` judges them), judged at the
machine's usual speed: a run whose speed loop was slower (:data:`USUAL_LOOP_SECONDS`) has its figures scaled down first.

The budgets are what the tiers took, not what they should take, with a quarter more than the earlier runs they were set
from (quick 521, engine 1,197); docs/TESTED.md gives the runs since, and the machine's speed in each. The budget guards
against growth: a file's share (:data:`SHARES`, per tier: a file with an engine test counts in the engine tier in ``make
test``, with its quick tests only in the quick tier in ``make test-quick``) is the largest of its CPU-seconds in those
runs and the earlier ones the shares were set from (a file's figure includes a fork server's start, about 5 CPU-seconds,
when it is the first of its worker to need one); the files under 4 CPU-seconds share what is left of their tier's budget
equally, but never less than :data:`MINIMUM_SHARE` (a start of ``lm_eval`` alone takes about 3). The order the files run
in (``conftest.scheduling_key``) reads the same figures. A file that grows past its share by half is a sign to move work
into a shared fixture, or to give it a share here, out of another file's.
"""

from __future__ import annotations

from collections.abc import Mapping

#: CPU-seconds of each tier's files (see the module docstring)
TIER_BUDGETS = {"quick": 650.0, "engine": 1500.0}
#: per tier, the files that need more than an equal share of what is left of its budget, with their CPU-seconds
SHARES: dict[str, dict[str, float]] = {
    "quick": {
        # a file with engine tests counts here with its quick tests only (make test-quick)
        "tests/hooks/test_stock_tasks.py": 101.3,
        "tests/hooks/test_plugin_discovery.py": 92.9,
        "tests/benchmarks/lm_eval_bias/test_lm_eval_bias.py": 58.4,
        "tests/backends/test_hf_prefix.py": 59.2,
        "tests/backends/test_data_parallel.py": 49.3,
        "tests/report/test_report.py": 30.4,
        "tests/reliability/test_data_options_and_commands.py": 26.6,
        "tests/reliability/test_run_arguments_and_cache_files.py": 26.4,
        "tests/reliability/test_lm_eval_files_whole.py": 24.1,
        "tests/backends/test_served.py": 22.9,
        "tests/reliability/test_killed_runs.py": 19.4,
        "tests/benchmarks/mbbq/test_mbbq_tasks.py": 19.4,
        "tests/benchmarks/test_batch_invariance.py": 16.1,
        "tests/suite/test_tiers.py": 14.2,
        "tests/benchmarks/test_new_benchmark_folder.py": 12.9,
        "tests/benchmarks/eurogest/test_eurogest.py": 12.7,
        "tests/benchmarks/stereotype_leakage/test_stereotype_leakage.py": 11.0,
        "tests/reliability/test_secrets_everywhere.py": 10.9,
        "tests/reliability/test_windows_metadata_and_tokenizers.py": 11.2,
        "tests/backends/test_replay.py": 10.4,
        "tests/benchmarks/test_third_party_benchmark.py": 10.1,
        "tests/benchmarks/test_score_parity.py": 9.9,
        "tests/benchmarks/s_jsd/test_s_jsd.py": 9.9,
        "tests/benchmarks/rubia/test_rubia_tasks.py": 10.0,
        "tests/benchmarks/stereoset_multi/test_stereoset_tasks.py": 9.6,
        "tests/suite/test_package_shape.py": 9.5,
        "tests/core/test_registry.py": 8.7,
        "tests/export/test_export_eee.py": 8.2,
        "tests/commands/test_inventory.py": 7.8,
        "tests/core/test_extras.py": 7.8,
        "tests/report/test_report_capability.py": 7.1,
        "tests/benchmarks/gest/test_gest_tasks.py": 7.0,
        "tests/reliability/test_files_written_whole.py": 6.8,
        "tests/benchmarks/german_gender_bias/test_persona_lm_eval.py": 5.4,
        "tests/commands/test_data_command.py": 5.3,
        "tests/benchmarks/kobbq/test_kobbq.py": 5.0,
        "tests/results/test_provenance.py": 4.7,
        "tests/core/test_near_ties.py": 4.6,
        "tests/benchmarks/gest/test_slavic_gender.py": 4.6,
        "tests/benchmarks/gest/test_gest_metrics.py": 4.6,
        "tests/benchmarks/german_gender_bias/test_gerbbq_tasks.py": 4.5,
        "tests/bench/test_bench_workers.py": 4.4,
        "tests/hooks/test_answer_cache.py": 4.3,
        "tests/benchmarks/stereotype_leakage/test_stereotype_leakage_gen.py": 4.1,
    },
    "engine": {
        "tests/backends/test_vllm_served.py": 407.0,
        "tests/backends/test_vllm.py": 265.4,
        "tests/backends/test_vllm_stock_tasks.py": 233.1,
        "tests/real_models/test_real_models_tier.py": 206.5,
        "tests/backends/test_served.py": 119.2,
        "tests/benchmarks/lm_eval_bias/test_lm_eval_bias.py": 93.7,
        "tests/backends/test_vllm_prefix.py": 55.3,
        "tests/backends/test_vllm_prefix_parts.py": 19.2,
    },
}
#: the least share of a file without one of its own (the smallest files' CPU-seconds are mostly noise)
MINIMUM_SHARE = 4.0
#: a file fails the run when it takes more than its share times this
OVER = 1.5
#: set (to anything but ``0``) by ``make test`` and ``make test-quick``: the run fails on a file over its share
ENV = "LM_EVAL_TESTS_CPU_BUDGET"
#: the median time of the speed loop (:func:`cpu_report.loop_seconds`) in a run on the 2-core machine at its usual
#: speed (docs/TESTED.md): a run whose median was slower is judged at this speed (the host's slow hours are no file's
#: growth)
USUAL_LOOP_SECONDS = 0.08


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


def over_budget(figures: Mapping[str, tuple[float, str]], loop_median: float = USUAL_LOOP_SECONDS) -> list[str]:
    """The files (``figures``: file -> (CPU-seconds, tier)) that took more than :data:`OVER` times their share, one
    line each, the largest first. Where the speed loop's median time in the run (``loop_median``) was slower than
    :data:`USUAL_LOOP_SECONDS`, each file's CPU-seconds are divided by the ratio first (never multiplied)."""
    slower = max(1.0, loop_median / USUAL_LOOP_SECONDS)
    share = shares({name: tier for name, (_, tier) in figures.items()})
    over = [(cpu, name) for name, (cpu, _) in figures.items() if cpu / slower > OVER * share[name]]

    def at_usual_speed(cpu: float) -> str:
        """Where the run was slower, what ``cpu`` comes to at the usual speed."""
        if slower == 1:
            return ""
        return f" ({cpu / slower:.1f} at the usual speed: the loop took {slower:.2f} × its usual time)"

    return [
        f"{name}: {cpu:.1f} CPU-seconds{at_usual_speed(cpu)}, over {OVER} × its share of "
        f"{share[name]:.1f} (the {figures[name][1]} tier's budget: {TIER_BUDGETS[figures[name][1]]:g})"
        for cpu, name in sorted(over, reverse=True)
    ]
