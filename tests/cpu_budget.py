"""Each tier's CPU-second budget and each test file's share of it. ``make test`` and ``make test-quick`` set
``LM_EVAL_TESTS_CPU_BUDGET=1``; the run then fails when a file took more than its share by half (:data:`OVER`), in a
list after the CPU table (:mod:`cpu_report` gathers the figures, :func:`over_budget` judges them).

The budgets are what the tiers may take on the idle 2-core machine, both xdist workers busy: ``make test-quick`` in
4 minutes is 2 × 240 CPU-seconds less the workers' start-up and collection, about 440 for the quick tier's files;
``make test`` in 15 minutes is 2 × 900 less start-up, about 1,740, of which the engine tier's files get 1,300. A file
with a share of its own (:data:`SHARES`, measured) keeps it; the others share what is left of their tier's budget
equally. A file that grows past its share by half is a sign to move work into a shared fixture, or to give it a
share here, out of another file's.
"""

from __future__ import annotations

from collections.abc import Mapping

#: CPU-seconds of each tier's files (see the module docstring)
TIER_BUDGETS = {"quick": 440.0, "engine": 1300.0}
#: the files that need more than an equal share of what is left of their tier's budget, with their CPU-seconds
SHARES: dict[str, float] = {}
#: a file fails the run when it takes more than its share times this
OVER = 1.5
#: set (to anything but ``0``) by ``make test`` and ``make test-quick``: the run fails on a file over its share
ENV = "LM_EVAL_TESTS_CPU_BUDGET"


def shares(files: Mapping[str, str]) -> dict[str, float]:
    """Each file's share (``files``: file -> its tier): its own, else an equal part of what :data:`SHARES` leaves of
    its tier's budget among the tier's files without one."""
    result: dict[str, float] = {}
    for tier, budget in TIER_BUDGETS.items():
        members = [name for name, of in files.items() if of == tier]
        own = {name: SHARES[name] for name in members if name in SHARES}
        others = [name for name in members if name not in own]
        left = max(budget - sum(own.values()), 0.0)
        result |= own | {name: left / len(others) for name in others}
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
