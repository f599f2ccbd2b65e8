"""The evidence plan: the smallest samples that decide each criterion, checked against the audit's own
bounds (and, for AUCs, a simulation of the very bootstrap interval the audit reports)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.stats import norm

from plainsight.audit.canary_table import family_confidence
from plainsight.audit.criteria import Gate
from plainsight.audit.epsilon import one_run_max_epsilon
from plainsight.audit.evidence import (
    AUC_ALPHA,
    POWER,
    detectable_auc,
    document_rate_bounds,
    paired_excess,
    unpaired_excess,
)
from plainsight.audit.evidence_plan import evidence_plan
from plainsight.audit.roc import roc_summary
from plainsight.audit.sample_sizes import (
    CanaryNeed,
    auc_bounds,
    auc_deciding_sample,
    canaries_to_refute,
    documents_to_pass,
    excess_bounds,
    leak_deciding_sample,
    perfect_attack_epsilon,
    sample_to_decide,
    texts_to_decide,
)

REPO = Path(__file__).resolve().parents[1]


def test_the_plan_reads_the_audits_own_excess_bounds():
    for b, c, n in [(0, 0, 24), (3, 1, 24), (10, 4, 72), (0, 5, 100)]:
        audited = paired_excess(b, c, b, c, n)
        assert excess_bounds(b, c, n) == pytest.approx((audited.excess_low, audited.excess_high), abs=1e-12)
        unpaired = unpaired_excess(b, n, c, n)
        assert excess_bounds(b, c, n) == pytest.approx((unpaired.excess_low, unpaired.excess_high), abs=1e-12)


def test_no_run_under_72_generations_passes_a_005_threshold():
    # zero excess, no control-only pair: the upper bound is 1 - 0.025^(1/n), under 0.05 from
    # n = ln 0.025 / ln 0.95 = 71.9 on (0.0506 at 71, 0.0499 at 72)
    assert sample_to_decide(0.0, 0.05) == 72 == math.ceil(math.log(0.025) / math.log(0.95))
    assert paired_excess(0, 0, 0, 0, 71).excess_high > 0.0505
    assert paired_excess(0, 0, 0, 0, 72).excess_high < 0.0500


def test_an_excess_of_three_times_the_threshold_fails_from_100_generations():
    # CP_lo(15 of 100) - CP_hi(0 of 100) = 0.0502 > 0.05; at 99 the expected 14.85 gives 0.0496
    assert sample_to_decide(0.15, 0.05) == 100
    assert paired_excess(15, 0, 15, 0, 100).excess_low > 0.0501
    assert excess_bounds(0.15 * 99, 0, 99)[0] < 0.0497


def test_control_only_pairs_widen_the_bound_and_raise_the_sample():
    needed = sample_to_decide(0.0, 0.05, 0.1)
    assert needed == 593
    assert excess_bounds(0.1 * needed, 0.1 * needed, needed)[1] <= 0.05
    assert excess_bounds(0.1 * (needed - 1), 0.1 * (needed - 1), needed - 1)[1] > 0.05
    assert sample_to_decide(0.05, 0.05) is None  # an excess at the threshold: no sample decides it


def test_documents_without_a_hit_certify_no_less_than_their_floor():
    assert documents_to_pass(0.05) == 72
    (_,), (floor,) = document_rate_bounds(np.zeros(72), np.ones(72))
    assert floor == pytest.approx(1 - 0.025 ** (1 / 72)) and floor < 0.05
    # many values per document certify no more than the documents do
    (_,), (many,) = document_rate_bounds(np.zeros(71), np.full(71, 40))
    assert many > 0.0505


def test_the_auc_bounds_use_the_detectable_aucs_error_and_level():
    for members in (24, 48, 65):
        low, high = auc_bounds(0.5, members, members)
        z = norm.ppf(1 - AUC_ALPHA)
        assert detectable_auc(members, members) == pytest.approx(
            0.5 + (high - 0.5) * (z + norm.ppf(POWER)) / z
        )
        assert low == pytest.approx(1 - high)


def test_65_texts_each_can_pass_an_auc_of_06_and_29_fail_an_auc_of_075():
    # 0.5 + 1.96 sqrt((2n + 1) / (12 n^2)) <= 0.6 from n = 65 (0.59963; 0.60041 at 64)
    assert texts_to_decide(0.5, 0.6) == 65
    assert auc_bounds(0.5, 64, 64)[1] > 0.6003 and auc_bounds(0.5, 65, 65)[1] < 0.5997
    # 0.75 - 1.96 sqrt((2n + 1) / (12 n^2)) > 0.6 from n = 29 (0.60014; 0.59744 at 28)
    assert texts_to_decide(0.75, 0.6) == 29
    assert auc_bounds(0.75, 28, 28)[0] < 0.5975 and auc_bounds(0.75, 29, 29)[0] > 0.6001


def _bootstrap_half_widths(auc: float, n: int, datasets: int, seed: int) -> np.ndarray:
    """(AUC - lower bound, upper bound - AUC) of the audit's bootstrap interval on simulated scores:
    normal scores, members shifted so that the true AUC is `auc`."""
    rng = np.random.default_rng(seed)
    shift = math.sqrt(2) * norm.ppf(auc)
    label = [True] * n + [False] * n
    widths = []
    for dataset in range(datasets):
        scores = np.concatenate([rng.normal(shift, size=n), rng.normal(size=n)])
        summary = roc_summary(label, scores, resamples=300, seed=dataset)
        widths.append((summary.auc - summary.auc_low, summary.auc_high - summary.auc))
    return np.array(widths)


def test_the_planned_text_sizes_hold_for_the_bootstrap_interval_the_audit_reports():
    # nothing learnt, 65 each: the bootstrap interval's upper half is the planned 0.0997 (0.1034 here)
    planned = auc_bounds(0.5, 65, 65)[1] - 0.5
    assert abs(_bootstrap_half_widths(0.5, 65, 16, seed=7)[:, 1].mean() - planned) < 0.006
    # at 45 each it is 0.12 (0.120 here): an AUC of 0.5 cannot pass 0.6
    assert _bootstrap_half_widths(0.5, 45, 16, seed=8)[:, 1].mean() > 0.11
    # an AUC of 0.75 with 29 each: the lower bound lies near 0.618 here, above 0.6 (the plan's null
    # error errs towards more texts)
    assert 0.75 - _bootstrap_half_widths(0.75, 29, 16, seed=9)[:, 0].mean() > 0.61


def test_a_perfect_attack_certifies_logit_of_gamma_to_the_one_over_r():
    assert perfect_attack_epsilon(12, 0.95) == pytest.approx(1.26, abs=0.005)
    assert perfect_attack_epsilon(100, 0.95) == pytest.approx(3.49, abs=0.005)
    assert one_run_max_epsilon(24, 12, 0.0, 0.95) == pytest.approx(perfect_attack_epsilon(12, 0.95), abs=1e-6)


def test_28_canaries_could_refute_epsilon_1_with_three_attacks_together():
    # 1 - 0.05 / 3 per bound: r > ln(1/60) / ln(expit(1)) = 13.07, so 14 guesses, 28 candidates at half
    confidence = family_confidence(3)
    assert canaries_to_refute(1.0, 1e-5, 0.5, confidence) == CanaryNeed(28, 14)
    assert one_run_max_epsilon(24, 12, 1e-5, confidence) < 0.96
    assert one_run_max_epsilon(28, 14, 1e-5, confidence) > 1.07
    assert canaries_to_refute(1.0, 0.0, 0.5, 0.95) == CanaryNeed(20, 10)  # r > 9.56 at one attack


def _merged(base: dict, overlay: dict) -> dict:
    """A config overlay as Snakemake applies one: nested mappings merged, everything else replaced."""
    merged = dict(base)
    for key, value in overlay.items():
        both = isinstance(value, dict) and isinstance(base.get(key), dict)
        merged[key] = _merged(base[key], value) if both else value
    return merged


def _config(overlay: str | None = None) -> dict:
    config = yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))
    if overlay is None:
        return config
    return _merged(config, yaml.safe_load((REPO / overlay).read_text(encoding="utf-8")))


def test_the_default_config_plans_every_criterion():
    config = _config()
    segments = {"train": 128, "dev": 24, "test": 24}
    plans = {
        (p.criterion, p.design): p
        for p in evidence_plan(Gate.from_config(config["release"]["gate"]), config, lambda d, s: segments[s])
    }
    paired = plans[("leak_excess", "in-context (paired)")]
    assert (paired.planned, paired.to_pass, paired.to_fail) == (
        "24",
        ">= 72 generations",
        ">= 100 generations (excess 0.15)",
    )
    trained = plans[("verbatim", "trained (unpaired)")]
    assert trained.to_pass == ">= 72 documents, >= 72 values per side"
    text = plans[("text_membership", "all methods")]
    assert (text.planned, text.to_pass, text.to_fail) == (
        "<= 48",
        ">= 65 each (AUC 0.50)",
        ">= 29 each (AUC 0.75)",
    )
    epsilon = plans[("epsilon", "all methods")]
    assert epsilon.planned == "40 (20), not in the verdict" and "none can pass" in epsilon.to_pass
    assert epsilon.to_fail == ">= 28 canaries (14 guesses, all right)"


def test_the_paper_profile_plans_enough_generations_and_canaries():
    config = _config("config/paper.yaml")
    plans = {
        (p.criterion, p.design): p for p in evidence_plan(Gate.from_config(config["release"]["gate"]), config)
    }
    assert plans[("leak_excess", "in-context (paired)")].planned == "1,000"
    assert plans[("epsilon", "all methods")].planned == "200 (100)"
    assert plans[("text_membership", "all methods")].planned == "-"  # no segment counter given


def test_an_inconclusive_reason_names_the_sample_that_would_decide_it():
    paired = {"leak_design": "paired", "leak_near_members": 24, "leak_near_excess": 0.0}
    reason = leak_deciding_sample({**paired, "leak_near_control_rate": 0.0}, "near", 0.05)
    assert reason == (
        " (needs >= 72 generations to decide at excess 0.00 and control rate 0.00, this run has 24)"
    )
    unpaired = {"leak_design": "unpaired", "leak_near_inference": "document_permutation"}
    assert "from >= 72 documents" in leak_deciding_sample(unpaired, "near", 0.05)
    assert "this run has none" in leak_deciding_sample(unpaired, "near", 0.05)
    texts = {"text_mia_members": 48, "text_mia_non_members": 48, "text_mia_auc_cosine": 0.5}
    assert auc_deciding_sample(texts, "cosine", 0.6) == (
        " (needs >= 65 members and as many held-out texts to decide at AUC 0.50, this run has 48 and 48)"
    )
    beside = {**texts, "text_mia_excess_ngram": 0.0, "text_mia_excess_ngram_low": -0.1}
    assert "needs more than 65 members" in auc_deciding_sample(beside, "ngram", 0.6)
    for reason in (leak_deciding_sample(paired, "near", 0.05), auc_deciding_sample(texts, "cosine", 0.6)):
        assert "; " not in reason
