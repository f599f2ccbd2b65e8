"""ROUGE-2/L of prepared texts with the bit-parallel LCS against rouge-score's RougeScorer.

Scores pairs of demo TAB segments both ways, checks that the scores are equal, and times each:

    .venv/bin/python benchmarks/rouge.py --pairs 200

The fine-tuning protocol compares every generation with many training segments, which is where
the prepared texts (tokenised once) and the bit-parallel LCS pay.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

from common import REPO, demo_tab, write_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/rouge.json")
    args = parser.parse_args()

    from rouge_score.rouge_scorer import RougeScorer

    from plainsight.evaluation.rouge import rouge_scores, rouge_text

    _, texts = demo_tab()
    segments = list(texts.values())
    pairs = list(itertools.islice(itertools.combinations(segments, 2), args.pairs))

    scorer = RougeScorer(["rouge2", "rougeL"], use_stemmer=True)
    started = time.perf_counter()
    reference = [scorer.score(b, a) for a, b in pairs]
    scorer_seconds = time.perf_counter() - started

    started = time.perf_counter()
    prepared = {text: rouge_text(text) for text in segments}
    ours = [rouge_scores(prepared[a], prepared[b]) for a, b in pairs]
    ours_seconds = time.perf_counter() - started

    worst = max(max(abs(r["rouge2"].fmeasure - o[0]), abs(r["rougeL"].fmeasure - o[1]))
                for r, o in zip(reference, ours))
    if worst > 1e-12:
        raise SystemExit(f"scores differ from RougeScorer by up to {worst}")
    report = {
        "pairs": len(pairs),
        "mean_tokens": round(sum(len(p.tokens) for p in prepared.values()) / len(prepared), 1),
        "rouge_scorer_seconds": round(scorer_seconds, 3),
        "prepared_bit_parallel_seconds": round(ours_seconds, 3),
        "speedup": round(scorer_seconds / ours_seconds, 1),
        "max_score_difference": worst,
    }
    write_report(report, args.out)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
