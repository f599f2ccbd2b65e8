"""Stage 6, evaluation: what a synthetic corpus leaks and how useful it is.

- leaks: `privacy` (PIPP, ELP, partial and near leaks per generation), `adherence`;
- text quality: `rouge`, `perplexity`, `features` (sentence features) and `mauve_score` (MAUVE, FID),
  `diversity`, `quality`;
- utility: `downstream`, `encoder_classifier` and `encoder_settings` (the downstream task),
  `utility_measures`, `intervals`.
"""
