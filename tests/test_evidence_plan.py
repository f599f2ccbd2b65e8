"""The evidence plan: the smallest samples at which the gate decides each criterion with probability 0.8,
checked against the audit's own bounds judged by the gate's own rule (and, for AUCs, a simulation of the
very bootstrap interval the audit reports)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.stats import binom, multinomial, norm, t

from plainsight.audit.canary_table import family_confidence
from plainsight.audit.criteria import Gate
from plainsight.audit.epsilon import one_run_max_epsilon
from plainsight.audit.evidence import (
    AUC_ALPHA,
    POWER,
    detectable_auc,
    detectable_paired_excess,
    document_rate_bounds,
    paired_excess,
    unpaired_excess,
)
from plainsight.audit.evidence_plan import evidence_plan
from plainsight.audit.outcomes import FAIL, PASS, bounded
from plainsight.audit.roc import roc_summary
from plainsight.audit.sample_sizes import (
    UNPAIRED,
    CanaryNeed,
    auc_bounds,
    auc_deciding_sample,
    auc_decision_probability,
    canaries_to_refute,
    control_only_rate,
    decision_probability,
    documents_to_pass,
    excess_bounds,
    first_sample,
    guarantee_deciding,
    leak_deciding_sample,
    perfect_attack_epsilon,
    sample_to_decide,
    texts_to_decide,
)
from plainsight.settings import Settings

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


def test_an_excess_of_three_times_the_threshold_fails_with_probability_054_at_100_and_08_at_141():
    # CP_lo(15 of 100) - CP_hi(0 of 100) = 0.0502 > 0.05 (0.0447 at 14): the gate FAILs from 15
    # member-only generations, P(Binomial(100, 0.15) >= 15) = 0.543; at 141 from 18: 0.803 (0.794 at 140)
    assert (
        paired_excess(15, 0, 15, 0, 100).excess_low
        > 0.0501
        > 0.0448
        > paired_excess(14, 0, 14, 0, 100).excess_low
    )
    assert decision_probability(FAIL, 0.15, 0.0, 100, 0.05) == pytest.approx(
        binom.sf(14, 100, 0.15), abs=1e-12
    )
    assert decision_probability(FAIL, 0.15, 0.0, 100, 0.05) == pytest.approx(0.543, abs=0.001)
    assert decision_probability(FAIL, 0.15, 0.0, 140, 0.05) == pytest.approx(0.794, abs=0.001)
    assert decision_probability(FAIL, 0.15, 0.0, 141, 0.05) == pytest.approx(0.803, abs=0.001)
    assert sample_to_decide(0.15, 0.05) == 141
    # the expected counts' bound crosses at 100, where the gate decides about half the time
    assert excess_bounds(15, 0, 100)[0] > 0.05 > excess_bounds(0.15 * 99, 0, 99)[0]


def test_the_chance_of_deciding_is_not_monotone_and_the_sample_is_the_first_that_reaches_it():
    # at 145 the gate FAILs 0.15 with 0.839, at 146 (whose critical count rises to 19) with 0.782
    assert decision_probability(FAIL, 0.15, 0.0, 145, 0.05) == pytest.approx(0.839, abs=0.001)
    assert decision_probability(FAIL, 0.15, 0.0, 146, 0.05) == pytest.approx(0.782, abs=0.001)
    assert all(decision_probability(FAIL, 0.15, 0.0, n, 0.05) < POWER for n in range(100, 141))


def test_the_gates_fail_needs_a_larger_excess_than_mcnemar_detects():
    # at 100 pairs McNemar's test detects 0.067 with 80% power; the gate's FAIL needs 0.178 (0.797 at 0.177)
    assert detectable_paired_excess(0.0, 100) == pytest.approx(0.067, abs=1e-9)
    assert decision_probability(FAIL, 0.178, 0.0, 100, 0.05) == pytest.approx(0.804, abs=0.001)
    assert decision_probability(FAIL, 0.177, 0.0, 100, 0.05) < POWER


def test_the_total_control_rate_is_not_the_control_only_one():
    # 23% against 6% read as control-only rates: at 140 generations the gate FAILs only half the time
    assert decision_probability(FAIL, 0.23, 0.06, 140, 0.05) == pytest.approx(0.50, abs=0.005)
    assert sample_to_decide(0.17, 0.05, 0.06) > sample_to_decide(0.17, 0.05, 0.0)


def _gate_probability(outcome: str, member_rate: float, control_rate: float, n: int, paired: bool) -> float:
    """The chance of `outcome` by enumerating every count the audit could see, each judged by the gate's
    own rule (`bounded` over `paired_excess` or `unpaired_excess`)."""
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - (b if paired else 0)):
            if paired:
                chance = multinomial.pmf(
                    [b, c, n - b - c], n, [member_rate, control_rate, 1 - member_rate - control_rate]
                )
                excess = paired_excess(b, c, b, c, n)
            else:
                chance = binom.pmf(b, n, member_rate) * binom.pmf(c, n, control_rate)
                excess = unpaired_excess(b, n, c, n)
            if bounded(excess.excess_low, excess.excess_high, 0.05, "")[0] == outcome:
                total += chance
    return total


@pytest.mark.parametrize("paired", [True, False])
def test_the_exact_chance_is_the_gates_own_rule_over_every_count(paired):
    design = "paired" if paired else UNPAIRED
    for outcome, member_rate, control_rate in [(PASS, 0.05, 0.05), (FAIL, 0.35, 0.1), (FAIL, 0.3, 0.0)]:
        expected = _gate_probability(outcome, member_rate, control_rate, 40, paired)
        found = decision_probability(outcome, member_rate, control_rate, 40, 0.05, design)
        assert found == pytest.approx(expected, abs=1e-10)
    assert decision_probability(PASS, 0.0, 0.0, 72, 0.05) == 1.0
    assert decision_probability(PASS, 0.0, 0.0, 71, 0.05) == 0.0


def test_the_search_finds_the_first_sample_that_holds_where_holding_is_not_monotone():
    # one at a time under 200: the first tooth, though it does not last
    assert first_sample(lambda n: n in (41, 42) or n >= 60, 30) == 41
    # in steps of 1% of n beyond: 200, 202, ... 252, then bisected back to 251
    assert first_sample(lambda n: n >= 251, 200) == 251
    assert first_sample(lambda n: False, 99_000) is None


def test_control_only_pairs_raise_the_sample_to_pass():
    # the expected counts' bound passes at 593 generations, where the gate passes about half the time
    assert excess_bounds(0.1 * 593, 0.1 * 593, 593)[1] <= 0.05
    assert decision_probability(PASS, 0.1, 0.1, 593, 0.05) == pytest.approx(0.50, abs=0.01)
    assert sample_to_decide(0.0, 0.05, 0.1) == 1001
    assert decision_probability(PASS, 0.1, 0.1, 1000, 0.05) == pytest.approx(0.799, abs=0.001)
    assert sample_to_decide(0.05, 0.05) is None  # an excess at the threshold: no sample decides it


def test_the_sample_to_decide_is_deterministic_and_refuses_bad_rates():
    sample_to_decide.cache_clear()
    assert [sample_to_decide(0.04, 0.05, 0.01) for _ in range(2)] == [sample_to_decide(0.04, 0.05, 0.01)] * 2
    assert sample_to_decide(0.7, 0.05, 0.5) is None  # member-only and control-only rates over 1
    with pytest.raises(ValueError):
        decision_probability("INCONCLUSIVE", 0.1, 0.0, 10, 0.05)
    with pytest.raises(ValueError):
        decision_probability(FAIL, 1.2, 0.0, 10, 0.05)


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
        se = math.sqrt((2 * members + 1) / (12 * members**2))
        widened = math.sqrt(members / (members - 1)) * t.ppf(1 - AUC_ALPHA, members - 1)  # z times the factor
        assert high - 0.5 == pytest.approx(widened * se)
        # the interval's lower bound clears 0.5 with probability POWER: its half-width plus z_POWER errors
        assert detectable_auc(members, members) == pytest.approx(high + norm.ppf(POWER) * se)
        assert low == pytest.approx(1 - high)


def test_134_texts_each_pass_an_auc_of_05_and_56_fail_an_auc_of_075_with_probability_08():
    # nothing learnt: P(PASS) = Phi(0.1 / se - z f), se^2 = (2n + 1) / (12 n^2) and f the small-sample
    # factor sqrt(n / (n - 1)) t_{n-1} / z: at 134, se = 0.035333 and z f = 1.98538, Phi(0.84484) = 0.8009;
    # at 133, se = 0.035466 and z f = 1.98558, Phi(0.83402) = 0.7979
    assert texts_to_decide(0.5, 0.6) == 134
    assert auc_decision_probability(0.5, 0.6, 134) == pytest.approx(0.8009, abs=0.0005)
    assert auc_decision_probability(0.5, 0.6, 133) == pytest.approx(0.7979, abs=0.0005)
    # at 65 each the bound's half-width is 0.1023, over the 0.1 between 0.5 and the maximum
    assert auc_decision_probability(0.5, 0.6, 65) == pytest.approx(0.482, abs=0.002)
    assert texts_to_decide(0.75, 0.6) == 56
    assert auc_decision_probability(0.75, 0.6, 55) < POWER < auc_decision_probability(0.75, 0.6, 56)
    assert texts_to_decide(0.6, 0.6) is None


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
    # an AUC of 0.75 with 29 each: the BCa lower bound lies near 0.598 here, above the plan's 0.591 (the
    # plan's null error errs towards more texts)
    bootstrap_low = 0.75 - _bootstrap_half_widths(0.75, 29, 16, seed=9)[:, 0].mean()
    assert bootstrap_low > auc_bounds(0.75, 29, 29)[0] + 0.004


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
        for p in evidence_plan(
            Gate.from_config(config["release"]["gate"]),
            Settings.from_config(config),
            lambda d, s: segments[s],
        )
    }
    paired = plans[("leak_excess", "in-context (paired)")]
    assert (paired.planned, paired.to_pass, paired.to_fail) == (
        "12",
        ">= 72 generations to PASS with probability 0.8 at excess 0.00",
        ">= 141 generations to FAIL with probability 0.8 at excess 0.15",
    )
    trained = plans[("verbatim", "trained (unpaired)")]
    assert (
        trained.to_pass
        == ">= 72 documents, >= 72 values per side to PASS with probability 0.8 at excess 0.00"
    )
    assert trained.to_fail == ">= 141 values per side to FAIL with probability 0.8 at excess 0.15"
    text = plans[("text_membership", "all methods")]
    assert (text.planned, text.to_pass, text.to_fail) == (
        "<= 48",
        ">= 134 each to PASS with probability 0.8 at AUC 0.50, cannot be decided on this corpus: it has 48",
        ">= 56 each to FAIL with probability 0.8 at AUC 0.75, cannot be decided on this corpus: it has 48",
    )
    epsilon = plans[("epsilon", "all methods")]
    assert epsilon.planned == "40 (20), not in the verdict" and "none can pass" in epsilon.to_pass
    assert epsilon.to_fail == ">= 28 canaries (14 guesses) to FAIL if every guess is right"


def test_the_paper_profile_plans_enough_generations_and_canaries():
    config = _config("config/paper.yaml")
    plans = {
        (p.criterion, p.design): p
        for p in evidence_plan(Gate.from_config(config["release"]["gate"]), Settings.from_config(config))
    }
    assert plans[("leak_excess", "in-context (paired)")].planned == "1,000"
    assert plans[("epsilon", "all methods")].planned == "200 (100)"
    assert plans[("text_membership", "all methods")].planned == "-"  # no segment counter given
    assert "cannot" not in plans[("text_membership", "all methods")].to_pass  # nor a corpus to fall short


def test_an_inconclusive_reason_names_the_sample_that_would_decide_it():
    paired = {"leak_design": "paired", "leak_near_members": 24, "leak_near_excess": 0.0}
    reason = leak_deciding_sample({**paired, "leak_near_control_rate": 0.0}, "near", 0.05)
    assert reason == (
        " (needs >= 72 generations to PASS with probability 0.8 at excess 0.00 and control rate 0.00, "
        "this run has 24)"
    )
    unpaired = {"leak_design": "unpaired", "leak_near_inference": "document_permutation"}
    assert "from >= 72 documents" in leak_deciding_sample(unpaired, "near", 0.05)
    assert "this run has none" in leak_deciding_sample(unpaired, "near", 0.05)
    # an AUC of 0.55: P(PASS) = 0.8001 at 522 each, 0.7994 at 521
    texts = {"text_mia_members": 600, "text_mia_non_members": 600, "text_mia_auc_cosine": 0.55}
    assert auc_deciding_sample(texts, "cosine", 0.6) == (
        " (needs >= 525 members and as many held-out texts to PASS with probability 0.8 at AUC 0.55, "
        "this run has 600 and 600)"
    )
    for reason in (leak_deciding_sample(paired, "near", 0.05), auc_deciding_sample(texts, "cosine", 0.6)):
        assert "; " not in reason and "(" not in reason[2:]


def test_the_paired_reason_reads_the_control_only_rate_off_the_rows_bounds():
    # 10 member-only and 4 control-only pairs of 72 (and 2 concordant hits: a control rate of 6 / 72)
    audited = paired_excess(10, 4, 12, 6, 72)
    row = {
        "leak_design": "paired",
        "leak_near_members": 72,
        "leak_near_excess": audited.excess,
        "leak_near_excess_low": audited.excess_low,
        "leak_near_excess_high": audited.excess_high,
        "leak_near_control_rate": audited.control_rate,
    }
    assert control_only_rate(row, "near") == pytest.approx(4 / 72)
    needed = sample_to_decide(audited.excess, 0.05, 4 / 72)
    assert leak_deciding_sample(row, "near", 0.05) == (
        f" (needs >= {needed:,} generations to FAIL with probability 0.8 at excess 0.08 and control-only "
        "rate 0.06, this run has 72)"
    )
    assert control_only_rate({**row, "leak_near_excess_high": 0.9}, "near") is None


def test_a_sample_the_corpus_cannot_give_says_so_and_what_can_decide():
    # a corpus of 24 training and 24 held-out segments: no AUC of 0.5 passes under 132 each
    texts = {"text_mia_members": 24, "text_mia_non_members": 24, "text_mia_auc_cosine": 0.5}
    assert auc_deciding_sample(texts, "cosine", 0.6) == (
        " (cannot be decided on this corpus: needs >= 134 members and as many held-out texts to PASS with "
        "probability 0.8 at AUC 0.50, it has 24 and 24; a larger corpus can decide it, or a formal "
        "guarantee at or under release.gate.epsilon_max under a policy that leaves text_membership out of "
        "release.gate.criteria)"
    )
    beside = {**texts, "text_mia_excess_ngram": 0.0, "text_mia_excess_ngram_low": -0.1}
    assert "needs more than 134 members" in auc_deciding_sample(beside, "ngram", 0.6)
    # a trained method's values are the corpus's: 30 per side cannot decide; in-context generations can grow
    unpaired = {
        "leak_design": "unpaired",
        "leak_any_identifier_inference": "fisher_exact",
        "leak_any_identifier_members": 30,
        "leak_any_identifier_controls": 30,
        "leak_any_identifier_excess": 0.0,
        "leak_any_identifier_control_rate": 0.0,
    }
    reason = leak_deciding_sample(unpaired, "any_identifier", 0.05)
    assert reason.startswith(" (cannot be decided on this corpus: needs >= 72 independent values per side")
    assert "it has 30 and 30" in reason and "leaves leak_excess out" in reason
    assert leak_deciding_sample({**unpaired, "leak_design": "paired"}, "any_identifier", 0.05).startswith(
        " (needs >= 72"
    )


def test_an_epsilon_no_sample_decides_names_the_guarantee_that_would():
    assert guarantee_deciding(1.0, "unit", 0.1) == (
        " (cannot be decided by a larger sample: needs a formal guarantee of epsilon <= 1 per 'unit' with "
        "delta x units <= 0.1, or a policy that accepts empirical evidence, release.gate.policy: "
        "empirical_evidence)"
    )
