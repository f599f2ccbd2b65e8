"""Coverage of the audit's bounds where observations cluster, and the release gate's family-wise error:

    .venv/bin/python benchmarks/clustered_coverage.py      # about an hour of CPU, one core

Everything is simulated through the functions the audit runs, at the decisive profile's sizes
(config/decide.yaml) and the paper's (config/paper.yaml), at intraclass correlations (ICC) 0, 0.1,
0.3 and 0.5 within a privacy unit:

- text membership attacks (`plainsight.audit.released`: the nearest synthetic document's cosine and
  n-gram): --units members and as many held-out units a side, two segments each, a segment's score
  normal with a unit effect (share ICC of its variance) shared by the unit's segments; the corpus's
  score at a true AUC of 0.6 (the gate's maximum). The negative control is a corpus of --generations
  generations (fewer than a run writes, for time: the bound's coverage rests on resampling them, not on
  their number): a segment's score against each is the segment's control score (AUC 0.5, correlated 0.5
  with the corpus's score, unit effect and rest alike) plus independent noise, its nearest score the
  highest, so the judged excess over it is 0.1 and 0.5 plus the excess 0.6 too. Bounds as the audit
  draws them: the raw AUC's from `roc.auc_resamples(...).bounds` (what `roc_summary` gives), the
  excess's from `roc.excess_over_resampled_control` (the paired difference's, widened by the variance of
  the control's generations, `roc.control_auc_variance`), both BCa widened by the small-sample factor
  (`intervals.accelerated_interval`), the audit's 1000 resamples and seed, over units (as the audit runs
  them) and, for comparison, over segments;
- the leak excess of trained methods (`evidence.document_rate_bounds`, combined as `cluster_excess`
  does): member and held-out documents of --values distinct values each, hits beta-binomial within a
  document at each ICC, control rates in --control-rates and the member rate that plus the gate's
  maximum excess (0.05);
- the paired design (in-context methods) has no cluster to model: each generation is its own prompt,
  its context drawn anew, so generations are independent draws given the corpus; its coverage is exact
  (`evidence_coverage.paired_coverage`), at the profile's generations per method.

Each bound must miss the truth at most as often as its level allows: 2.5% for an AUC bound (each side of
a 95% interval), 5% for a leak excess bound (one-sided 95%, two 97.5% cell bounds). The report gives every
cell and the largest miss rate per bound; a simulated rate has a standard error of about 0.005 at 1000
runs.

Family-wise error (decisive sizes): the verdict of a trained method over --seeds seeds at the default gate
(config/config.yaml release.gate), `plainsight.audit.gate.seeds_verdict` over rows whose bounds are drawn as
above (the five leak measures the gate judges: near, any-identifier and code-part leaks, unit linkage,
verbatim copying; the cosine and
n-gram attacks and the re-identification attack on one score per unit, judged as the profile's split has
them: their raw AUC on a coin split (the decisive profile), their excess over the negative control on a
given one; a formal epsilon at the maximum, so that the epsilon criterion passes and the rest decide).
Each criterion's evidence is drawn independently of the others. Toward FAIL: how often a method with no
leak (every excess 0, every AUC 0.5) FAILs, and one exactly at every threshold; toward PASS: how often a
method exactly at every threshold PASSes. The text attacks' bounds per seed are drawn from the coverage
runs' pool. Fixed seed.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import yaml
from scipy.stats import norm

from common import REPO, write_report
from evidence_coverage import clustered_hits, paired_coverage
from plainsight.audit.evidence import document_rate_bounds
from plainsight.audit.gate import FAIL, PASS, Gate, seeds_verdict
from plainsight.audit.roc import auc_resamples, excess_over_resampled_control
from plainsight.evaluation.measures import leak_measures

AUC_MAX, EXCESS_MAX = 0.6, 0.05  # the default gate's maxima (checked against config/config.yaml)
RESAMPLES, BOOTSTRAP_SEED = 1000, 1  # the audit's (audit.bootstrap, TextAuditSettings.seed)
SCORE_CORRELATION = 0.5  # between the corpus's and the negative control's score of one segment
# every leak measure a criterion of the gate judges (the leak excess, unit linkage and verbatim copying)
LEAK_MEASURES = tuple(m.name for m in leak_measures() if m.criterion is not None)
PARTS = ("text", "leak", "paired", "family")
FORMAL_CLAIM = {"dp_delta": 1e-5, "dp_unit": "unit"}  # DP-SGD's per document (unit) at the default delta
TEXT_ATTACKS = ("cosine", "ngram")


@dataclass(frozen=True)
class Profile:
    member_documents: int  # training documents: the trained methods' member side
    control_documents: int  # held-out documents: the control side
    text_units: int  # members and held-out units a side of the text attacks (balanced sets)
    segments: int  # per document
    generations: int  # per method: the paired design's pairs
    # how the gate judges the text attacks: "coin" (members and held-out units drawn by a coin: the raw
    # AUC) or "given" (the corpus's own split: the excess over the negative control)
    split: str


PROFILES = {
    # config/decide.yaml: 300 documents split by a coin, which gives 143 training and 157 held-out
    # (dev + test) documents, two segments each, 142 generations per method; the text attacks balance
    # 143 held-out units with the 143 members
    "decisive": Profile(143, 157, 143, 2, 142, "coin"),
    # config/paper.yaml: TAB's 1,014 training and 127 test documents, two segments each
    "paper": Profile(1014, 127, 127, 2, 1000, "given"),
}


# --- text membership attacks -----------------------------------------------------------------------


def shift(auc: float) -> float:
    """The mean shift between member and non-member scores (unit variance each, units independent) at
    which a member's score exceeds a non-member's with probability `auc`."""
    return math.sqrt(2) * norm.ppf(auc)


def segment_scores(rng, runs: int, units: int, segments: int, icc: float, auc: float, control_auc: float):
    """(member flags, units, the corpus's and the negative control's scores: runs x texts) of the text
    attacks: `units` members and as many non-members, `segments` texts each."""
    member = np.repeat([True, False], units * segments)
    unit = np.repeat(np.arange(2 * units), segments)

    def noise():  # a unit effect with share `icc` of the variance, shared by its segments
        shared = rng.normal(size=(runs, 2 * units))[:, unit]
        return math.sqrt(icc) * shared + math.sqrt(1 - icc) * rng.normal(size=(runs, len(member)))

    own, common = noise(), noise()
    rho = SCORE_CORRELATION
    corpus = shift(auc) * member + common
    control = shift(control_auc) * member + rho * common + math.sqrt(1 - rho**2) * own
    return member, unit, corpus, control


def text_bounds(rng, member, units, corpus: np.ndarray, control: np.ndarray, generations: int) -> np.ndarray:
    """Per run (row): the corpus's AUC bounds and the bounds of its excess over the negative control, whose
    score of a text against each of `generations` generations is its control score plus noise (the
    nearest the highest; none: no excess, NaN). Every run is read on the audit's one set of draws (the
    same texts, units and seed give the same draws)."""
    raw = auc_resamples(member, corpus, RESAMPLES, BOOTSTRAP_SEED, units)
    rows = []
    for run, (corpus_score, control_score) in enumerate(zip(corpus, control)):
        excess = (math.nan, math.nan)
        if generations:
            pairs = control_score[:, None] + rng.normal(size=(len(member), generations))
            excess = excess_over_resampled_control(
                member, corpus_score, pairs, RESAMPLES, BOOTSTRAP_SEED, units
            )[1:]
        rows.append([*raw.bounds(run)[1:], *excess])
    return np.array(rows)


def text_cell(
    rng,
    profile: Profile,
    icc: float,
    runs: int,
    clustered: bool,
    auc: float,
    control_auc: float,
    generations: int,
):
    member, unit, corpus, control = segment_scores(
        rng, runs, profile.text_units, profile.segments, icc, auc, control_auc
    )
    return text_bounds(rng, member, unit if clustered else None, corpus, control, generations)


def text_coverage(bounds: np.ndarray, auc: float, excess: float) -> dict[str, float]:
    """The share of runs each bound misses the truth on its side (nominal at most 2.5%)."""
    return {
        "auc_low_above": float(np.mean(bounds[:, 0] > auc)),
        "auc_high_below": float(np.mean(bounds[:, 1] < auc)),
        "excess_low_above": float(np.mean(bounds[:, 2] > excess)),
        "excess_high_below": float(np.mean(bounds[:, 3] < excess)),
        "auc_width": float(np.mean(bounds[:, 1] - bounds[:, 0])),
    }


def reidentification_pool(
    rng, profile: Profile, runs: int, auc: float, control_auc: float, generations: int
) -> np.ndarray:
    """The re-identification attack's bounds per run (as `text_bounds`): one score per unit (no cluster)."""
    _, _, corpus, control = segment_scores(rng, runs, profile.text_units, 1, 0.0, auc, control_auc)
    member = np.repeat([True, False], profile.text_units)
    return text_bounds(rng, member, None, corpus, control, generations)


# --- leak excess of trained methods -------------------------------------------------------------------


def leak_bounds(
    rng, profile: Profile, values: int, icc: float, control_rate: float, excess: float, draws: int
):
    """(lower, upper) excess bounds per draw, `cluster_excess`'s combination of the two sides' document
    bounds, each 97.5%."""
    member = clustered_hits(rng, draws, profile.member_documents, values, control_rate + excess, icc)
    control = clustered_hits(rng, draws, profile.control_documents, values, control_rate, icc)
    member_low, member_high = document_rate_bounds(member, np.full(profile.member_documents, values))
    control_low, control_high = document_rate_bounds(control, np.full(profile.control_documents, values))
    return member_low - control_high, member_high - control_low


# --- the gate's family-wise error ---------------------------------------------------------------------


def verdict_rates(
    rng, gate: Gate, profile: Profile, seeds: int, verdicts: int, leaks: dict, text_pool, reid_pool
) -> dict[str, float]:
    """The share of `verdicts` simulated methods that FAIL and that PASS over `seeds` seeds: each seed's
    row holds each leak measure's bounds (`leaks`: measure -> (lower, upper) arrays of verdicts x seeds),
    two text attacks' bounds and the re-identification's, drawn from the pools: their raw AUC's on a coin
    split, their excess over the negative control on a given one."""
    kind, columns = ("auc", slice(0, 2)) if profile.split == "coin" else ("excess", slice(2, 4))
    units = profile.member_documents
    outcomes = []
    for draw in range(verdicts):
        rows = []
        for seed in range(seeds):
            # a formal claim the gate accepts: epsilon at the maximum, per privacy unit, a small delta
            row = {**FORMAL_CLAIM, "dp_epsilon": gate.epsilon_max, "dp_units": units}
            for measure, (low, high) in leaks.items():
                row[f"leak_{measure}_excess_low"] = float(low[draw, seed])
                row[f"leak_{measure}_excess_high"] = float(high[draw, seed])
            picked = {a: text_pool[rng.integers(len(text_pool))] for a in TEXT_ATTACKS}
            picked["reidentification"] = reid_pool[rng.integers(len(reid_pool))]
            for attack, (low, high) in ((a, b[columns]) for a, b in picked.items()):
                row[f"text_mia_{kind}_{attack}_low"] = float(low)
                row[f"text_mia_{kind}_{attack}_high"] = float(high)
            rows.append((seed + 1, row))
        outcomes.append(seeds_verdict(rows, gate, trained=True)["verdict"])
    return {"fail": outcomes.count(FAIL) / verdicts, "pass": outcomes.count(PASS) / verdicts}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1000, help="simulated text audits per cell")
    parser.add_argument("--generations", type=int, default=40, help="the negative control's generations")
    parser.add_argument("--draws", type=int, default=4000, help="simulated leak counts per cell")
    parser.add_argument("--correlations", type=float, nargs="+", default=[0.0, 0.1, 0.3, 0.5])
    parser.add_argument("--values", type=int, nargs="+", default=[4, 16], help="distinct values per document")
    parser.add_argument("--control-rates", type=float, nargs="+", default=[0.0, 0.02, 0.05, 0.2])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per verdict")
    parser.add_argument("--verdicts", type=int, default=4000, help="simulated verdicts per scenario")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--profiles",
        nargs="+",
        choices=list(PROFILES),
        default=list(PROFILES),
        help="text, leak and paired cells' sizes",
    )
    parser.add_argument(
        "--parts", nargs="+", choices=PARTS, default=list(PARTS), help="the simulations to run (default: all)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/clustered_coverage.json")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    profiles = {name: PROFILES[name] for name in args.profiles}
    started = time.perf_counter()
    gate = Gate.from_config(yaml.safe_load((REPO / "config/config.yaml").read_text())["release"]["gate"])
    if (gate.text_membership_auc_max, gate.leak_excess_max) != (AUC_MAX, EXCESS_MAX):
        raise SystemExit("the default gate's maxima changed: update AUC_MAX and EXCESS_MAX")

    text, pools = [], {}
    for name, profile in profiles.items() if "text" in args.parts else ():
        for icc in args.correlations:
            bootstraps = (
                (True, False) if name == "decisive" and icc in (0.0, max(args.correlations)) else (True,)
            )
            for clustered in bootstraps:
                # the excess where the gate judges it (a given split) and the bootstrap is the audit's
                generations = args.generations if profile.split == "given" and clustered else 0
                bounds = text_cell(rng, profile, icc, args.runs, clustered, AUC_MAX, 0.5, generations)
                if clustered:
                    pools[name, icc] = bounds
                text.append(
                    {
                        "profile": name,
                        "icc": icc,
                        "bootstrap": "units" if clustered else "segments",
                        **text_coverage(bounds, AUC_MAX, AUC_MAX - 0.5),
                    }
                )
                print(
                    f"text {name} icc {icc} {text[-1]['bootstrap']}: {time.perf_counter() - started:.0f} s",
                    flush=True,
                )

    leak = []
    for name, profile in profiles.items() if "leak" in args.parts else ():
        for icc in args.correlations:
            for values in args.values:
                for control_rate in args.control_rates:
                    low, high = leak_bounds(rng, profile, values, icc, control_rate, EXCESS_MAX, args.draws)
                    leak.append(
                        {
                            "profile": name,
                            "icc": icc,
                            "values_per_document": values,
                            "control_rate": control_rate,
                            "low_above": float(np.mean(low > EXCESS_MAX + 1e-12)),
                            "high_below": float(np.mean(high < EXCESS_MAX - 1e-12)),
                            "width": float(np.mean(high - low)),
                        }
                    )
    print(f"leak: {time.perf_counter() - started:.0f} s", flush=True)

    paired = []
    for name, profile in profiles.items() if "paired" in args.parts else ():
        for member_only, control_only in ((0.05, 0.0), (0.1, 0.05), (0.25, 0.2)):
            low, high = paired_coverage(profile.generations, member_only, control_only)
            paired.append(
                {
                    "profile": name,
                    "member_only": member_only,
                    "control_only": control_only,
                    "low_above": 1 - low,
                    "high_below": 1 - high,
                }
            )
    print(f"paired: {time.perf_counter() - started:.0f} s", flush=True)

    family = []
    decisive = PROFILES["decisive"]
    family_generations = (
        args.generations if decisive.split == "given" else 0
    )  # a coin split judges the raw AUC
    reid = {
        "no leak": reidentification_pool(rng, decisive, args.runs, 0.5, 0.5, family_generations),
        "at the thresholds": reidentification_pool(
            rng, decisive, args.runs, AUC_MAX, 0.5, family_generations
        ),
    }
    for icc in (0.0, max(args.correlations)) if "family" in args.parts else ():
        text_pools = {
            "no leak": text_cell(rng, decisive, icc, args.runs, True, 0.5, 0.5, family_generations),
            "at the thresholds": pools[("decisive", icc)]
            if ("decisive", icc) in pools
            else text_cell(rng, decisive, icc, args.runs, True, AUC_MAX, 0.5, family_generations),
        }
        for scenario, excess in (("no leak", 0.0), ("at the thresholds", EXCESS_MAX)):
            leaks = {}
            for measure in LEAK_MEASURES:
                low, high = leak_bounds(rng, decisive, 4, icc, 0.05, excess, args.verdicts * args.seeds)
                leaks[measure] = (
                    low.reshape(args.verdicts, args.seeds),
                    high.reshape(args.verdicts, args.seeds),
                )
            rates = verdict_rates(
                rng,
                gate,
                decisive,
                args.seeds,
                args.verdicts,
                leaks,
                text_pools[scenario],
                reid[scenario],
            )
            family.append(
                {"icc": icc, "scenario": scenario, "seeds": args.seeds, "split": decisive.split, **rates}
            )
        print(f"family icc {icc}: {time.perf_counter() - started:.0f} s", flush=True)

    report = {
        "runs": args.runs,
        "generations": args.generations,
        "draws": args.draws,
        "verdicts": args.verdicts,
        "seed": args.seed,
        "profiles": {name: asdict(profile) for name, profile in profiles.items()},
        "worst_text_miss": {
            bootstrap: {
                key: max((row[key] for row in text if row["bootstrap"] == bootstrap), default=None)
                for key in ("auc_low_above", "auc_high_below", "excess_low_above", "excess_high_below")
            }
            for bootstrap in ("units", "segments")
        },
        "worst_leak_miss": {
            key: max((r[key] for r in leak), default=None) for key in ("low_above", "high_below")
        },
        "worst_paired_miss": {
            key: max((r[key] for r in paired), default=None) for key in ("low_above", "high_below")
        },
        "parts": args.parts,
        "family": family,
        "text": text,
        "leak": leak,
        "paired": paired,
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_report(report, args.out)
    print(
        json.dumps(
            {
                k: report[k]
                for k in ("worst_text_miss", "worst_leak_miss", "worst_paired_miss", "family", "seconds")
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
