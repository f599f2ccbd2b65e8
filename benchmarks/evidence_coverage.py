"""Coverage, width and false positives of the leak evidence's bounds and tests (plainsight.audit.evidence):

    .venv/bin/python benchmarks/evidence_coverage.py --draws 2000

- paired design (in-context methods): the coverage of each one-sided 95% bound on the excess from the
  discordant cells, exact (the trinomial of member-only and control-only generations enumerated), over
  member-only and control-only rates in --rates and --sizes generations; and its mean width beside the
  Bonferroni combination of the two marginal rates' bounds, with --concordant generations hitting both
  sides;
- unpaired design (trained methods' distinct values, clustered in documents of --document-size
  values): the coverage of each one-sided 95% bound by simulation, member and control rates from
  --rates, hits beta-binomial within a document at each --correlations intraclass correlation: the
  document bounds the evidence uses and the item-level Clopper-Pearson bounds it keeps for counts
  without documents;
- the false-positive rate at nominal 5% of Fisher's exact test and of the document permutation test,
  both sides at the same rate, at the largest --correlations;
- what the tests can detect at 80% power beside the figure Cohen's h (the arcsine z-test) gives, and
  that figure's power under the test actually run.

Every bound must cover at least 95%: the report gives the minimum over the grid. Fixed seed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from pathlib import Path

import numpy as np
from scipy.stats import beta, fisher_exact, norm

from common import REPO, write_report
from plainsight.audit.evidence import (
    ALPHA,
    CELL_CONFIDENCE,
    POWER,
    detectable_auc,
    detectable_paired_excess,
    detectable_unpaired_excess,
    document_permutation_p_values,
    document_rate_bounds,
    fisher_power,
    mcnemar_power,
)


def cp_bounds(successes: np.ndarray, trials: int) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds at CELL_CONFIDENCE, vectorised (as `clopper_pearson`)."""
    successes = np.asarray(successes)
    with np.errstate(invalid="ignore"):
        low = np.where(successes > 0, beta.ppf(1 - CELL_CONFIDENCE, successes, trials - successes + 1), 0.0)
        high = np.where(successes < trials, beta.ppf(CELL_CONFIDENCE, successes + 1, trials - successes), 1.0)
    return low, high


# --- paired -------------------------------------------------------------------------------------------


def paired_coverage(n: int, member_only: float, control_only: float) -> tuple[float, float]:
    """Exact coverage of the discordant-cell (lower, upper) bounds: the trinomial summed over (b, c)."""
    low, high = cp_bounds(np.arange(n + 1), n)
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    possible = b + c <= n
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = (
            math.lgamma(n + 1)
            - np.vectorize(math.lgamma)(b + 1)
            - np.vectorize(math.lgamma)(c + 1)
            - np.vectorize(math.lgamma)(np.maximum(n - b - c, 0) + 1)
            + np.where(b > 0, b * np.log(member_only), 0.0)
            + np.where(c > 0, c * np.log(control_only), 0.0)
            + np.where(n - b - c > 0, (n - b - c) * np.log1p(-(member_only + control_only)), 0.0)
        )
    probability = np.where(possible, np.exp(np.nan_to_num(log_p, nan=-np.inf, neginf=-np.inf)), 0.0)
    excess = member_only - control_only
    lower = low[b] - high[c]
    upper = high[b] - low[c]
    return float(probability[lower <= excess + 1e-12].sum()), float(
        probability[upper >= excess - 1e-12].sum()
    )


def paired_widths(
    n: int, member_only: float, control_only: float, concordant: float, draws: int, rng
) -> tuple[float, float, float, float]:
    """Mean (upper, width) of the discordant-cell bound and of the marginal Bonferroni bound, over draws
    of (both, member only, control only, neither) generations."""
    low, high = cp_bounds(np.arange(n + 1), n)
    both, b, c, _ = rng.multinomial(
        n, [concordant, member_only, control_only, 1 - concordant - member_only - control_only], draws
    ).T
    discordant_upper, discordant_lower = high[b] - low[c], low[b] - high[c]
    marginal_upper, marginal_lower = high[both + b] - low[both + c], low[both + b] - high[both + c]
    return (
        float(discordant_upper.mean()),
        float((discordant_upper - discordant_lower).mean()),
        float(marginal_upper.mean()),
        float((marginal_upper - marginal_lower).mean()),
    )


# --- unpaired, clustered --------------------------------------------------------------------------------


def clustered_hits(rng, draws: int, documents: int, size: int, rate: float, correlation: float) -> np.ndarray:
    """Per-document hits, beta-binomial with intraclass `correlation` (binomial at 0)."""
    if correlation == 0 or rate in (0.0, 1.0):
        rates = np.full((draws, documents), rate)
    else:
        spread = (1 - correlation) / correlation
        rates = rng.beta(rate * spread, (1 - rate) * spread, (draws, documents))
    return rng.binomial(size, rates)


def unpaired_coverage(
    rng, draws: int, n: int, size: int, member_rate: float, control_rate: float, correlation: float
) -> dict[str, float]:
    documents = max(1, n // size)
    totals = np.full(documents, size)
    member = clustered_hits(rng, draws, documents, size, member_rate, correlation)
    control = clustered_hits(rng, draws, documents, size, control_rate, correlation)
    excess = member_rate - control_rate
    member_low, member_high = document_rate_bounds(member, totals)
    control_low, control_high = document_rate_bounds(control, totals)
    items = documents * size
    item_member_low, item_member_high = cp_bounds(member.sum(axis=1), items)
    item_control_low, item_control_high = cp_bounds(control.sum(axis=1), items)
    return {
        "document_lower": float(np.mean(member_low - control_high <= excess + 1e-12)),
        "document_upper": float(np.mean(member_high - control_low >= excess - 1e-12)),
        "item_lower": float(np.mean(item_member_low - item_control_high <= excess + 1e-12)),
        "item_upper": float(np.mean(item_member_high - item_control_low >= excess - 1e-12)),
        "document_width": float(np.mean(member_high - control_low - (member_low - control_high))),
        "item_width": float(
            np.mean(item_member_high - item_control_low - (item_member_low - item_control_high))
        ),
    }


def false_positives(rng, draws: int, n: int, size: int, rate: float, correlation: float) -> dict[str, float]:
    """The share of draws, both sides at `rate`, that Fisher's test and the document permutation test
    reject at ALPHA."""
    documents = max(1, n // size)
    totals = np.full(documents, size)
    member = clustered_hits(rng, draws, documents, size, rate, correlation)
    control = clustered_hits(rng, draws, documents, size, rate, correlation)
    items = documents * size
    fisher: dict[tuple[int, int], float] = {}
    for k1, k2 in zip(member.sum(axis=1), control.sum(axis=1)):
        if (k1, k2) not in fisher:
            table = [[k1, items - k1], [k2, items - k2]]
            fisher[k1, k2] = fisher_exact(table, alternative="greater").pvalue
    fisher_rejects = [fisher[k1, k2] < ALPHA for k1, k2 in zip(member.sum(axis=1), control.sum(axis=1))]
    permutation = np.concatenate(  # in chunks, to bound the (draws x arrangements) matrices
        [
            document_permutation_p_values(
                member[start : start + 1000], totals, control[start : start + 1000], totals
            )
            for start in range(0, draws, 1000)
        ]
    )
    return {"fisher": float(np.mean(fisher_rejects)), "documents": float(np.mean(permutation < ALPHA))}


# --- what the tests detect --------------------------------------------------------------------------------


def cohens_h_excess(control_rate: float, n1: int, n2: int) -> float:
    """Cohen's h's detectable excess: the arcsine z-test, one-sided 5%, at 80% power."""
    h = (norm.ppf(1 - ALPHA) + norm.ppf(POWER)) * math.sqrt(1 / n1 + 1 / n2)
    angle = math.asin(math.sqrt(control_rate)) + h / 2
    return (1.0 if angle >= math.pi / 2 else math.sin(angle) ** 2) - control_rate


def detection_rows(sizes: list[int]) -> list[dict]:
    rows = []
    for n in sizes:
        for control_only in (0.0, 0.1):
            cohen = cohens_h_excess(control_only, n, n)
            rows.append(
                {
                    "test": "McNemar",
                    "sizes": f"{n} pairs",
                    "control_rate": control_only,
                    "detectable": detectable_paired_excess(control_only, n),
                    "cohens_h": cohen,
                    "power_at_cohens_h": mcnemar_power(control_only + cohen, control_only, n),
                }
            )
    for n1, n2, control_rate in ((128, 48, 0.0), (128, 48, 0.05), (1100, 100, 0.0), (1100, 100, 0.05)):
        cohen = cohens_h_excess(control_rate, n1, n2)
        rows.append(
            {
                "test": "Fisher",
                "sizes": f"{n1} vs {n2} values",
                "control_rate": control_rate,
                "detectable": detectable_unpaired_excess(control_rate, n1, n2),
                "cohens_h": cohen,
                "power_at_cohens_h": fisher_power(control_rate + cohen, control_rate, n1, n2),
            }
        )
    return rows


def auc_row(members: int) -> dict:
    se = math.sqrt((2 * members + 1) / (12 * members * members))
    return {
        "members": members,
        "detectable_auc": detectable_auc(members, members),
        "one_sided_5_percent": 0.5 + (norm.ppf(1 - ALPHA) + norm.ppf(POWER)) * se,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--draws", type=int, default=2000, help="simulated corpora per cell")
    parser.add_argument("--sizes", type=int, nargs="+", default=[24, 48, 100, 400])
    parser.add_argument("--rates", type=float, nargs="+", default=[0.0, 0.02, 0.05, 0.2, 0.5])
    parser.add_argument("--correlations", type=float, nargs="+", default=[0.0, 0.1])
    parser.add_argument("--document-size", type=int, default=16, help="values per document")
    parser.add_argument("--concordant", type=float, default=0.2, help="paired: share hitting both sides")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/evidence_coverage.json")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()

    paired = []
    for n, (member_only, control_only) in itertools.product(
        args.sizes, itertools.product(args.rates, repeat=2)
    ):
        if member_only + control_only > 1:
            continue
        lower, upper = paired_coverage(n, member_only, control_only)
        paired.append(
            {"n": n, "member_only": member_only, "control_only": control_only, "lower": lower, "upper": upper}
        )
    widths = []
    for n, rate in itertools.product(args.sizes, args.rates):
        if 2 * rate + args.concordant > 1:
            continue
        upper, width, marginal_upper, marginal_width = paired_widths(
            n, rate, rate, args.concordant, args.draws, rng
        )
        widths.append(
            {
                "n": n,
                "discordant_rate": rate,
                "discordant_upper": upper,
                "discordant_width": width,
                "marginal_upper": marginal_upper,
                "marginal_width": marginal_width,
            }
        )
    print(f"paired done in {time.perf_counter() - started:.1f} s", flush=True)

    unpaired = []
    for correlation, n, (member_rate, control_rate) in itertools.product(
        args.correlations, args.sizes, itertools.product(args.rates, repeat=2)
    ):
        cell = unpaired_coverage(
            rng, args.draws, n, args.document_size, member_rate, control_rate, correlation
        )
        unpaired.append(
            {
                "correlation": correlation,
                "n": n,
                "member_rate": member_rate,
                "control_rate": control_rate,
                **cell,
            }
        )
    print(f"unpaired coverage done in {time.perf_counter() - started:.1f} s", flush=True)

    correlation = max(args.correlations)
    errors = []
    for n, rate in itertools.product(args.sizes, [r for r in args.rates if 0 < r < 1]):
        rates = false_positives(rng, args.draws, n, args.document_size, rate, correlation)
        errors.append({"correlation": correlation, "n": n, "rate": rate, **rates})
    print(f"false positives done in {time.perf_counter() - started:.1f} s", flush=True)

    detection = detection_rows(args.sizes)
    report = {
        "draws": args.draws,
        "seed": args.seed,
        "document_size": args.document_size,
        "concordant": args.concordant,
        "paired_min_coverage": {side: min(row[side] for row in paired) for side in ("lower", "upper")},
        "unpaired_min_coverage": {
            f"{kind}_{side}@{c}": min(row[f"{kind}_{side}"] for row in unpaired if row["correlation"] == c)
            for kind in ("document", "item")
            for side in ("lower", "upper")
            for c in args.correlations
        },
        "false_positive_max": {test: max(row[test] for row in errors) for test in ("fisher", "documents")},
        "paired_widths": widths,
        "unpaired_widths": [
            {key: row[key] for key in ("correlation", "n", "member_rate", "document_width", "item_width")}
            for row in unpaired
            if row["member_rate"] == row["control_rate"]
        ],
        "false_positives": errors,
        "detection": detection,
        "auc": [auc_row(n) for n in (48, 100, 400)],
        "paired": paired,
        "unpaired": unpaired,
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_report(report, args.out)
    summary = {
        key: report[key]
        for key in ("paired_min_coverage", "unpaired_min_coverage", "false_positive_max", "seconds")
    }
    print(json.dumps(summary, indent=2))
    failed = [
        key
        for key, value in {
            **report["paired_min_coverage"],
            **{k: v for k, v in report["unpaired_min_coverage"].items() if k.startswith("document")},
        }.items()
        if value < 0.95
    ]
    if failed:
        raise SystemExit(f"coverage under 95%: {failed}")


if __name__ == "__main__":
    main()
