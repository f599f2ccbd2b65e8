"""The audit's ROC bootstraps (plainsight.audit.roc) against one scikit-learn ROC per draw:

    .venv/bin/python benchmarks/roc_bootstrap.py --members 100 --non-members 100 --resamples 1000

Two scores of made-up texts: a continuous one (binormal, AUC about 0.7, as a cosine) and a whole
number with many ties (as the longest shared word run). For each, `roc_summary` (AUC and the TPR at
each --bounds FPR, with their intervals) and `paired_auc_difference` (the score's AUC minus the other
score's, paired), timed beside the per-draw way on the very same draws: each draw's texts repeated
as often as it drew them, scikit-learn's `roc_curve` (every threshold kept) and `auc`, the highest
TPR within each bound. The report gives the largest difference between the two ways' draws (it must
be rounding) and the best of --repeats times of each.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from common import REPO, write_report


def best_time(repeats: int, function, *arguments):
    """(the result of `function(*arguments)`, the shortest of `repeats` wall-clock times)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = function(*arguments)
        times.append(time.perf_counter() - started)
    return result, min(times)


def per_draw_roc(member: np.ndarray, score: np.ndarray, counts: np.ndarray, bounds) -> np.ndarray:
    """AUC and the TPR at each bound of every draw (a row of `counts`), one scikit-learn ROC per draw."""
    from sklearn.metrics import auc, roc_curve

    rows = []
    for row in counts:
        drawn = np.repeat(np.arange(len(member)), row.astype(int))
        fpr, tpr, _ = roc_curve(member[drawn], score[drawn], drop_intermediate=False)
        rows.append([auc(fpr, tpr), *(tpr[fpr <= bound + 1e-12].max() for bound in bounds)])
    return np.array(rows)


def per_draw_difference(member: np.ndarray, score: np.ndarray, control: np.ndarray, counts) -> np.ndarray:
    """The AUC of `score` minus that of `control` on every draw, two scikit-learn ROCs per draw."""
    return per_draw_roc(member, score, counts, ())[:, 0] - per_draw_roc(member, control, counts, ())[:, 0]


def measure(member: np.ndarray, score: np.ndarray, other: np.ndarray, counts: np.ndarray, args) -> dict:
    """Both ways' times for `roc_summary` and `paired_auc_difference` (against `other`), and the largest
    difference between their draws."""
    from plainsight.audit.roc import paired_auc_difference, roc_summary, weighted_aucs, weighted_tprs

    per_draw, per_draw_seconds = best_time(args.repeats, per_draw_roc, member, score, counts, args.bounds)
    _, summary_seconds = best_time(
        args.repeats, roc_summary, member, score, args.bounds, args.resamples, args.seed
    )
    vectorised = np.column_stack(
        [weighted_aucs(member, score, counts), weighted_tprs(member, score, counts, args.bounds)]
    )
    differences, per_draw_paired_seconds = best_time(
        args.repeats, per_draw_difference, member, score, other, counts
    )
    _, paired_seconds = best_time(
        args.repeats, paired_auc_difference, member, score, other, args.resamples, args.seed
    )
    paired = weighted_aucs(member, score, counts) - weighted_aucs(member, other, counts)
    return {
        "distinct_scores": len(np.unique(score)),
        "roc_summary_per_draw_seconds": round(per_draw_seconds, 4),
        "roc_summary_seconds": round(summary_seconds, 4),
        "roc_summary_speedup": round(per_draw_seconds / summary_seconds, 1),
        "paired_per_draw_seconds": round(per_draw_paired_seconds, 4),
        "paired_seconds": round(paired_seconds, 4),
        "paired_speedup": round(per_draw_paired_seconds / paired_seconds, 1),
        "max_draw_difference": float(
            max(np.abs(per_draw - vectorised).max(), np.abs(differences - paired).max())
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--non-members", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--bounds", type=float, nargs="+", default=[0.01, 0.1])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/roc_bootstrap.json")
    args = parser.parse_args()

    from plainsight.audit.roc import text_counts

    rng = np.random.default_rng(args.seed)
    member = np.repeat([True, False], [args.members, args.non_members])
    continuous = np.where(member, 0.74, 0.0) + rng.normal(size=len(member))  # binormal, AUC about 0.7
    whole = np.floor(np.maximum(continuous * 3 + 6, 0))  # whole numbers, many ties
    counts = text_counts(member, args.resamples, args.seed)
    rows = []
    for name, score, other in (("continuous", continuous, whole), ("whole_numbers", whole, continuous)):
        rows.append({"score": name, **measure(member, score, other, counts, args)})
        print(json.dumps(rows[-1]))
        if rows[-1]["max_draw_difference"] > 1e-12:
            raise SystemExit(f"the vectorised draws differ from the per-draw ROCs: {rows[-1]}")
    report = {
        "members": args.members,
        "non_members": args.non_members,
        "resamples": args.resamples,
        "fpr_bounds": args.bounds,
        "rows": rows,
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
