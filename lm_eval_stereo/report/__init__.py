"""Cross-model comparison of lm_eval results: collect the runs below some folders, tabulate the headline metrics.

The report leads with the results (:mod:`lm_eval_stereo.report.tables`: per model one row per task, its primary
headline with its 95% CI and verdict, significant paired differences marked), then the warnings grouped by kind, each
naming the tasks it concerns; the rest on request (``--details``; in the HTML page behind toggles): the summary of
every headline, the paired comparisons of models and of languages on the same items
(:mod:`lm_eval_stereo.report.comparisons`, statistics in :mod:`lm_eval_stereo.report.paired`; they need ``lm_eval
--log_samples``), and the details below.

``lm_eval`` writes ``<output_path>/<model_name_sanitized>/results_<timestamp>.json``. The report reads every such
file below the given paths, keeps the newest run per model and task (or every run with ``all_runs``), and gives one
table per task or group: one row per model, one column per headline metric (a metric that carries a bootstrap CI,
``<m>_ci_low``/``<m>_ci_high``) with its 95% CI, then the counts that say what was measured. Groups such as
``stereoset_multi`` hold lm_eval's means over their members; their counts are recomputed as totals over the members
(shares as the share of the pooled items). Warnings (:mod:`lm_eval_stereo.report.checks`) say where a headline
misleads; :mod:`lm_eval_stereo.report.html` draws the figures. lm_eval's own tasks found in the same files
(``hellaswag``, ``mmlu``: :mod:`lm_eval_stereo.results.lm_eval_tasks`) are cells like the others, shown in their own
section and beside the bias headlines (:mod:`lm_eval_stereo.report.capability`).
"""

from lm_eval_stereo.report.build import build_report
from lm_eval_stereo.report.json_export import report_json
from lm_eval_stereo.report.markdown import render_markdown
from lm_eval_stereo.results.run import ReportError

__all__ = ["ReportError", "build_report", "render_markdown", "report_json"]
