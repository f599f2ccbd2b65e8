"""The excess of a leak over its held-out control, its bounds, p-values and detectable effects: hand-made
tables, exact enumerations and simulations of the very tests the evidence runs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import beta, binomtest, fisher_exact, norm, t

from plainsight.audit.epsilon import clopper_pearson
from plainsight.audit.evidence import (
    DETECTABLE_STEP,
    DOCUMENT_PERMUTATION,
    FISHER,
    INCONCLUSIVE,
    LEAKS,
    MCNEMAR,
    cluster_power,
    conclusion,
    design_effects,
    detectable_auc,
    detectable_cluster_excess,
    detectable_paired_excess,
    detectable_unpaired_excess,
    document_permutation_p_value,
    document_permutation_p_values,
    document_rate_bounds,
    dp_null_controls_needed,
    dp_null_p_value,
    dp_null_testable,
    excess_of,
    excess_record,
    fisher_critical,
    fisher_power,
    intraclass_correlations,
    mcnemar_critical,
    mcnemar_power,
    paired_excess,
    released_text_epsilon,
    unpaired_excess,
    within_document_correlation,
)
from plainsight.audit.guarantee import Guarantee, guarantee_record
from plainsight.audit.roc import roc_summary
from test_epsilon import binomial_tail_at_least, bisect

RATES = (0.0, 0.02, 0.05, 0.2, 0.5)


def cp_hand(k: int, n: int, side: str) -> float:
    """One-sided 97.5% Clopper-Pearson bound from the binomial tails, without scipy."""
    if side == "upper":  # P(X <= k | p) = 0.025
        return bisect(lambda p: 0.025 - (1 - binomial_tail_at_least(k + 1, n, p)), 0, 1)
    return bisect(lambda p: binomial_tail_at_least(k, n, p) - 0.025, 0, 1)  # P(X >= k | p) = 0.025


def beta_binomial_hits(rng, draws: int, documents: int, size: int, rate: float, correlation: float):
    if correlation == 0 or rate in (0.0, 1.0):
        rates = np.full((draws, documents), rate)
    else:
        spread = (1 - correlation) / correlation
        rates = rng.beta(rate * spread, (1 - rate) * spread, (draws, documents))
    return rng.binomial(size, rates)


# --- bounds and p-values on hand-made tables ---------------------------------------------------------


def test_a_method_that_copies_every_time_against_a_control_that_never_matches():
    excess = paired_excess(member_only=10, control_only=0, member_hits=10, control_hits=0, n=10)
    lower_of_all = 0.025 ** (1 / 10)  # one-sided 97.5% Clopper-Pearson lower bound of 10 of 10
    assert excess.excess == 1.0 and excess.inference == MCNEMAR
    assert excess.excess_low == pytest.approx(lower_of_all - (1 - lower_of_all), abs=1e-9)  # 0.383
    assert excess.excess_high == pytest.approx(1.0)
    assert excess.p_value == pytest.approx(0.5**10)  # McNemar: all ten discordant pairs one way


def test_no_hit_on_either_side_bounds_the_excess_by_the_sample_size():
    excess = unpaired_excess(member_hits=0, members=20, control_hits=0, controls=20)
    upper_of_none = 1 - 0.025 ** (1 / 20)  # 0.168
    assert (excess.excess, excess.p_value, excess.inference) == (0.0, 1.0, FISHER)
    assert excess.excess_high == pytest.approx(upper_of_none, abs=1e-9)
    assert excess.excess_low == pytest.approx(-upper_of_none, abs=1e-9)


def test_the_paired_bound_reads_the_discordant_cells_not_the_marginal_rates():
    # a value generic text writes anyway: 8 of 24 generations hit the member side, 8 the control side,
    # 6 of them both: b = c = 2 discordant pairs
    excess = paired_excess(member_only=2, control_only=2, member_hits=8, control_hits=8, n=24)
    assert excess.excess == 0.0 and excess.p_value == pytest.approx(11 / 16)  # P(X >= 2 | 4, 1/2)
    half_width = cp_hand(2, 24, "upper") - cp_hand(2, 24, "lower")
    assert half_width == pytest.approx(0.2597, abs=1e-4)
    assert excess.excess_high == pytest.approx(half_width, abs=1e-7)
    assert excess.excess_low == pytest.approx(-half_width, abs=1e-7)
    # the Bonferroni combination of the marginal rates' bounds (8 of 24 each) is far wider
    assert cp_hand(8, 24, "upper") - cp_hand(8, 24, "lower") == pytest.approx(0.3969, abs=1e-4)


@pytest.mark.parametrize("n", [24, 48])
def test_the_paired_bounds_cover_at_least_95_percent_exactly(n):
    # every (b, c) of the trinomial, at member-only and control-only rates over a grid
    bounds = {(b, c): paired_excess(b, c, b, c, n) for b in range(n + 1) for c in range(n + 1 - b)}
    for member_only, control_only in itertools.product(RATES, repeat=2):
        if member_only + control_only > 1:
            continue
        truth, lower_covers, upper_covers = member_only - control_only, 0.0, 0.0
        for (b, c), excess in bounds.items():
            p = (
                math.factorial(n)
                / (math.factorial(b) * math.factorial(c) * math.factorial(n - b - c))
                * member_only**b
                * control_only**c
                * (1 - member_only - control_only) ** (n - b - c)
            )
            lower_covers += p * (excess.excess_low <= truth + 1e-12)
            upper_covers += p * (excess.excess_high >= truth - 1e-12)
        assert lower_covers >= 0.95 and upper_covers >= 0.95, (member_only, control_only)


def test_fishers_test_on_a_hand_made_table():
    # 3 of 4 member values against 0 of 4 control values: P = C(4,3)C(4,0)/C(8,3) + 0 = 4/56
    excess = unpaired_excess(3, 4, 0, 4)
    assert excess.p_value == pytest.approx(4 / 56)
    assert excess.excess == pytest.approx(0.75)


# --- power of McNemar's test, exactly ----------------------------------------------------------------


def test_mcnemars_rejection_region_at_seven_pairs():
    # b of d discordant pairs is rejected when 2^-d sum_{i >= b} C(d, i) < 0.05: at d = 4 even 4 of 4
    # (1/16) is not, at d = 6 only 6 of 6 (1/64; 5 of 6 is 7/64), at d = 7 only 7 of 7 (8/128 for 6)
    assert mcnemar_critical(7).tolist() == [1, 2, 3, 4, 5, 5, 6, 7]


def test_mcnemars_power_by_hand_at_seven_pairs():
    # so only b >= 5 with c = 0 rejects: the trinomial's cells (b, 0, 7 - b), b = 5, 6, 7
    member_only, control_only = 0.5, 0.1
    by_hand = sum(
        math.comb(7, b) * member_only**b * (1 - member_only - control_only) ** (7 - b) for b in (5, 6, 7)
    )
    assert mcnemar_power(member_only, control_only, 7) == pytest.approx(by_hand, abs=1e-12)
    assert by_hand == pytest.approx(0.15656, abs=1e-5)


def test_the_detectable_paired_excess_is_the_root_of_the_exact_power():
    # six pairs, no control-only pair: only b >= 5 rejects, power 6 x^5 (1 - x) + x^6
    def power(x: float) -> float:
        return 6 * x**5 * (1 - x) + x**6

    root = bisect(lambda x: power(x) - 0.8, 0, 1)
    detectable = detectable_paired_excess(0.0, 6)
    assert root <= detectable < root + DETECTABLE_STEP + 1e-12
    assert mcnemar_power(detectable, 0.0, 6) == pytest.approx(power(detectable), abs=1e-12)
    assert power(detectable - DETECTABLE_STEP) < 0.8


def test_the_detectable_paired_excess_has_80_percent_power_when_mcnemars_test_is_run():
    rng = np.random.default_rng(7)
    for n, control_only in ((24, 2), (48, 0), (100, 10)):
        control_rate = control_only / n
        x = detectable_paired_excess(control_rate, n)
        cells = rng.multinomial(n, [control_rate + x, control_rate, 1 - x - 2 * control_rate], 4000)
        p_values = {
            (b, c): binomtest(b, b + c, 0.5, alternative="greater").pvalue if b + c else 1.0
            for b, c in {(int(b), int(c)) for b, c, _ in cells}
        }
        power = np.mean([p_values[int(b), int(c)] < 0.05 for b, c, _ in cells])
        assert power >= 0.78, (n, control_only, power)
        assert mcnemar_power(control_rate + x - 0.005, control_rate, n) < 0.8


def test_the_z_tests_power_figure_is_far_from_what_mcnemars_test_has():
    # Cohen's h (the arcsine z-test) puts 80% power at 0.123 for n = 24 and control rate 0; McNemar's
    # test rejects only b >= 5 here (c = 0), so its power there is P(Binomial(24, 0.123) >= 5)
    assert mcnemar_power(0.1234, 0.0, 24) == pytest.approx(binomial_tail_at_least(5, 24, 0.1234), abs=1e-12)
    assert mcnemar_power(0.1234, 0.0, 24) < 0.2
    assert detectable_paired_excess(0.0, 24) > 0.25


# --- power of Fisher's test, exactly -----------------------------------------------------------------


def test_fishers_rejection_region_is_what_scipy_rejects_cell_by_cell():
    for n1, n2 in ((9, 7), (12, 4)):
        critical = fisher_critical(n1, n2)
        for k1, k2 in itertools.product(range(n1 + 1), range(n2 + 1)):
            table = [[k1, n1 - k1], [k2, n2 - k2]]
            rejected = fisher_exact(table, alternative="greater").pvalue < 0.05
            assert rejected == (k1 >= critical[k2]), (n1, n2, k1, k2)


def test_fishers_power_by_enumeration():
    n1, n2, member_rate, control_rate = 6, 5, 0.7, 0.1
    by_hand = sum(
        math.comb(n1, k1)
        * member_rate**k1
        * (1 - member_rate) ** (n1 - k1)
        * math.comb(n2, k2)
        * control_rate**k2
        * (1 - control_rate) ** (n2 - k2)
        for k1, k2 in itertools.product(range(n1 + 1), range(n2 + 1))
        if fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="greater").pvalue < 0.05
    )
    assert fisher_power(member_rate, control_rate, n1, n2) == pytest.approx(by_hand, abs=1e-12)


def test_the_detectable_unpaired_excess_has_80_percent_power_when_fishers_test_is_run():
    rng = np.random.default_rng(8)
    for n1, n2, control_rate in ((128, 48, 0.0), (128, 48, 0.05), (60, 60, 0.2)):
        x = detectable_unpaired_excess(control_rate, n1, n2)
        k1, k2 = rng.binomial(n1, control_rate + x, 3000), rng.binomial(n2, control_rate, 3000)
        p_values = {
            (a, b): fisher_exact([[a, n1 - a], [b, n2 - b]], alternative="greater").pvalue
            for a, b in set(zip(k1.tolist(), k2.tolist()))
        }
        power = np.mean([p_values[a, b] < 0.05 for a, b in zip(k1.tolist(), k2.tolist())])
        assert power >= 0.78, (n1, n2, control_rate, power)
        assert fisher_power(control_rate + x - 0.005, control_rate, n1, n2) < 0.8
    # Cohen's h's figure for 128 against 48 values has almost no power under Fisher's test
    assert fisher_power(0.0436, 0.0, 128, 48) < 0.07


# --- documents: permutation, bounds, power -----------------------------------------------------------


def test_the_document_permutation_test_by_hand():
    # four documents, two a side: of the 6 arrangements only the observed one puts both full documents
    # on the member side
    assert document_permutation_p_value([[2, 2], [2, 2]], [[0, 2], [0, 2]]) == pytest.approx(1 / 6)
    # a document without items weighs nothing
    assert document_permutation_p_value([[2, 2], [2, 2], [0, 0]], [[0, 2], [0, 2]]) == pytest.approx(1 / 6)


def test_with_one_value_per_document_the_permutation_test_is_fishers():
    # permuting single-value documents permutes values: the count's distribution is hypergeometric
    member, control = [[1, 1]] * 4 + [[0, 1]] * 2, [[1, 1]] + [[0, 1]] * 5  # 924 arrangements, all
    fisher = fisher_exact([[4, 2], [1, 5]], alternative="greater").pvalue
    assert document_permutation_p_value(member, control) == pytest.approx(fisher, abs=1e-12)
    member, control = [[1, 1]] * 14 + [[0, 1]] * 26, [[1, 1]] * 5 + [[0, 1]] * 35  # 2,000 drawn
    fisher = fisher_exact([[14, 26], [5, 35]], alternative="greater").pvalue
    assert document_permutation_p_value(member, control) == pytest.approx(fisher, abs=0.01)


def test_the_document_test_keeps_its_level_where_fishers_does_not():
    # 25 documents of 16 values a side, the same rate, hits correlated 0.1 within a document
    rng = np.random.default_rng(9)
    totals = np.full(25, 16)
    member = beta_binomial_hits(rng, 1000, 25, 16, 0.2, 0.1)
    control = beta_binomial_hits(rng, 1000, 25, 16, 0.2, 0.1)
    documents = np.mean(document_permutation_p_values(member, totals, control, totals) < 0.05)
    fisher = np.mean(
        [
            fisher_exact([[a, 400 - a], [b, 400 - b]], alternative="greater").pvalue < 0.05
            for a, b in zip(member.sum(axis=1), control.sum(axis=1))
        ]
    )
    assert documents <= 0.065 and fisher >= 0.1, (documents, fisher)


def test_document_bounds_without_hits_count_documents_not_values():
    # no hit in 64 documents of 16 values: 1 - 0.025^(1/64), not the 1,024 values' 1 - 0.025^(1/1024)
    low, high = document_rate_bounds(np.zeros(64), np.full(64, 16))
    assert high[0] == pytest.approx(1 - 0.025 ** (1 / 64), abs=1e-12) and low[0] == 0.0
    assert high[0] == pytest.approx(0.0560, abs=1e-4)
    # hits in 3 documents of 10: Clopper-Pearson on 3 of 10 documents (the lower one per value of 4)
    low, high = document_rate_bounds([1, 2, 1, 0, 0, 0, 0, 0, 0, 0], np.full(10, 4))
    assert high[0] == pytest.approx(cp_hand(3, 10, "upper"), abs=1e-7)
    assert low[0] == pytest.approx(cp_hand(3, 10, "lower") / 4, abs=1e-7)
    # one document bounds nothing
    assert [b[0] for b in document_rate_bounds([3], [8])] == [0.0, 1.0]


def test_the_design_effect_takes_the_clustering_at_its_upper_bound():
    # 10 documents of 4 values, 16 hits (rate 0.4); by hand: between-document mean square
    # sum (h - 1.6)^2 / 4 / 9 = 31/90, within 6.5 / 30 = 13/60, mean size m0 = 4, so the ANOVA
    # correlation is (31/90 - 13/60) / (31/90 + 3 * 13/60) = 23/179
    hits, totals = np.array([2, 2, 2, 2, 2, 0, 0, 1, 1, 4]), np.full(10, 4)
    assert intraclass_correlations(hits, totals, np.zeros(10))[0] == pytest.approx(23 / 179, abs=1e-12)
    # at its 97.5% upper bound: times 9 / chi2_0.025(9), chi2_0.025(9) = 2.7004 (tables)
    upper = 23 / 179 * 9 / 2.7004
    (effect,) = design_effects(hits, totals, 0.975)
    assert effect == pytest.approx(1 + 3 * upper, abs=1e-4)  # 2.2847: 40 values count as 17.5
    low, high = document_rate_bounds(hits, totals)
    effective = 40 / effect
    assert high[0] == pytest.approx(beta.ppf(0.975, 0.4 * effective + 1, 0.6 * effective), abs=1e-9)
    assert low[0] == pytest.approx(beta.ppf(0.025, 0.4 * effective, 0.6 * effective + 1), abs=1e-9)
    assert high[0] > cp_hand(16, 40, "upper") + 0.05  # wider than the values taken as independent


def test_without_clustering_the_document_bound_is_clopper_pearson_over_the_values():
    # one value per document: nothing can cluster
    hits = np.array([1] * 9 + [0] * 21)
    low, high = document_rate_bounds(hits, np.ones(30))
    assert (low[0], high[0]) == pytest.approx((cp_hand(9, 30, "lower"), cp_hand(9, 30, "upper")), abs=1e-7)
    # one hit in each document of 4: no spread between documents, a correlation of 0
    low, high = document_rate_bounds(np.ones(10), np.full(10, 4))
    assert design_effects(np.ones(10), np.full(10, 4), 0.975)[0] == 1.0
    assert (low[0], high[0]) == pytest.approx((cp_hand(10, 40, "lower"), cp_hand(10, 40, "upper")), abs=1e-7)


def test_document_bounds_cover_where_value_bounds_do_not():
    # 25 documents of 16 values at rate 0.2 against a control that never hits, correlation 0.1
    rng = np.random.default_rng(10)
    totals = np.full(25, 16)
    hits = beta_binomial_hits(rng, 3000, 25, 16, 0.2, 0.1)
    _, document_high = document_rate_bounds(hits, totals)
    assert np.mean(document_high >= 0.2) >= 0.95  # the excess's upper bound, the control's lower being 0
    value_high = np.array([clopper_pearson(int(k), 400, 0.975, "upper") for k in hits.sum(axis=1)])
    assert np.mean(value_high >= 0.2) < 0.93


def test_the_within_document_correlation_is_estimated():
    rng = np.random.default_rng(11)
    totals = np.full(600, 16)
    correlated = beta_binomial_hits(rng, 1, 600, 16, 0.3, 0.1)[0]
    independent = beta_binomial_hits(rng, 1, 600, 16, 0.3, 0.0)[0]
    assert within_document_correlation([(correlated, totals)]) == pytest.approx(0.1, abs=0.03)
    assert within_document_correlation([(independent, totals)]) < 0.02
    # each side centred on its own rate: a difference between the sides is not correlation
    full, empty = (np.full(20, 8), np.full(20, 8)), (np.zeros(20), np.full(20, 8))
    assert within_document_correlation([full, empty]) == 0


def test_the_simulated_power_of_single_value_documents_is_fishers():
    power = cluster_power(0.3, 0.1, 0.0, np.ones(30, int), np.ones(30, int))
    assert power == pytest.approx(fisher_power(0.4, 0.1, 30, 30), abs=0.05)


def shared_draw_hits(rng, draws: int, totals: np.ndarray, rate: float, correlation: float) -> np.ndarray:
    """The power model's corpora, drawn anew: a document's items share one draw with probability
    sqrt(correlation) and are independent otherwise."""
    shape = (draws, len(totals))
    shared = rng.binomial(np.broadcast_to(totals, shape), math.sqrt(correlation))
    return (rng.random(shape) < rate) * shared + rng.binomial(totals - shared, rate)


def test_the_detectable_document_excess_has_80_percent_power_when_the_test_is_run():
    member = [[h, 8] for h in (0, 1, 0, 2, 1, 0, 0, 1, 3, 0, 1, 0, 0, 2, 0, 1, 0, 0, 1, 0)]
    control = [[h, 8] for h in (0, 1, 0, 0, 2, 0, 1, 0)]
    detectable = detectable_cluster_excess(member, control)
    assert 0.05 < detectable < 0.4
    member_totals, control_totals = np.full(20, 8), np.full(8, 8)
    member_hits, control_hits = np.array([h for h, _ in member]), np.array([h for h, _ in control])
    correlation = within_document_correlation([(member_hits, member_totals), (control_hits, control_totals)])
    control_rate = 4 / 64
    rng = np.random.default_rng(13)  # not the power search's draws; the test's own 2,000 arrangements

    def power(excess: float) -> float:
        hits = shared_draw_hits(rng, 2000, member_totals, control_rate + excess, correlation)
        held = shared_draw_hits(rng, 2000, control_totals, control_rate, correlation)
        p_values = document_permutation_p_values(hits, member_totals, held, control_totals)
        return float(np.mean(p_values < 0.05))

    assert power(detectable) >= 0.76, power(detectable)
    assert power(detectable - 0.03) < 0.8


def test_excess_of_takes_the_document_design_where_the_counts_keep_documents():
    counts = {"member_hits": 5, "members": 12, "control_hits": 1, "controls": 8}
    assert excess_of(counts, "unpaired").inference == FISHER
    documents = {
        **counts,
        "member_documents": [[2, 4], [3, 4], [0, 4]],
        "control_documents": [[1, 4], [0, 4]],
    }
    excess = excess_of(documents, "unpaired")
    assert excess.inference == DOCUMENT_PERMUTATION and excess.excess == pytest.approx(5 / 12 - 1 / 8)
    assert (excess.members, excess.controls) == (12, 8)
    with pytest.raises(ValueError, match="per-document counts"):
        excess_of({**documents, "members": 13}, "unpaired")


# --- AUCs --------------------------------------------------------------------------------------------


def test_the_detectable_auc_has_80_percent_power_at_the_level_the_tables_call_significant():
    members = 48
    auc = detectable_auc(members, members)
    # the interval's half-width as the audit widens it: z sqrt(n / (n - 1)) t_{n-1} / z, then z_0.8
    widened = math.sqrt(members / (members - 1)) * t.ppf(0.975, members - 1)
    expected = 0.5 + (widened + norm.ppf(0.8)) * math.sqrt((2 * members + 1) / (12 * members**2))
    assert auc == pytest.approx(expected, abs=1e-12) and 0.668 < auc < 0.672
    label = np.array([True] * members + [False] * members)
    rng = np.random.default_rng(12)
    shift = math.sqrt(2) * norm.ppf(auc)  # binormal: AUC = Phi(shift / sqrt 2)
    draw = [np.concatenate([rng.normal(shift, 1, members), rng.normal(0, 1, members)]) for _ in range(300)]
    # the audit's own bootstrap (roc_summary), 400 resamples
    power = np.mean(
        [roc_summary(label, score, (), 400, seed).auc_low > 0.5 for seed, score in enumerate(draw)]
    )
    # 0.8 within two standard errors of 300 simulated audits (0.023 each)
    assert abs(power - 0.8) < 2 * math.sqrt(0.8 * 0.2 / 300), power


# --- conclusions, the DP null, the released-text epsilon ---------------------------------------------


def test_conclusions():
    assert conclusion(True, 0.3, 0.05) == LEAKS
    assert conclusion(False, 0.04, 0.05) == "no leak detected (could detect >= 0.04)"
    assert conclusion(False, 0.3, 0.05) == INCONCLUSIVE
    assert conclusion(False, math.inf, 0.05) == INCONCLUSIVE  # no excess reaches 80% power
    # underpowered at the threshold, but the bound the gate reads is under it: no leak, and why
    assert conclusion(False, 0.3, 0.05, upper=0.03) == "no leak detected (bounded <= 0.03)"
    assert conclusion(False, 0.3, 0.05, upper=0.06) == INCONCLUSIVE
    assert conclusion(False, 0.3, 0.05, upper=0.05) == "no leak detected (bounded <= 0.05)"  # at: passes
    record = excess_record("exact", paired_excess(10, 0, 10, 0, 10), 0.05)
    assert record["leak_exact_conclusion"] == LEAKS and record["leak_exact_design"] == "paired"
    assert record["leak_exact_inference"] == MCNEMAR


def test_the_dp_null_holds_for_a_large_epsilon_and_rejects_a_copy_at_a_small_one():
    assert dp_null_p_value(20, 20, 0, 20, epsilon=8.0, delta=1e-5) == 1.0  # e^8 x anything >= 1
    assert dp_null_p_value(20, 20, 0, 20, epsilon=0.1, delta=1e-5) < 1e-6


def test_the_controls_the_dp_null_needs():
    # 24 of 24 members hit: p = a^24 < 0.05 needs a < 0.05^(1/24) = 0.8826 for a = e^8 CP_hi(0 of n)
    # + 1e-5, CP_hi(0 of n) = 1 - 0.025^(1/n): n > ln 0.025 / ln(1 - (0.8826 - 1e-5) / e^8) = 12456.x
    needed = dp_null_controls_needed(24, 8.0, 1e-5)
    assert needed == 12457
    assert dp_null_p_value(24, 24, 0, needed, 8.0, 1e-5) < 0.05
    assert dp_null_p_value(24, 24, 0, needed - 1, 8.0, 1e-5) >= 0.05
    # with many members the condition tends to "the allowed rate under 1": about 11,000 at epsilon 8
    assert dp_null_controls_needed(10**6, 8.0, 1e-5) == 10995
    # Aug-PE's epsilon 4 with 1,100 members: 201 controls would do, if none of them hit
    assert dp_null_controls_needed(1100, 4.0, 1e-5) == 201
    assert dp_null_testable(1100, 400, 4.0, 1e-5) and not dp_null_testable(24, 24, 8.0, 1e-5)
    assert dp_null_controls_needed(1, 1.0, 0.06) is None  # delta alone allows the one member's hit


def test_the_guarantee_record_says_when_the_dp_null_cannot_be_tested():
    copying = {
        "measures": {"any_identifier": {"member_hits": 24, "members": 24, "control_hits": 0, "controls": 24}}
    }
    loose = guarantee_record(copying, Guarantee(epsilon=8.0, delta=1e-5))
    assert not loose["dp_null_testable"] and loose["dp_null_controls_needed"] == 12457
    assert loose["dp_null_p_value"] == 1.0 and not loose["dp_claim_rejected"]
    tight = guarantee_record(copying, Guarantee(epsilon=0.1, delta=1e-5))
    assert tight["dp_null_testable"] and tight["dp_null_controls_needed"] <= 24 and tight["dp_claim_rejected"]


def test_the_released_text_epsilon_is_zero_without_excess_and_positive_for_a_copy():
    assert released_text_epsilon(5, 24, 5, 24, delta=1e-5) == 0.0
    assert released_text_epsilon(24, 24, 0, 24, delta=1e-5) > 1.0


def test_bad_sizes_stop():
    with pytest.raises(ValueError, match="no generations"):
        paired_excess(0, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="no values"):
        unpaired_excess(0, 0, 0, 3)
    with pytest.raises(ValueError, match="no values"):
        counts = {"members": 0, "controls": 3, "member_documents": [], "control_documents": [[0, 3]]}
        excess_of(counts, "unpaired")
    with pytest.raises(ValueError, match="held <= total"):
        document_permutation_p_value([[3, 2]], [[0, 2]])


def test_the_permutation_test_holds_its_level_when_one_side_has_smaller_documents():
    # the demo's shape: fine-tuning documents hold fewer values than held-out ones. Under the null (the
    # same rate per value on both sides) a test that swapped documents of any size would call the smaller
    # side's few hits a leak (p 0.016 for 3 hits against none); swapping documents of one size only does not
    rng = np.random.default_rng(7)
    member_totals = np.array([8] * 24 + [10] * 24 + [12] * 16)
    control_totals = np.array([8] * 4 + [10] * 8 + [12] * 12)
    draws = 400
    member = rng.binomial(member_totals, 0.01, size=(draws, len(member_totals)))
    control = rng.binomial(control_totals, 0.01, size=(draws, len(control_totals)))
    false_positives = np.mean(
        document_permutation_p_values(member, member_totals, control, control_totals) < 0.05
    )
    assert false_positives <= 0.07  # nominal 0.05; 400 draws put 0.07 about 2 standard errors above it
    three_small = np.zeros(len(member_totals), dtype=int)
    three_small[[0, 1, 24]] = 1  # three hits in small fine-tuning documents, none held out
    [p_value] = document_permutation_p_values(
        three_small, member_totals, np.zeros(len(control_totals), dtype=int), control_totals
    )
    assert p_value > 0.2
