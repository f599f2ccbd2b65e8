"""The canary attack's n-gram model: plainsight.audit.ngram against nltk.lm's Lidstone (add-k) and
WittenBellInterpolated models, on the demo TAB segments as the released corpus:

    .venv/bin/python benchmarks/canary_ngram.py --copies 1 20

Each canary is a corpus sentence and five made-up words; half of them are echoed in the corpus with
their last word changed (a partial echo, as a generator's copy often is), half are not. For each
model and corpus size (the segments repeated --copies times, standing in for larger corpora):
fit and scoring time, the share of canaries scored -inf (a word the corpus never holds gets
probability 0 under nltk's interpolated models, so such canaries cannot be ranked), and the AUC of
the planted against the other canaries. nltk's Lidstone never falls back to a shorter context: after
a context it never saw, every word is equally likely.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path

from common import REPO, demo_tab, write_report

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def timed(function):
    started = time.perf_counter()
    result = function()
    return result, time.perf_counter() - started


def nltk_scorer(kind: str, order: int, add_k: float, corpus: list[list[str]]):
    from nltk.lm import Lidstone, WittenBellInterpolated
    from nltk.lm.preprocessing import padded_everygram_pipeline

    model = Lidstone(add_k, order) if kind == "lidstone" else WittenBellInterpolated(order)
    model.fit(*padded_everygram_pipeline(order, corpus))

    def score(context: list[str], words: list[str]) -> float:
        history = ["<s>"] * (order - 1) + context
        total = 0.0
        for word in words:
            total += model.logscore(word, history[-(order - 1) :]) * math.log(2)
            history.append(word)
        return total / len(words)

    return score


def ours_scorer(order: int, add_k: float, corpus: list[list[str]]):
    from plainsight.audit.ngram import continuation_log_prob, fit_ngram

    model = fit_ngram(corpus, order, add_k)
    return lambda context, words: continuation_log_prob(model, context, words)


def measure(name: str, build, corpus: list[list[str]], canaries, planted: list[bool]) -> dict:
    from sklearn.metrics import roc_auc_score

    score, fit_seconds = timed(lambda: build(corpus))
    scores, score_seconds = timed(lambda: [score(prefix, suffix) for prefix, suffix in canaries])
    row = {
        "model": name,
        "corpus_words": sum(map(len, corpus)),
        "fit_seconds": round(fit_seconds, 3),
        "score_seconds": round(score_seconds, 4),
        "minus_inf_share": sum(not math.isfinite(s) for s in scores) / len(scores),
        "auc": round(float(roc_auc_score(planted, [s if math.isfinite(s) else -1e9 for s in scores])), 3),
    }
    print(row)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 20])
    parser.add_argument("--canaries", type=int, default=40)
    parser.add_argument("--order", type=int, default=3)
    parser.add_argument("--add-k", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/canary_ngram.json")
    args = parser.parse_args()

    from plainsight.audit.canaries import sentences
    from plainsight.audit.nearest import words

    _, texts = demo_tab()
    segments = list(texts.values())
    rng = random.Random(1)
    prefixes = rng.sample(
        [s for text in segments for s in sentences(text) if len(s.split()) > 6], args.canaries
    )
    canaries = [(words(p), ["".join(rng.choices(LETTERS, k=7)) for _ in range(5)]) for p in prefixes]
    planted = [n < args.canaries // 2 for n in range(args.canaries)]
    released = segments + [" ".join([*p, *s[:-1], "court"]) for (p, s), m in zip(canaries, planted) if m]
    builders = {
        "plainsight": lambda corpus: ours_scorer(args.order, args.add_k, corpus),
        "nltk_lidstone": lambda corpus: nltk_scorer("lidstone", args.order, args.add_k, corpus),
        "nltk_witten_bell": lambda corpus: nltk_scorer("witten_bell", args.order, args.add_k, corpus),
    }
    rows = [
        measure(name, build, [words(text) for text in released] * copies, canaries, planted)
        for copies in args.copies
        for name, build in builders.items()
    ]
    write_report(
        {"order": args.order, "add_k": args.add_k, "canaries": args.canaries, "rows": rows}, args.out
    )


if __name__ == "__main__":
    main()
