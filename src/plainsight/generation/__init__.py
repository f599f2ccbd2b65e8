"""Stage 5, generation: batched decoding with value blocking, and the synthetic-corpus table."""
