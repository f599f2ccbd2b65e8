"""The text attacks' null: the negative control's subtraction, with and without its own sampling
variance, against a split of members and non-members drawn by a fair coin per unit:

    .venv/bin/python benchmarks/negative_control_null.py      # about 14 minutes on a shared core

A model of the nearest-document attacks (`plainsight.audit.released`) in which a segment's score against
a corpus is, as there, its highest similarity to any of the corpus's generations, so that a corpus's
own generations are a sample and can be resampled. Decisive sizes (config/decide.yaml): 132 member and
132 held-out documents, two segments each; 142 generations per corpus.

- A segment is a point in R^4: a document effect (share ICC of the variance, shared by its two
  segments) plus the segment's own; members are shifted by --split along the first axis (the split
  differs by construction: lengths, storylines).
- A corpus without private data (the negative control; the released corpus's generations that copy
  nothing) draws its generations from a normal centred at its generator's place on that axis; the
  control's and the released generator's places (--control-centre, --released-centre) differ, so what
  the split gives each corpus differs and AUCs do not add (the -0.12 of a masked corpus's n-gram attack).
- The leak: each released generation copies, with probability q, a random member document (one noisy
  piece per segment). The true AUC is the released corpus's AUC where members and non-members are
  exchangeable (no split shift) at these sizes, the mean over --calibration runs; q is set by bisection
  to a true AUC of 0.5 (no leak), 0.6 (the gate's maximum) and 0.75 (power).

Three audits of each run, all through the audit's functions (1000 resamples, seed 1):
- subtract: 0.5 plus the excess over the negative control, paired over units (`paired_auc_difference`),
  the audit before this benchmark;
- subtract + control variance: the same, its bounds widened by the variance of the control's
  generations (`control_auc_variance`, `excess_over_resampled_control`), the audit now;
- coin split: members and non-members drawn by a fair coin per unit among the same population (no split
  shift by design), the raw AUC's bounds over units (`roc_summary`), no control needed.

Level: P(upper bound < true AUC) (nominal 2.5%) at a true AUC of 0.6, and P(FAIL) (lower bound above
0.6) at no leak; power: P(FAIL) at a true AUC of 0.75. Fixed seed.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from common import REPO, write_report
from plainsight.audit.roc import (
    excess_over_resampled_control,
    paired_auc_difference,
    roc_summary,
)

AUC_MAX = 0.6  # the gate's text_membership_auc_max (config/config.yaml)
RESAMPLES, BOOTSTRAP_SEED = 1000, 1  # the audit's (audit.bootstrap, TextAuditSettings.seed)
DIMENSIONS, COPY_NOISE = 4, 0.2
TRUE_AUCS = (0.5, 0.6, 0.75)


def segment_points(rng, documents: int, segments: int, icc: float, shift: float) -> np.ndarray:
    """documents x segments x DIMENSIONS points: a document effect with share `icc`, `shift` on axis 0."""
    shared = rng.normal(size=(documents, 1, DIMENSIONS))
    own = rng.normal(size=(documents, segments, DIMENSIONS))
    points = math.sqrt(icc) * shared + math.sqrt(1 - icc) * own
    points[..., 0] += shift
    return points


def corpus_pieces(rng, generations: int, centre: float, members: np.ndarray, copy_share: float):
    """(pieces, generation of each piece): each generation a draw around `centre` on axis 0, or with
    probability `copy_share` a noisy copy of a random member document (one piece per segment)."""
    pieces, owner = [], []
    for generation in range(generations):
        if rng.random() < copy_share:
            document = members[rng.integers(len(members))]
            copied = document + COPY_NOISE * rng.normal(size=document.shape)
            pieces.extend(copied)
            owner.extend([generation] * len(copied))
        else:
            point = rng.normal(size=DIMENSIONS)
            point[0] += centre
            pieces.append(point)
            owner.append(generation)
    return np.array(pieces), np.array(owner)


def pair_scores(segments: np.ndarray, corpus) -> np.ndarray:
    """texts x generations: the highest similarity (negative squared distance) of a text to a generation's
    pieces."""
    pieces, owner = corpus
    similarity = -(((segments[:, None, :] - pieces[None, :, :]) ** 2).sum(axis=2))
    scores = np.full((len(segments), owner.max() + 1), -np.inf)
    np.maximum.at(scores.T, owner, similarity.T)
    return scores


def run_once(
    rng, args, icc: float, copy_share: float, exchangeable: bool, released_centre: float = 0.0
) -> dict:
    documents, segments = args.documents, 2
    shift = 0.0 if exchangeable else args.split
    members = segment_points(rng, documents, segments, icc, shift)
    held_out = segment_points(rng, documents, segments, icc, 0.0)
    if exchangeable:  # a fair coin per unit among one population: sizes vary as the coin falls
        pooled = np.concatenate([members, held_out])
        coin = rng.random(len(pooled)) < 0.5
        members, held_out = pooled[coin], pooled[~coin]
    texts = np.concatenate([members.reshape(-1, DIMENSIONS), held_out.reshape(-1, DIMENSIONS)])
    label = np.repeat([True, False], [members.shape[0] * segments, held_out.shape[0] * segments])
    units = np.repeat(np.arange(members.shape[0] + held_out.shape[0]), segments)
    released = corpus_pieces(rng, args.generations, released_centre, members, copy_share)
    return {"label": label, "units": units, "texts": texts, "released": released}


def calibrate(rng, args, icc: float, target: float) -> float:
    """The copy share at which the released corpus's mean AUC on an exchangeable split is `target`."""
    if target <= 0.5:
        return 0.0

    def mean_auc(share: float) -> float:
        aucs = []
        for _ in range(args.calibration):
            run = run_once(rng, args, icc, share, exchangeable=True)
            score = pair_scores(run["texts"], run["released"]).max(axis=1)
            aucs.append(roc_summary(run["label"], score, resamples=0).auc)
        return float(np.mean(aucs))

    low, high = 0.0, 1.0
    for _ in range(args.bisections):
        middle = (low + high) / 2
        low, high = (middle, high) if mean_auc(middle) < target else (low, middle)
    return (low + high) / 2


def subtracted(rng, args, icc: float, copy_share: float, control_centre: float, released_centre: float):
    """Judged (low, high) of the two subtracting audits on one run of the split as drawn (members shifted)."""
    run = run_once(rng, args, icc, copy_share, exchangeable=False, released_centre=released_centre)
    label, units, texts = run["label"], run["units"], run["texts"]
    control = corpus_pieces(rng, args.generations, control_centre, texts[:0], 0.0)
    released_score = pair_scores(texts, run["released"]).max(axis=1)
    control_pairs = pair_scores(texts, control)
    _, low, high = paired_auc_difference(
        label, released_score, control_pairs.max(axis=1), RESAMPLES, BOOTSTRAP_SEED, units
    )
    _, wide_low, wide_high = excess_over_resampled_control(
        label, released_score, control_pairs, RESAMPLES, BOOTSTRAP_SEED, units
    )
    return {
        "subtract": (0.5 + low, 0.5 + high),
        "subtract + control variance": (0.5 + wide_low, 0.5 + wide_high),
    }


def coin_split(rng, args, icc: float, copy_share: float):
    """Judged (low, high) of the raw AUC on a split drawn by a fair coin per unit (no control)."""
    run = run_once(rng, args, icc, copy_share, exchangeable=True)
    score = pair_scores(run["texts"], run["released"]).max(axis=1)
    summary = roc_summary(run["label"], score, resamples=RESAMPLES, seed=BOOTSTRAP_SEED, units=run["units"])
    return {"coin split": (summary.auc_low, summary.auc_high)}


def cell(bounds: np.ndarray, true_auc: float) -> dict[str, float]:
    return {
        "upper_below_true": float(np.mean(bounds[:, 1] < true_auc)),
        "lower_above_true": float(np.mean(bounds[:, 0] > true_auc)),
        "fail": float(np.mean(bounds[:, 0] > AUC_MAX)),
        "pass": float(np.mean(bounds[:, 1] <= AUC_MAX)),
        "mean_low": float(bounds[:, 0].mean()),
        "mean_high": float(bounds[:, 1].mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--documents", type=int, default=132, help="members and held-out documents a side")
    parser.add_argument("--generations", type=int, default=142)
    parser.add_argument("--split", type=float, default=0.5, help="members' shift on the split's axis")
    parser.add_argument("--control-centre", type=float, default=1.0)
    parser.add_argument("--released-centre", type=float, default=-0.5)
    parser.add_argument("--iccs", type=float, nargs="+", default=[0.0, 0.5])
    parser.add_argument("--calibration", type=int, default=40)
    parser.add_argument("--bisections", type=int, default=8)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/negative_control_null.json")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    cells = []
    scenarios = {
        # the released corpus's generator sits where the control's does: what the split gives is alike
        "alike": (args.control_centre, args.control_centre),
        # it sits elsewhere (a masked corpus's n-grams read the split otherwise): AUCs do not add
        "unlike": (args.control_centre, args.released_centre),
    }
    for icc in args.iccs:
        for true_auc in TRUE_AUCS:
            copy_share = calibrate(rng, args, icc, true_auc)
            judged = {
                name: [subtracted(rng, args, icc, copy_share, *centres) for _ in range(args.runs)]
                for name, centres in scenarios.items()
            }
            judged["any"] = [coin_split(rng, args, icc, copy_share) for _ in range(args.runs)]
            for scenario, runs in judged.items():
                for audit in runs[0]:
                    row = {
                        "icc": icc,
                        "true_auc": true_auc,
                        "copy_share": round(copy_share, 4),
                        "scenario": scenario,
                        "audit": audit,
                        **cell(np.array([run[audit] for run in runs]), true_auc),
                    }
                    cells.append(row)
                    print(
                        f"icc {icc} true {true_auc} {scenario:6s} {audit:28s} "
                        f"upper<true {row['upper_below_true']:.3f} lower>true {row['lower_above_true']:.3f} "
                        f"FAIL {row['fail']:.3f} PASS {row['pass']:.3f} "
                        f"bounds [{row['mean_low']:.3f}, {row['mean_high']:.3f}]",
                        flush=True,
                    )
    report = {"arguments": {k: str(v) for k, v in vars(args).items()}, "cells": cells}
    report["seconds"] = round(time.perf_counter() - started, 1)
    write_report(report, args.out)


if __name__ == "__main__":
    main()
