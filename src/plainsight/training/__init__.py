"""Stage 4, training: prefix tuning (plain and masked objective) and the DP-SGD baseline.

- `examples` (a real code then its document as a training example, privacy flags, length batches),
  `loop` (`fit`: the one training loop, its default step strategy `Backprop`), `checkpoints`
  (resumable state);
- `prefix` (the prefix adapter, its seeded initialisation, saving), `objectives` (the LM loss and the
  masked objective), `dp` (DP-SGD as a step strategy of `fit`);
- `adapter` (rule `train_adapter`'s job), `params` (the settings an adapter depends on; no torch),
  `finetune` (plain-text fine-tuning and per-text NLL, for perplexity).
"""
