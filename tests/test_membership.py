"""Membership inference: the attacks, the ROC summary, and known answers on tiny trained adapters."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from plainsight.audit.membership import (
    ScoringSettings,
    membership_scores,
    membership_texts,
    min_k_mean,
    zlib_bytes,
)
from plainsight.audit.roc import (
    CONTROL_MODEL,
    attack_scores,
    balanced_sets,
    control_auc_variance,
    excess_over_resampled_control,
    left_out_counts,
    paired_auc_difference,
    roc_summary,
    row_aucs,
    text_counts,
    weighted_aucs,
    weighted_tprs,
)
from plainsight.errors import InputError
from plainsight.models import load_model
from plainsight.training.dp import DPSettings, DPTrainingSettings, dp_adapter_model, train_dp
from plainsight.training.examples import training_examples
from plainsight.training.loop import TrainingSettings, fit
from plainsight.training.objectives import lm_loss
from plainsight.training.prefix import prefix_model, save_adapter

# --- pure functions ------------------------------------------------------------------------------


def test_random_scores_give_an_auc_of_one_half():
    rng = np.random.default_rng(7)
    member = np.repeat([True, False], 2000)
    summary = roc_summary(member, rng.normal(size=4000), resamples=20)
    assert summary.auc == pytest.approx(0.5, abs=0.03)  # 3 standard errors
    assert summary.tpr[0.1] == pytest.approx(0.1, abs=0.03)
    assert summary.members == summary.non_members == 2000


def test_the_bootstrap_interval_of_random_scores_covers_one_half_about_95_percent_of_the_time():
    rng = np.random.default_rng(3)
    member = np.repeat([True, False], 60)
    covered = [
        (s.auc_low <= 0.5 <= s.auc_high)
        for s in (roc_summary(member, rng.normal(size=120), resamples=100, seed=run) for run in range(40))
    ]
    assert sum(covered) >= 34  # 38 expected; 34 or fewer has probability below 2%


def test_separated_scores_give_an_auc_of_one_and_full_tpr_at_every_bound():
    member = np.array([True] * 5 + [False] * 5)
    score = np.arange(10.0)[::-1]  # every member above every non-member
    summary = roc_summary(member, score, (0.0, 0.01, 0.1, 0.5), resamples=50)
    assert (summary.auc, summary.auc_low, summary.auc_high) == (1.0, 1.0, 1.0)
    for values in (summary.tpr, summary.tpr_low, summary.tpr_high):
        assert values == {0.0: 1.0, 0.01: 1.0, 0.1: 1.0, 0.5: 1.0}
    assert roc_summary(member, -score, resamples=0).auc == 0.0


def test_identical_scores_give_an_auc_of_one_half_and_no_tpr_below_an_fpr_of_one():
    # one threshold flags every text: (0, 0), then (1, 1)
    summary = roc_summary([True] * 4 + [False] * 3, [2.0] * 7, (0.1, 1.0), resamples=40)
    assert (summary.auc, summary.auc_low, summary.auc_high) == (0.5, 0.5, 0.5)
    assert summary.tpr == {0.1: 0.0, 1.0: 1.0} and summary.tpr_high == {0.1: 0.0, 1.0: 1.0}


def test_tpr_at_fpr_of_a_hand_made_ranking():
    # scores high to low: M M N M N N ; at FPR 0 two of three members are found, at FPR 1/3 all three
    member = np.array([True, True, False, True, False, False])
    score = np.array([6, 5, 4, 3, 2, 1.0])
    summary = roc_summary(member, score, (0.01, 1 / 3), resamples=0)
    assert summary.tpr == pytest.approx({0.01: 2 / 3, 1 / 3: 1.0})
    assert summary.auc == pytest.approx(8 / 9)  # 8 of the 9 member/non-member pairs are ranked right
    assert math.isnan(summary.auc_low) and math.isnan(summary.tpr_high[0.01])  # no draws, no interval


def test_the_tpr_within_an_fpr_bound_is_the_highest_over_every_threshold():
    from sklearn.metrics import roc_curve

    # each score holds one member and one non-member: thresholds 4, 3, 2, 1 give (FPR, TPR) = (1/4, 1/4),
    # (2/4, 2/4), (3/4, 3/4), (1, 1); flagging the scores of 3 and more finds half the members at FPR 1/2
    member = np.array([True, False] * 4)
    score = np.array([4, 4, 3, 3, 2, 2, 1, 1.0])
    summary = roc_summary(member, score, (0.5,), resamples=0)
    assert summary.tpr == {0.5: 0.5} and summary.auc == 0.5
    # scikit-learn's roc_curve drops the collinear (2/4, 2/4) and (3/4, 3/4) by default: 1/4 is too low
    fpr, tpr, _ = roc_curve(member, score)
    assert fpr.tolist() == [0.0, 0.25, 1.0] and tpr[fpr <= 0.5].max() == 0.25
    fpr, tpr, _ = roc_curve(member, score, drop_intermediate=False)
    assert tpr[fpr <= 0.5].max() == 0.5


def per_draw_roc(
    member: np.ndarray, score: np.ndarray, counts: np.ndarray, bound: float
) -> tuple[float, float]:
    """(AUC, TPR at FPR <= `bound`) of one draw, straight from scikit-learn's ROC of the texts it drew
    (each repeated as often as `counts` says), every threshold kept."""
    from sklearn.metrics import auc, roc_curve

    drawn = np.repeat(np.arange(len(member)), counts.astype(int))
    fpr, tpr, _ = roc_curve(member[drawn], score[drawn], drop_intermediate=False)
    return float(auc(fpr, tpr)), float(tpr[fpr <= bound].max())


def test_each_draws_auc_and_tpr_are_those_of_the_roc_of_the_texts_it_drew():
    member = np.array([True, False, True, True, False, True, False, True, False])
    score = np.array([0.9, 0.5, 0.5, 0.2, 0.7, 0.5, 0.1, 0.8, 0.5])  # ties across the classes
    counts = text_counts(member, 60, seed=4)
    assert counts[0].tolist() == [1.0] * 9  # row 0: the texts as they are
    assert (counts[1:, member].sum(axis=1) == 5).all() and (counts[1:, ~member].sum(axis=1) == 4).all()
    aucs, tprs = weighted_aucs(member, score, counts), weighted_tprs(member, score, counts, (0.25, 0.5))
    direct = np.array([[per_draw_roc(member, score, row, bound) for bound in (0.25, 0.5)] for row in counts])
    assert aucs == pytest.approx(direct[:, 0, 0], abs=1e-12)
    assert tprs == pytest.approx(direct[:, :, 1], abs=1e-12)
    assert len(set(aucs)) > 5 and len(set(tprs[:, 0])) > 3  # the draws differ
    # the summary: row 0, and the BCa bounds of the other rows (Efron's formula written out here: their
    # median bias against row 0 and the acceleration of the leave-one-text-out values of each side),
    # moved outward by the small-sample factor of the smaller side's 4 units, sqrt(4 / 3) t_3 / z
    summary = roc_summary(member, score, (0.25, 0.5), resamples=60, seed=4)
    assert summary.auc == pytest.approx(direct[0, 0, 0], abs=1e-12)
    assert summary.tpr == pytest.approx({0.25: direct[0, 0, 1], 0.5: direct[0, 1, 1]}, abs=1e-12)
    widen = math.sqrt(4 / 3) * stats.t.ppf(0.975, 3) / stats.norm.ppf(0.975) - 1
    sides = (np.flatnonzero(member), np.flatnonzero(~member))
    left_out = [
        np.array(
            [
                per_draw_roc(member, score, np.arange(9) != text, bound)
                for text in side
                for bound in (0.25, 0.5)
            ]
        ).reshape(len(side), 2, 2)
        for side in sides
    ]

    def bca(observed, draws, jackknife):
        rounded, at = np.round(draws, 9), round(observed, 9)  # ties that scikit-learn's sums rounded apart
        bias = stats.norm.ppf((np.sum(rounded < at) + 0.5 * np.sum(rounded == at)) / len(draws))
        influence = [(len(v) - 1) * (v.mean() - v) / len(v) for v in jackknife]
        accelerated = sum((i**3).sum() for i in influence) / (6 * sum((i**2).sum() for i in influence) ** 1.5)
        z = stats.norm.ppf([0.025, 0.975])
        low, high = np.percentile(
            draws, 100 * stats.norm.cdf(bias + (bias + z) / (1 - accelerated * (bias + z)))
        )
        return low - widen * abs(observed - low), high + widen * abs(high - observed)

    assert (summary.auc_low, summary.auc_high) == pytest.approx(
        bca(direct[0, 0, 0], direct[1:, 0, 0], [v[:, 0, 0] for v in left_out]), abs=1e-12
    )
    tpr = {
        bound: bca(direct[0, i, 1], direct[1:, i, 1], [v[:, i, 1] for v in left_out])
        for i, bound in enumerate((0.25, 0.5))
    }
    assert summary.tpr_low == pytest.approx({bound: pair[0] for bound, pair in tpr.items()}, abs=1e-12)
    assert summary.tpr_high == pytest.approx({bound: pair[1] for bound, pair in tpr.items()}, abs=1e-12)
    assert summary.auc_high - summary.auc_low > 0.1


def test_the_bootstrap_intervals_are_fixed_by_the_seed():
    rng = np.random.default_rng(9)
    member, score, control = np.repeat([True, False], 30), rng.normal(size=60), rng.normal(size=60)
    assert roc_summary(member, score, seed=3) == roc_summary(member, score, seed=3)
    assert roc_summary(member, score, seed=3).auc_low != roc_summary(member, score, seed=4).auc_low
    paired = paired_auc_difference(member, score, control, seed=3)
    assert paired == paired_auc_difference(member, score, control, seed=3)
    assert paired[1] != paired_auc_difference(member, score, control, seed=4)[1]


def test_with_one_text_per_unit_the_cluster_bootstrap_draws_as_the_text_bootstrap():
    rng = np.random.default_rng(5)
    member, score = rng.random(40) < 0.5, rng.normal(size=40)
    units = [f"doc-{number}" for number in range(40)]
    assert np.array_equal(text_counts(member, 50, 2, units), text_counts(member, 50, 2))
    assert roc_summary(member, score, (0.1,), 50, 2, units) == roc_summary(member, score, (0.1,), 50, 2)


def test_a_drawn_unit_brings_all_of_its_texts():
    member = np.array([True, True, True, False, False, False])
    units = ["a", "a", "b", "c", "c", "c"]  # member units a (2 texts), b; non-member unit c (3 texts)
    counts = text_counts(member, 40, 1, units)
    assert (counts[:, 0] == counts[:, 1]).all() and (counts[:, 3] == counts[:, 4]).all()
    assert (counts[1:, 3:] == 1).all()  # one non-member unit: every draw holds it once
    assert set(counts[1:, 0] + counts[1:, 2]) == {2.0}  # two member units drawn per draw
    assert set(counts[1:, 2]) == {0.0, 1.0, 2.0}
    with pytest.raises(ValueError, match="5 units for 6 texts"):
        text_counts(member, 1, 1, units[:5])


def test_separated_units_give_one_and_duplicated_texts_in_their_unit_change_nothing():
    member, score = np.repeat([True, False], 3), np.array([3.0, 4.0, 5.0, 0.0, 1.0, 2.0])
    units = ["a", "a", "b", "c", "d", "d"]
    separated = roc_summary(member, score, (), 100, 0, units)
    assert (separated.auc, separated.auc_low, separated.auc_high) == (1.0, 1.0, 1.0)
    # every text twice, both copies in its unit: each draw counts the copies together, so the AUCs of
    # the draws are those of the texts once; taken as texts of their own, the copies narrow the interval
    rng = np.random.default_rng(8)
    member, score = np.repeat([True, False], 30), rng.normal(size=60) + np.repeat([0.5, 0.0], 30)
    units = np.arange(60)
    once = roc_summary(member, score, (), 400, 3, units)
    twice = roc_summary(np.repeat(member, 2), np.repeat(score, 2), (), 400, 3, np.repeat(units, 2))
    assert (twice.auc, twice.auc_low, twice.auc_high) == pytest.approx(
        (once.auc, once.auc_low, once.auc_high), abs=1e-12
    )
    as_texts = roc_summary(np.repeat(member, 2), np.repeat(score, 2), (), 400, 3)
    assert as_texts.auc_high - as_texts.auc_low < 0.85 * (once.auc_high - once.auc_low)  # about 1/sqrt(2)
    assert paired_auc_difference(
        np.repeat(member, 2), np.repeat(score, 2), np.zeros(120), 400, 3, np.repeat(units, 2)
    ) == pytest.approx(paired_auc_difference(member, score, np.zeros(60), 400, 3, units), abs=1e-12)


def test_row_aucs_count_each_pair_as_often_as_its_texts_ties_half():
    member, score = np.array([True, True, False, False]), np.array([2.0, 1.0, 1.0, 0.0])
    # pairs (2, 1), (2, 0), (1, 1) tied, (1, 0): 3.5 of 4; the first member twice: (2 + 2 + 0.5 + 1) of
    # 3 x 2 pairs; both rows at once
    weights = np.array([[1.0, 1.0, 1.0, 1.0], [2.0, 1.0, 1.0, 1.0]])
    assert row_aucs(member, np.tile(score, (2, 1)), weights) == pytest.approx([0.875, 5.5 / 6], abs=1e-12)
    # rows of their own scores, ties across the classes and infinite scores: each row's AUC as
    # `weighted_aucs` gives it for that score alone
    rng = np.random.default_rng(4)
    member = rng.random(80) < 0.5
    scores = rng.integers(0, 6, (30, 80)).astype(float)
    scores[:, :3] = np.inf
    counts = text_counts(member, 29, 2)
    assert row_aucs(member, scores, counts) == pytest.approx(
        [weighted_aucs(member, row, weights[None])[0] for row, weights in zip(scores, counts)], abs=1e-12
    )
    assert row_aucs(member, np.empty((0, 80)), np.empty((0, 80))).shape == (0,)


def test_the_jackknife_leaves_out_each_unit_of_each_side_once():
    member = np.array([True, True, True, False, False, False])
    units = ["a", "a", "b", "c", "c", "d"]
    rows, strata = left_out_counts(member, units)
    # members' units a, b, then non-members' c, d: each row counts every text once but its unit's
    assert rows.tolist() == [
        [0, 0, 1, 1, 1, 1],
        [1, 1, 0, 1, 1, 1],
        [1, 1, 1, 0, 0, 1],
        [1, 1, 1, 1, 1, 0],
    ]
    assert [side.tolist() for side in strata] == [[0, 1], [2, 3]]
    # a side of one unit has nothing to leave out: leaving it would leave no ROC
    rows, strata = left_out_counts(member, ["a", "a", "b", "c", "c", "c"])
    assert len(rows) == 2 and [side.tolist() for side in strata] == [[0, 1], []]


def test_the_control_auc_variance_is_the_delete_half_jackknife_over_generations():
    member = np.array([True, False])
    # two generations: a subset keeps one; generation 0 ranks the member first (AUC 1), generation 1 last
    # (AUC 0), so the subsets' AUCs are a fair coin's, variance 1/4, times (2 - 1) / 1
    pairs = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert control_auc_variance(member, pairs, 4000, 5) == pytest.approx(0.25, abs=0.002)
    assert control_auc_variance(member, pairs, 4000, 5) == control_auc_variance(member, pairs, 4000, 5)
    # five generations, subsets of three: the member's highest is 2 where generation 0 is kept (else 0),
    # the non-member's 3 where generation 4 is (else 1), so the member leads in the 3 of the 10 subsets
    # that keep 0 and not 4: the variance of a coin at 0.3, 0.21, times (5 - 2) / 2
    pairs = np.array([[2.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 3.0]])
    assert control_auc_variance(member, pairs, 20000, 1) == pytest.approx(1.5 * 0.21, abs=0.01)
    # nothing to leave out, or no subset: no variance
    assert control_auc_variance(member, pairs[:, :1], 100) == 0.0
    assert control_auc_variance(member, pairs, 0) == 0.0
    # generations that all rank the texts alike add nothing
    assert control_auc_variance(member, np.array([[2.0, 3.0, 4.0], [1.0, 1.0, 1.0]]), 300) == 0.0


def test_the_control_corpus_variance_widens_the_excess_interval():
    rng = np.random.default_rng(11)
    member, units = np.repeat([True, False], 60), np.repeat(np.arange(60), 2)
    pairs = rng.normal(size=(120, 30))  # 120 texts against 30 generations, nothing told apart
    score = pairs.max(axis=1)
    # a control of one generation has no variance of its own: the paired difference, draw for draw
    single = pairs[:, :1]
    assert excess_over_resampled_control(member, score, single, 400, 3, units) == pytest.approx(
        paired_auc_difference(member, score, single[:, 0], 400, 3, units), abs=1e-12
    )
    # two identical corpora: without the control's variance the excess is 0 in every draw; with it the
    # interval covers 0 about its middle (a resample's AUC falls either way)
    assert paired_auc_difference(member, score, score, 400, 3, units) == (0.0, 0.0, 0.0)
    excess, low, high = excess_over_resampled_control(member, score, pairs, 400, 3, units)
    assert excess == 0.0 and low < -0.05 and high > 0.05
    assert abs(low + high) / 2 < 0.25 * (high - low)
    # another control: wider than the paired difference on the same draws of the texts
    other = rng.normal(size=(120, 30))
    _, paired_low, paired_high = paired_auc_difference(member, score, other.max(axis=1), 400, 3, units)
    wide = excess_over_resampled_control(member, score, other, 400, 3, units)
    assert wide[0] == pytest.approx(
        roc_summary(member, score, resamples=0).auc - roc_summary(member, other.max(axis=1), resamples=0).auc,
        abs=1e-12,
    )
    assert wide[2] - wide[1] > paired_high - paired_low + 0.01
    assert wide == excess_over_resampled_control(member, score, other, 400, 3, units)
    with pytest.raises(ValueError, match=r"control pair scores of shape \(119, 30\) for 120 texts"):
        excess_over_resampled_control(member, score, other[:119], 400, 3, units)


def test_roc_needs_both_classes_and_a_ranked_score_per_text():
    with pytest.raises(ValueError, match="members and non-members: 2 and 0"):
        roc_summary([True, True], [0.1, 0.2])
    with pytest.raises(ValueError, match="members and non-members: 0 and 2"):
        roc_summary([False, False], [0.1, 0.2], resamples=0)
    with pytest.raises(ValueError, match="members and non-members: 0 and 2"):
        paired_auc_difference([False, False], [0.1, 0.2], [0.2, 0.1])
    with pytest.raises(ValueError, match="1 scores are NaN"):
        roc_summary([True, False], [0.1, math.nan])
    with pytest.raises(ValueError, match="3 scores for 2 texts"):
        paired_auc_difference([True, False], [0.1, 0.2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"FPR bounds lie in \[0, 1\]: \[0.1, -0.01\]"):
        roc_summary([True, False], [0.1, 0.2], (0.1, -0.01))


def test_zlib_bytes_is_lower_for_repetitive_text():
    repetitive = "the court " * 40
    rng = random.Random(1)
    varied = " ".join("".join(rng.choice("abcdefghij") for _ in range(3)) for _ in range(100))
    assert zlib_bytes(repetitive) < zlib_bytes(varied)
    assert zlib_bytes("") >= 1


def test_min_k_mean_averages_the_least_likely_tokens():
    log_probs = np.array([-0.1, -5.0, -0.2, -3.0, -0.3])
    assert min_k_mean(log_probs, 0.2) == -5.0  # ceil(0.2 x 5) = 1 token
    assert min_k_mean(log_probs, 0.4) == pytest.approx(-4.0)
    assert math.isnan(min_k_mean(np.array([]), 0.2))


def test_attack_scores_are_oriented_so_higher_means_member():
    target = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c"],
            "segment": [0, 0, 0],
            "member": [True, False, True],
            "tokens": [10, 10, 0],
            "nll_mean": [1.0, 3.0, float("nan")],
            "nll_sum": [10.0, 30.0, 0.0],
            "zlib_bytes": [5, 10, 1],
            "min_k": [-2.0, -6.0, float("nan")],
        }
    )
    base = pd.DataFrame(
        {"doc_id": ["b", "a", "c"], "segment": [0, 0, 0], "nll_mean": [3.5, 2.0, float("nan")]}
    )
    scores = attack_scores(target, base)  # "c" had no document token within max_length: left out
    assert scores["loss"].tolist() == [-1.0, -3.0]
    assert scores["zlib"].tolist() == [-2.0, -3.0]
    assert scores["min_k"].tolist() == [-2.0, -6.0]
    assert scores["reference"].tolist() == [1.0, 0.5]
    with pytest.raises(ValueError, match="did not score"):
        attack_scores(target, base.iloc[:2])


def test_balanced_sets_subsample_the_larger_set_with_the_seed():
    members = [(f"m{i}", 0) for i in range(10)]
    held_out = [(f"h{i}", 1) for i in range(4)]
    chosen, others = balanced_sets(members, held_out, seed=1)
    assert len(chosen) == len(others) == 4 and set(chosen) <= set(members) and others == sorted(held_out)
    assert balanced_sets(members, held_out, seed=1) == (chosen, others)
    assert balanced_sets(members, held_out, seed=2)[0] != chosen


# --- known answers on tiny adapters ----------------------------------------------------------------

FIRST = ["Cengiz", "Henrik", "Nina", "Polat", "Maria", "Ahmet", "Olga", "Jan", "Elena", "Tomas"]
LAST = ["Polat", "Hasslund", "Holst", "Yilmaz", "Kowalski", "Novak", "Petrov", "Larsen", "Demir"]
CITIES = ["Ankara", "Copenhagen", "Warsaw", "Istanbul", "Prague", "Izmir", "Oslo"]


def court_document(rng: random.Random) -> str:
    return (
        f"The applicant, Mr {rng.choice(FIRST)} {rng.choice(LAST)}, was born in {rng.randint(1950, 2010)} "
        f"and lives in {rng.choice(CITIES)}. The {rng.choice(CITIES)} Assize Court sentenced Mr "
        f"{rng.choice(LAST)} to {rng.randint(2, 14)} years' imprisonment."
    )


def tiny_corpus(members: int, held_out: int) -> tuple[pd.DataFrame, dict]:
    rng = random.Random(11)
    rows, texts = [], {}
    for index in range(members + held_out):
        key = (f"d{index}", 0)
        texts[key] = court_document(rng)
        rows.append(
            {
                "doc_id": key[0],
                "segment": 0,
                "split": "train" if index < members else "test",
                "code": "",
                "entities": [],
            }
        )
    return pd.DataFrame(rows), texts


SETTINGS = ScoringSettings(max_length=64, batch_size=4)


def auc_of(scores: pd.DataFrame, model: str, attack: str) -> float:
    attacked = attack_scores(scores[scores["model"] == model], scores[scores["model"] == CONTROL_MODEL])
    return roc_summary(attacked["member"], attacked[attack], resamples=0).auc


def loss_auc(scores: pd.DataFrame, model: str) -> float:
    return auc_of(scores, model, "loss")


def test_an_over_trained_adapter_gives_its_documents_away(learning_model_dir, tmp_path):
    """A 32-token prefix trained 240 steps on 16 documents memorises them: under it their mean NLL is
    2.82 nats a token against 3.87 for 16 held-out documents of the same template (6.94 and 7.03
    under the base model), and the loss and reference attacks reach AUCs of 0.992 and 0.988."""
    codes, texts = tiny_corpus(16, 16)
    model, tokenizer = load_model(learning_model_dir)
    adapter = prefix_model(model, tokenizer, 32, "The Court held a hearing.")
    settings = TrainingSettings(epochs=60, learning_rate=5e-2, batch_size=4, max_length=SETTINGS.max_length)
    examples = training_examples(codes, texts, tokenizer, SETTINGS.max_length)
    fit(adapter, examples, settings, seed=1, pad_token_id=tokenizer.pad_token_id)
    save_adapter(adapter, tmp_path / "ft", {"training.json": {"method": "ft"}})
    base, tokenizer = load_model(learning_model_dir)
    scores = membership_scores(base, tokenizer, {"ft": tmp_path / "ft"}, codes, texts, SETTINGS, seed=1)
    assert len(scores) == 2 * 32 and set(scores["model"]) == {CONTROL_MODEL, "ft"}
    ft = scores[scores["model"] == "ft"]
    # memorised: the members' loss is far below the held-out documents' (by 1.05 nats here)
    assert ft[ft["member"]]["nll_mean"].mean() < ft[~ft["member"]]["nll_mean"].mean() - 0.5
    assert loss_auc(scores, "ft") >= 0.85
    assert auc_of(scores, "ft", "reference") >= 0.85
    assert abs(loss_auc(scores, CONTROL_MODEL) - 0.5) < 0.35  # the base model never saw them (0.656)


def test_a_dp_adapter_with_a_large_noise_multiplier_stays_near_one_half(learning_model_dir, tmp_path):
    codes, texts = tiny_corpus(32, 32)
    model, tokenizer = load_model(learning_model_dir)
    adapter = dp_adapter_model(model, 8, tokenizer, "The Court held a hearing.", projection_hidden=64)
    result = train_dp(
        adapter,
        training_examples(codes, texts, tokenizer, SETTINGS.max_length),
        tokenizer.pad_token_id,
        settings=DPTrainingSettings(
            batch_size=4, epochs=40, learning_rate=5e-2, privacy=DPSettings(epsilon=0.5, accountant="rdp")
        ),
        seed=1,
        loss_fn=lm_loss,
    )
    assert result["noise_multiplier"] > 5
    save_adapter(adapter, tmp_path / "dpsgd", {"training.json": {"method": "dpsgd"}})
    base, tokenizer = load_model(learning_model_dir)
    scores = membership_scores(base, tokenizer, {"dpsgd": tmp_path / "dpsgd"}, codes, texts, SETTINGS, seed=1)
    dp, control = (scores[scores["model"] == name] for name in ("dpsgd", CONTROL_MODEL))
    assert not np.allclose(dp["nll_mean"], control["nll_mean"])  # the noisy adapter did move
    for attack in ("loss", "reference"):
        assert abs(auc_of(scores, "dpsgd", attack) - 0.5) < 0.2, attack  # 2.7 standard errors of 32 vs 32


def test_loading_an_adapter_leaves_the_base_models_scores(tiny_model_dir, tmp_path):
    codes, texts = tiny_corpus(4, 4)
    model, tokenizer = load_model(tiny_model_dir)
    adapter = prefix_model(model, tokenizer, 4, "The Court held a hearing.")
    with torch.no_grad():
        for parameter in adapter.parameters():
            if parameter.requires_grad:
                parameter.add_(0.5)
    save_adapter(adapter, tmp_path / "ft", {"training.json": {}})
    base, tokenizer = load_model(tiny_model_dir)
    once = membership_scores(base, tokenizer, {}, codes, texts, SETTINGS, seed=1)
    both = membership_scores(
        base, tokenizer, {"ft": tmp_path / "ft", "ft_mask": tmp_path / "ft"}, codes, texts, SETTINGS, seed=1
    )
    pd.testing.assert_frame_equal(once, both[both["model"] == CONTROL_MODEL].reset_index(drop=True))
    ft, again = (both[both["model"] == name].reset_index(drop=True) for name in ("ft", "ft_mask"))
    assert not np.allclose(ft["nll_mean"], once["nll_mean"])  # the adapter changes the scores
    np.testing.assert_allclose(ft["nll_mean"], again["nll_mean"])  # and loading it twice is the same
    assert (once["tokens"] > 0).all() and (once["tokens"] <= SETTINGS.max_length).all()


def test_an_adapter_folder_without_its_training_record_is_named(tiny_model_dir, tmp_path):
    codes, texts = tiny_corpus(2, 2)
    (tmp_path / "ft").mkdir()
    base, tokenizer = load_model(tiny_model_dir)
    with pytest.raises(InputError, match=r"ft: adapter folder without training.json"):
        membership_scores(base, tokenizer, {"ft": tmp_path / "ft"}, codes, texts, SETTINGS, seed=1)


def test_no_held_out_segments_is_an_input_error():
    codes, _ = tiny_corpus(4, 0)
    with pytest.raises(InputError, match="codes.parquet: no held-out"):
        membership_texts(codes, 1, "codes.parquet")


def test_roc_auc_equals_scikit_learns_roc_auc_score_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(5)
    member = rng.random(200) < 0.5
    score = rng.integers(0, 6, size=200).astype(float)  # many ties
    assert roc_summary(member, score, resamples=0).auc == pytest.approx(roc_auc_score(member, score))
