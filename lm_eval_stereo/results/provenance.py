"""Where a number of a results file comes from: for each metric of a task, the code that computed its value and the
code that computed its 95% interval, as the report (table, ``--json``) and the export show them beside it.

- A plugin task: its metric set computed the value inside lm_eval's run (the task's aggregation), and the interval
  of the kind the metric declares (the seeded percentile bootstrap over the run's items, an Agresti-Coull interval,
  the bootstrap over generated outputs).
- One of lm_eval's own tasks that a benchmark declares (``bbq``, ``crows_pairs``): lm_eval's own aggregation computed
  the values lm_eval wrote; the plugin recomputed the interval (and the declared figures lm_eval does not report) from
  the logged samples afterwards, with the declared metric set (:mod:`lm_eval_stereo.results.recomputed`).
- A group: lm_eval's mean of its members' values (no interval).
- A task no benchmark declares: lm_eval's aggregation, with lm_eval's standard error and no interval.

Each names the backend whose log-likelihoods or outputs the number rests on, as the run recorded it (``hf-prefix``,
``vllm-prefix``, a served model's endpoint): a report row may hold runs of backends that give the same numbers
(:data:`~lm_eval_stereo.results.run.SAME_NUMBERS`), its provenance still names the one of each number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lm_eval_stereo.results.run import Run

#: who computed a value or an interval, by code (``--json``): in a few words (a model card) and in a sentence
BY = {
    "lm_eval": ("lm_eval", "lm_eval's own aggregation"),
    "lm_eval_group_mean": ("lm_eval group mean", "lm_eval's mean over the group's members"),
    "lm_eval_stderr": ("none (lm_eval stderr)", "lm_eval's standard error only (no 95% CI)"),
    "plugin": ("lm-eval-stereo", "lm-eval-stereo's metric set, in the lm_eval run"),
    "plugin_recomputed": ("lm-eval-stereo from samples", "lm-eval-stereo, recomputed from the logged samples"),
    "plugin_bootstrap": (
        "lm-eval-stereo bootstrap",
        "lm-eval-stereo's seeded percentile bootstrap over the run's items, in the lm_eval run",
    ),
    "plugin_agresti_coull": ("Agresti-Coull", "lm-eval-stereo's Agresti-Coull interval, in the lm_eval run"),
    "plugin_outputs_bootstrap": (
        "lm-eval-stereo outputs bootstrap",
        "lm-eval-stereo's seeded bootstrap over the generated outputs, in the lm_eval run",
    ),
    "plugin_recomputed_bootstrap": (
        "lm-eval-stereo bootstrap from samples",
        "lm-eval-stereo's seeded percentile bootstrap, recomputed from the logged samples",
    ),
    "export_distance": ("lm-eval-stereo export", "lm-eval-stereo's export: the headline's distance to its ideal"),
    "export_distance_bootstrap": (
        "lm-eval-stereo export bootstrap",
        "lm-eval-stereo's export: the seeded percentile bootstrap of the distance over the logged items",
    ),
    "none": ("none", "none"),
}
_INTERVAL_BY = {
    "bootstrap": "plugin_bootstrap",
    "agresti-coull": "plugin_agresti_coull",
    "outputs-bootstrap": "plugin_outputs_bootstrap",
}


@dataclass(frozen=True)
class Provenance:
    """Who computed a metric's value (``value_by``) and its interval (``interval_by``), codes of :data:`BY`; the
    ``metric_set`` that declares it (None where none does), the lm_eval version that ran it and the ``backend`` whose
    log-likelihoods or outputs it rests on (:attr:`Run.backend <lm_eval_stereo.results.run.Run.backend>`: the one
    the run recorded, ``hf-prefix`` where it computed them, even on a report row it shares with ``hf``; empty where
    unknown). The JSON keeps the keys ``value`` and ``interval``."""

    value_by: str
    interval_by: str
    metric_set: str | None
    lm_eval_version: str
    backend: str = ""

    def describe(self) -> str:
        """``value: lm_eval's own aggregation (lm_eval 0.4.13); 95% CI: lm-eval-stereo's ... (metric set bbq); scored
        by hf-prefix``."""
        lm_eval = f" (lm_eval {self.lm_eval_version})" if self.value_by.startswith("lm_eval") else ""
        value = BY[self.value_by][1] + lm_eval
        within = f" (metric set {self.metric_set})" if self.metric_set else ""
        scored = f"; scored by {self.backend}" if self.backend else ""
        return f"value: {value}; 95% CI: {BY[self.interval_by][1]}{within}{scored}"

    def short(self) -> str:
        """``lm_eval; CI: lm-eval-stereo bootstrap from samples``."""
        return f"{BY[self.value_by][0]}; CI: {BY[self.interval_by][0]}"

    def as_json(self) -> dict[str, str | None]:
        return {
            "value": self.value_by,
            "interval": self.interval_by,
            "metric_set": self.metric_set,
            "lm_eval_version": self.lm_eval_version,
            "backend": self.backend,
            "text": self.describe(),
        }


def provenance(run: Run, task: str, name: str) -> Provenance:
    """Who computed metric ``name`` of ``task`` in ``run`` and its interval (see the module docstring)."""
    version, backend = run.lm_eval_version or "?", run.backend
    declaration = run.declaration(task)
    if declaration is None:
        return Provenance("lm_eval", "lm_eval_stderr", None, version, backend)
    metric_set = declaration.metric_set.id if declaration.metric_set is not None else None
    values = run.values(task)
    bounds = declaration.interval_names(name)
    has_interval = bounds is not None and all(bound in values for bound in bounds)
    recomputed = run.recomputed(task)
    if recomputed is not None:  # one of lm_eval's own tasks or groups that a benchmark declares
        value = "lm_eval" if name in run.raw_metrics(task)[0] else "plugin_recomputed"
        interval = "plugin_recomputed_bootstrap" if has_interval and bounds[0] in recomputed.values else "none"
        return Provenance(value, interval, metric_set, version, backend)
    if run.members(task):
        return Provenance("lm_eval_group_mean", "none", metric_set, version, backend)
    metric = declaration.metric(name)
    interval = _INTERVAL_BY[metric.interval] if has_interval and metric is not None and metric.interval else "none"
    return Provenance("plugin", interval, metric_set, version, backend)
