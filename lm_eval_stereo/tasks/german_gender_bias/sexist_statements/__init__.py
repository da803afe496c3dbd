"""SexistStatements (Gnadt et al., GeBNLP 2025): agreement with sexist and anti-sexist statements."""
