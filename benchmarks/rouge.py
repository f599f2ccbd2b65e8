"""ROUGE-2/L of prepared texts (rapidfuzz's LCS) against rouge-score's RougeScorer.

Scores pairs of demo TAB segments both ways, checks that the scores are equal, and times each;
then the fine-tuning protocol's shape: the best score of each of --rows segments over every
segment, pair by pair and with one `max_rouge` call (rapidfuzz's `cdist`) per row:

    .venv/bin/python benchmarks/rouge.py --pairs 200 --rows 24

The fine-tuning protocol compares every generation with many training segments, which is where
the prepared texts (tokenised once) and the compiled LCS pay.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

from common import REPO, demo_tab, write_report


def timed(function):
    started = time.perf_counter()
    result = function()
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--rows", type=int, default=24)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/rouge.json")
    args = parser.parse_args()

    from rouge_score.rouge_scorer import RougeScorer

    from plainsight.evaluation.rouge import max_rouge, rouge_scores, rouge_text

    _, texts = demo_tab()
    segments = list(texts.values())
    pairs = list(itertools.islice(itertools.combinations(segments, 2), args.pairs))

    scorer = RougeScorer(["rouge2", "rougeL"], use_stemmer=True)
    reference, scorer_seconds = timed(lambda: [scorer.score(b, a) for a, b in pairs])
    prepared, prepare_seconds = timed(lambda: {text: rouge_text(text) for text in segments})
    ours, pair_seconds = timed(lambda: [rouge_scores(prepared[a], prepared[b]) for a, b in pairs])
    worst = max(
        max(abs(r["rouge2"].fmeasure - o[0]), abs(r["rougeL"].fmeasure - o[1]))
        for r, o in zip(reference, ours)
    )
    if worst > 1e-12:
        raise SystemExit(f"scores differ from RougeScorer by up to {worst}")

    rows, all_prepared = [prepared[text] for text in segments[: args.rows]], list(prepared.values())
    by_pairs, by_pairs_seconds = timed(
        lambda: [tuple(map(max, zip(*(rouge_scores(row, other) for other in all_prepared)))) for row in rows]
    )
    by_cdist, cdist_seconds = timed(lambda: [max_rouge(row, all_prepared) for row in rows])
    if by_pairs != by_cdist:
        raise SystemExit("max_rouge differs from the pair-by-pair maximum")
    report = {
        "pairs": len(pairs),
        "mean_tokens": round(sum(len(p.tokens) for p in prepared.values()) / len(prepared), 1),
        "rouge_scorer_seconds": round(scorer_seconds, 3),
        "tokenise_once_seconds": round(prepare_seconds, 3),
        "prepared_rapidfuzz_seconds": round(pair_seconds, 3),
        "speedup": round(scorer_seconds / pair_seconds, 1),
        "max_score_difference": worst,
        "best_of_matrix": f"{len(rows)} x {len(all_prepared)}",
        "pair_by_pair_seconds": round(by_pairs_seconds, 4),
        "max_rouge_cdist_seconds": round(cdist_seconds, 4),
    }
    write_report(report, args.out)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
