"""The results layer under the report and the export: it reads a run once.

- :mod:`.run`: :class:`~.run.Run`, one lm_eval results file and its reader (metrics, members, options; per task the
  declaration and the logged items, each resolved or read once); :func:`~.run.load_runs`.
- :mod:`.selection`: :func:`~.selection.select_runs`, the one rule of which run a task of a model comes from, computed
  once per report or export (:class:`~.selection.RunSelection`: the runs, their setting keys, the newest, the runs
  kept apart and tied).
- :mod:`.declarations`: which benchmark and metric sets computed a task or group, and what they declare of each
  metric (:class:`~.declarations.Declaration`: direction or ideal, interval, detail view), found from what the task
  recorded in its config metadata (:func:`~.declarations.resolve`).
- :mod:`.samples`: the ``--log_samples`` items and documents of a task, keyed by the field the task recorded.
- :mod:`.legacy`: results written before tasks recorded all that; the only module that guesses.
- :mod:`.ideals`: how a metric is best (:class:`~.ideals.Ideal`).
- :mod:`.lm_eval_tasks`: the tasks no benchmark declares (lm_eval's capability tasks, a user's own: which they are, the members left to their group, their metrics and
  directions); :mod:`.model_names`: how a model is named for a person.

It names no benchmark and imports no benchmark module (the registry, :mod:`lm_eval_stereo.core.registry`, says
everything benchmark-specific); :mod:`lm_eval_stereo.report` and :mod:`lm_eval_stereo.export` stand on it side by
side.
"""
