"""Stage 2, codes: real control codes per segment (gold spans or Presidio) and fictional codes per seed."""
