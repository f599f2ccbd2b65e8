"""Stage 6, evaluation: privacy metrics (PIPP, ELP, leaks), ROUGE, perplexity and MAUVE."""
