"""The persona tasks (Gnadt et al., GeBNLP 2025): StereoPersona, NeutralPersona and GenderPersona."""
