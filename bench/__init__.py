"""Benchmarks run by ``make bench``: every ``bench_*.py`` module exposes ``run(quick=False) -> dict``."""
