"""The task machinery every benchmark shares: registry, options, data layer, metrics and bootstrap; it names no
benchmark and imports neither ``tasks/`` nor ``models/``."""
