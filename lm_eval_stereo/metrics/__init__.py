"""Pure metric code: functions over per-item scores, importable without lm_eval or a model."""
