"""Cross-lingual stereotype leakage (Cao, Sotnikova et al. 2025): see README.md."""
