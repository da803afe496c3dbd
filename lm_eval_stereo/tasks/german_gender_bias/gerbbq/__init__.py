"""GerBBQ+ (Gnadt et al., GeBNLP 2025): the generative protocol of the paper and the log-likelihood variant."""
