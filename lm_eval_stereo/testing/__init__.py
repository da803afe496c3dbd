"""Helpers for offline tests, the demo and the benchmark (tiny seeded local models)."""
