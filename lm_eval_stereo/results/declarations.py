"""Which benchmark and metric set computed a task's results, read from the results file, never guessed from names.

Every plugin task writes ``benchmark`` and ``metric_set`` (an id of the benchmark registry,
:mod:`lm_eval_stereo.core.registry`) into its config metadata, with what its metric set is built from (``facts``),
which lm_eval keeps under ``configs`` in the results file. A task with a name of the user's own is therefore reported
as its benchmark, with its ideals, CIs, figures and paired tests. A group is its members' benchmark when all its leaf
tasks belong to one; a group whose members belong to several (a leaderboard group) has their metric sets and no
benchmark. :meth:`lm_eval_stereo.results.run.Run.declaration` resolves each task once per run.

lm_eval's own tasks record nothing of the plugin's; a benchmark that declares some of them
(:class:`~lm_eval_stereo.core.registry.LmEvalTasks`) is found by the task's lm_eval name.

Results files written before tasks recorded this (no ``metric_set`` or no ``key_field`` in a task's metadata) go
through :mod:`lm_eval_stereo.results.legacy`, the one module that guesses.
"""

from __future__ import annotations

import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
from lm_eval_stereo.core import registry
from lm_eval_stereo.results import legacy
from lm_eval_stereo.results.declaration import Declaration
from lm_eval_stereo.results.run import ReportError, Run


def resolve(run: Run, task: str) -> Declaration | None:
    """The declaration of ``task`` (a task or group) in ``run``; None for lm_eval's own tasks and groups. Use
    :meth:`Run.declaration`, which resolves each task once."""
    members = run.members(task)
    if members:
        found = [run.declaration(member) for member in members]
        if not found or any(declaration is None for declaration in found):
            return None
        benchmarks = tuple(dict.fromkeys(b for declaration in found for b in declaration.benchmarks))
        metric_sets = tuple({m.id: m for declaration in found for m in declaration.metric_sets}.values())
        return Declaration(benchmarks[0] if len(benchmarks) == 1 else None, metric_sets, benchmarks)
    metadata = run.metadata(task)
    native = registry.lm_eval_task(task) if "metric_set" not in metadata else None
    if native is not None:  # one of lm_eval's own tasks that a benchmark declares (found by its lm_eval name)
        bench, metric_set_id = native
        metric_set = registry.metric_set(metric_set_id, task, metadata)
        return Declaration(bench, (metric_set,), (bench,)) if metric_set else None
    if legacy.written_before(metadata):
        found = legacy.declaration(task, run.values(task), metadata)
        return Declaration(found[0], found[1], (found[0],)) if found is not None else None
    metric_set_id = metadata["metric_set"]
    bench = registry.benchmark_of_metric_set(metric_set_id)
    if bench is None:
        return None
    try:
        metric_set = registry.metric_set(metric_set_id, task, metadata)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportError(f"{run.path}: {task}: its recorded metadata does not build {metric_set_id} ({exc})") from exc
    return Declaration(bench, (metric_set,), (bench,)) if metric_set else None


def declaration_of(run: Run, task: str) -> Declaration | None:
    """The declaration of ``task`` (a task or group) in ``run`` (:meth:`Run.declaration`)."""
    return run.declaration(task)
