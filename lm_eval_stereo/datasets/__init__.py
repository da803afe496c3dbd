"""Converters from upstream source files to ``datasets.Dataset`` objects, one module per benchmark."""
