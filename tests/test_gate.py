"""The release verdict on hand-made audit rows: each path to PASS, FAIL and INCONCLUSIVE, and the invariant
that no evidence, however made, passes without every upper bound at or under its threshold."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from plainsight.audit.criteria import Gate, nothing_to_match
from plainsight.audit.gate import EMPIRICAL, FORMAL, POLICY, seeds_verdict, verdict
from plainsight.audit.outcomes import FAIL, INCONCLUSIVE, PASS, evidence
from plainsight.audit.text_evidence import TEXT_MEMBERSHIP_ATTACKS

CLEAN = {
    "leak_any_identifier_excess_low": -0.02,
    "leak_any_identifier_excess_high": 0.03,
    "leak_near_excess_low": -0.01,
    "leak_near_excess_high": 0.04,
    "leak_code_part_excess_low": -0.02,
    "leak_code_part_excess_high": 0.02,
    "text_mia_auc_cosine_low": 0.45,
    "text_mia_auc_cosine_high": 0.55,
    "text_mia_auc_ngram_low": 0.46,
    "text_mia_auc_ngram_high": 0.58,
    "text_mia_auc_reidentification_low": 0.44,
    "text_mia_auc_reidentification_high": 0.57,
    "leak_verbatim_excess_low": -0.01,
    "leak_verbatim_excess_high": 0.02,
    "leak_unit_linkage_excess_low": -0.03,
    "leak_unit_linkage_excess_high": 0.04,
    "dp_epsilon": 0.5,
    "dp_delta": 1e-6,
    "dp_units": 120,
    "dp_unit": "unit",
    "canary_epsilon": 0.1,
}
EMPIRICAL_GATE = Gate(criteria=("leak_excess", "text_membership", "verbatim"))


def test_every_upper_bound_under_its_threshold_passes_on_a_formal_guarantee():
    result = verdict(CLEAN, Gate(), trained=False)
    assert result["verdict"] == PASS and result["verdict_kind"] == FORMAL
    assert "formal epsilon 0.50 per unit (max 1.00), not refuted" in result["verdict_reasons"]


def test_a_measure_with_nothing_to_match_is_left_out_and_one_without_evidence_is_not():
    codeless = {k: v for k, v in CLEAN.items() if not k.startswith("leak_code_part")}
    # a corpus without code values: the code-part leak has no items on either side
    nothing = verdict({**codeless, **nothing_to_match("code_part")}, Gate(), trained=True)
    assert nothing["verdict"] == PASS
    assert "code-part" not in nothing["verdict_reasons"]
    # no record at all (not measured): no evidence, never a PASS
    unmeasured = verdict(codeless, Gate(), trained=True)
    assert unmeasured["verdict"] == INCONCLUSIVE
    assert "code-part leak excess: no evidence in this run" in unmeasured["verdict_reasons"]
    # nothing to match in every measure of the criterion: no evidence either
    empty = {k: v for k, v in codeless.items() if not k.startswith(("leak_near", "leak_any_identifier"))}
    for measure in ("near", "any_identifier", "code_part"):
        empty |= nothing_to_match(measure)
    assert verdict(empty, Gate(), trained=True)["verdict"] == INCONCLUSIVE


def test_a_lower_bound_over_a_threshold_fails_and_names_the_criterion():
    row = {**CLEAN, "leak_any_identifier_excess_low": 0.2, "leak_any_identifier_excess_high": 0.5}
    result = verdict(row, Gate(), trained=False)
    assert result["verdict"] == FAIL and result["verdict_kind"] == ""
    assert "any-identifier leak excess >= 0.20 (max 0.05)" in result["verdict_reasons"]


def test_a_reason_names_what_its_excess_is_a_share_of():
    """In-context rows count generations; trained rows distinct values, name words and segments copied."""

    def reasons(design: str, **row) -> str:
        designs = {f"leak_{m}_design": design for m in ("any_identifier", "near", "verbatim")}
        judged = verdict({**CLEAN, **designs, **row}, EMPIRICAL_GATE, trained=design == "unpaired")
        return judged["verdict_reasons"]

    paired = reasons("paired")
    assert "near leak excess (share of generations) <= 0.04 (max 0.05)" in paired
    assert "any-identifier leak excess (share of generations) <= 0.03 (max 0.05)" in paired
    assert "verbatim excess (share of generations) <= 0.02 (max 0.05)" in paired
    unpaired = reasons("unpaired")
    assert "near leak excess (share of distinct values and name words) <= 0.04 (max 0.05)" in unpaired
    assert "any-identifier leak excess (share of distinct values) <= 0.03 (max 0.05)" in unpaired
    assert "verbatim excess (share of segments copied) <= 0.02 (max 0.05)" in unpaired
    failing = {"leak_any_identifier_excess_low": 0.2, "leak_any_identifier_excess_high": 0.5}
    assert "any-identifier leak excess (share of distinct values) >= 0.20" in reasons("unpaired", **failing)


def test_the_reasons_split_into_one_per_criterion():
    # the card and the review page list the reasons split at "; ": a criterion's own parts stay together
    reasons = verdict(CLEAN, Gate(), trained=False)["verdict_reasons"].split("; ")
    assert [reason.split(":")[0] for reason in reasons] == list(Gate().criteria)
    assert "near leak excess <= 0.04 (max 0.05), any-identifier leak excess <= 0.03 (max 0.05)" in reasons[0]


def test_a_bound_straddling_the_threshold_is_inconclusive():
    row = {**CLEAN, "text_mia_auc_cosine_high": 0.7}
    assert verdict(row, Gate(), trained=False)["verdict"] == INCONCLUSIVE


def test_without_a_formal_guarantee_the_epsilon_criterion_never_passes():
    row = {k: v for k, v in CLEAN.items() if k != "dp_epsilon"}
    result = verdict(row, Gate(), trained=False)
    # no sample decides it: the policy does, with the empirical evidence's outcome beside it
    assert result["verdict"] == POLICY and "no formal guarantee" in result["verdict_reasons"]
    assert result["verdict_kind"].endswith("; empirical evidence: PASS")
    # the same evidence under a gate without the criterion, or whose policy accepts empirical evidence,
    # passes, and says what it rests on
    for gate in (EMPIRICAL_GATE, Gate(policy="empirical_evidence")):
        empirical = verdict(row, gate, trained=False)
        assert empirical["verdict"] == PASS and empirical["verdict_kind"] == EMPIRICAL
    assert EMPIRICAL == "empirical evidence only, no formal guarantee"


def test_the_empirical_policy_still_judges_a_claim_where_a_method_states_one():
    empirical = Gate(policy="empirical_evidence")
    assert verdict(CLEAN, empirical, trained=False)["verdict_kind"] == FORMAL
    assert verdict({**CLEAN, "canary_epsilon": 0.9}, empirical, trained=False)["verdict"] == FAIL
    leaking = {**CLEAN, "dp_epsilon": None, "leak_near_excess_low": 0.2, "leak_near_excess_high": 0.3}
    assert verdict(leaking, empirical, trained=False)["verdict"] == FAIL
    judged = verdict(leaking, Gate(), trained=False)
    assert judged["verdict"] == POLICY and judged["verdict_kind"].endswith("empirical evidence: FAIL")


def test_a_canary_bound_near_zero_certifies_nothing():
    # the canaries' lower bound is no upper bound: a tiny one with no formal claim is no PASS
    row = {**{k: v for k, v in CLEAN.items() if k != "dp_epsilon"}, "canary_epsilon": 0.0}
    assert verdict(row, Gate(), trained=False)["verdict"] == POLICY


def test_the_canaries_refute_a_formal_guarantee_and_a_loose_one_is_not_releasable_by_policy():
    refuted = verdict({**CLEAN, "canary_epsilon": 1.4}, Gate(), trained=False)
    assert refuted["verdict"] == FAIL and "canary audit shows epsilon >= 1.40" in refuted["verdict_reasons"]
    loose = verdict({**CLEAN, "dp_epsilon": 8.0}, Gate(), trained=False)
    assert loose["verdict"] == POLICY and "formal epsilon 8.00 per unit" in loose["verdict_kind"]
    unaudited = verdict({k: v for k, v in CLEAN.items() if k != "canary_epsilon"}, Gate(), trained=False)
    assert unaudited["verdict"] == PASS and "no canary audit in this run" in unaudited["verdict_reasons"]


def test_the_adapter_threat_model_adds_the_adapter_attack_for_trained_methods():
    row = {**CLEAN, "mia_loss_auc_low": 0.8, "mia_loss_auc_high": 0.95}
    assert verdict(row, Gate(), trained=True)["verdict"] == PASS
    adapter = Gate(threat_model="released_text_and_adapter")
    assert verdict(row, adapter, trained=True)["verdict"] == FAIL
    assert verdict(row, adapter, trained=False)["verdict"] == PASS  # no adapter to attack


@pytest.mark.parametrize("absent", [None, math.nan, pd.NA, "0.01", "-", True])
def test_absent_na_nan_and_non_numeric_evidence_is_no_evidence(absent):
    assert evidence(absent) is None
    row = {**CLEAN, "leak_near_excess_high": absent}
    result = verdict(row, Gate(), trained=False)
    assert result["verdict"] == INCONCLUSIVE and "near leak excess: no evidence" in result["verdict_reasons"]
    assert evidence(0.02) == 0.02 and evidence(pd.Series([3]).iloc[0]) == 3.0


def test_the_worst_seed_wins_and_every_seed_is_listed():
    # seed 1 passes, seed 2's near leak excess lies above the threshold and it has no formal claim: the
    # seeds' mean would pass ([-0.02, 0.045]), the verdict per seed does not
    failing = {
        **CLEAN,
        "leak_near_excess_low": 0.06,
        "leak_near_excess_high": 0.09,
        "dp_epsilon": None,
    }
    result = seeds_verdict([(1, CLEAN), (2, failing)], Gate(), trained=False)
    assert result["verdict"] == POLICY and result["seed_verdicts"] == "1: PASS, 2: NOT RELEASABLE BY POLICY"
    assert result["verdict_reasons"].startswith("seed 2: ")
    assert result["verdict_kind"].endswith("empirical evidence: FAIL")
    result = seeds_verdict([(1, CLEAN), (2, {**failing, "dp_epsilon": 0.5})], Gate(), trained=False)
    assert result["verdict"] == FAIL and result["seed_verdicts"] == "1: PASS, 2: FAIL"
    missing = seeds_verdict(
        [(1, CLEAN), (2, {**CLEAN, "leak_near_excess_high": None})], Gate(), trained=False
    )
    assert missing["verdict"] == INCONCLUSIVE and missing["seed_verdicts"] == "1: PASS, 2: INCONCLUSIVE"
    single = seeds_verdict([(3, CLEAN)], Gate(), trained=False)
    assert single["verdict_reasons"] == verdict(CLEAN, Gate(), trained=False)["verdict_reasons"]


def _random_value(rng: random.Random):
    kind = rng.random()
    if kind < 0.15:
        return rng.choice([None, math.nan, pd.NA, "0.01", "n/a"])
    return rng.uniform(-0.3, 1.6)


# Beside CLEAN's columns: the text attacks' excess over their negative control, the adapter attack's AUC
# (judged for trained rows under the adapter threat model) and a guarantee's delta and unit.
EXTRA = {
    **{f"text_mia_excess_{n}_{side}": 0.0 for n in TEXT_MEMBERSHIP_ATTACKS for side in ("low", "high")},
    "mia_loss_auc_low": 0.45,
    "mia_loss_auc_high": 0.55,
}


def _random_row(rng: random.Random) -> dict:
    row = {key: _random_value(rng) for key in {**CLEAN, **EXTRA} if rng.random() > 0.05}
    if rng.random() < 0.5:
        row["dp_unit"] = rng.choice(["unit", "sequence", "segment", None])
    if rng.random() < 0.5:
        row["dp_delta"], row["dp_units"] = rng.choice([1e-6, 1e-3, 0.01]), rng.choice([10, 120, 2000])
    return row


def _random_gate(rng: random.Random, criteria: tuple[str, ...]) -> Gate:
    # thresholds from a few values at or above CLEAN's bounds, so that clean rows can still pass
    return Gate(
        threat_model=rng.choice(["released_text", "released_text_and_adapter"]),
        leak_excess_max=rng.choice([0.05, 0.1, 0.2]),
        text_membership_auc_max=rng.choice([0.6, 0.7]),
        verbatim_excess_max=rng.choice([0.05, 0.1]),
        unit_linkage_excess_max=rng.choice([0.05, 0.1]),
        epsilon_max=rng.choice([0.6, 1.0, 2.0]),
        delta_units_max=rng.choice([0.01, 0.1, 1.0]),
        adapter_membership_auc_max=rng.choice([0.6, 0.7]),
        policy=rng.choice(["formal_guarantee", "empirical_evidence"]),
        criteria=criteria,
    )


def _upper_bounds_hold(row: dict, gate: Gate, trained: bool) -> bool:
    """What a PASS must rest on, restated from the thresholds alone: valid bounds (low at or under high)
    with the upper one at or under the threshold; a guarantee over the release's unit, with a small
    delta for its units, under the threshold and under no canary bound."""

    def number(key: str) -> float | None:
        return evidence(row.get(key))

    def valid_under(prefix: str, threshold: float, shift: float = 0.0) -> bool:
        low, high = number(f"{prefix}_low"), number(f"{prefix}_high")
        return low is not None and high is not None and low <= high and high + shift <= threshold

    def text_attack_holds(attack: str) -> bool:
        excess = f"text_mia_excess_{attack}"
        if any(number(f"{excess}_{side}") is not None for side in ("low", "high")):
            return valid_under(excess, gate.text_membership_auc_max, shift=0.5)
        return valid_under(f"text_mia_auc_{attack}", gate.text_membership_auc_max)

    holds = all(
        valid_under(f"leak_{m}_excess", gate.leak_excess_max) for m in ("near", "any_identifier", "code_part")
    )
    holds = holds and all(text_attack_holds(n) for n in TEXT_MEMBERSHIP_ATTACKS)
    holds = holds and valid_under("leak_verbatim_excess", gate.verbatim_excess_max)
    if "unit_linkage" in gate.criteria:
        holds = holds and valid_under("leak_unit_linkage_excess", gate.unit_linkage_excess_max)
    if gate.threat_model == "released_text_and_adapter" and trained:
        holds = holds and valid_under("mia_loss_auc", gate.adapter_membership_auc_max)
    if "epsilon" in gate.criteria:
        claimed, canary = number("dp_epsilon"), number("canary_epsilon")
        delta, units = number("dp_delta"), number("dp_units")
        # a canary bound above the claim (or the maximum) refutes it under either policy
        limit = gate.epsilon_max if claimed is None else min(claimed, gate.epsilon_max)
        holds = holds and (canary is None or canary <= limit)
        if gate.policy == "formal_guarantee":
            holds = (
                holds
                and claimed is not None
                and claimed <= gate.epsilon_max
                and row.get("dp_unit") == gate.privacy_unit
                and delta is not None
                and units is not None
                and delta * units <= gate.delta_units_max
            )
    return holds


@pytest.mark.parametrize("criteria", [Gate().criteria, EMPIRICAL_GATE.criteria], ids=["formal", "empirical"])
def test_no_evidence_passes_without_every_upper_bound_under_its_threshold(criteria):
    rng = random.Random(20261127)
    passes = 0
    for _ in range(6000):
        gate = Gate(criteria=criteria) if rng.random() < 0.5 else _random_gate(rng, criteria)
        trained = rng.random() < 0.5
        seeds = [(seed, _random_row(rng)) for seed in range(1, rng.randint(1, 3) + 1)]
        if rng.random() < 0.5:  # bounds drawn near the thresholds, where a wrong PASS would hide
            seeds = [
                (seed, {**CLEAN, **EXTRA, **{k: v for k, v in row.items() if rng.random() < 0.1}})
                for seed, row in seeds
            ]
        result = seeds_verdict(seeds, gate, trained=trained)
        if result["verdict"] == PASS:
            passes += 1
            assert all(_upper_bounds_hold(row, gate, trained) for _, row in seeds), (gate, seeds)
    assert passes > 50  # the property was exercised, not vacuous


def test_the_canaries_refute_the_claim_itself_not_only_the_maximum():
    # a claim of 0.5 with an audited lower bound of 0.9 is refuted, although 0.9 is under the maximum of 1
    refuted = verdict({**CLEAN, "canary_epsilon": 0.9}, Gate(), trained=False)
    assert refuted["verdict"] == FAIL
    assert (
        "the canary audit shows epsilon >= 0.90 per unit, above the claimed 0.50 (max 1.00)"
        in (refuted["verdict_reasons"])
    )
    assert verdict({**CLEAN, "canary_epsilon": 0.49}, Gate(), trained=False)["verdict"] == PASS


def test_a_guarantee_passes_only_over_the_releases_unit_and_with_a_small_delta():
    per_sequence = verdict({**CLEAN, "dp_unit": "sequence"}, Gate(), trained=True)
    assert per_sequence["verdict"] == POLICY
    assert "privacy unit 'sequence'; the release protects one 'unit'" in per_sequence["verdict_reasons"]
    # 1 / (N ln N) at 64 units: delta x N = 1 / ln 64 = 0.24, above 0.1
    loose_delta = {**CLEAN, "dp_delta": 1 / (64 * math.log(64)), "dp_units": 64}
    judged = verdict(loose_delta, Gate(), trained=True)
    assert judged["verdict"] == POLICY and "delta x units 0.24 is above 0.1" in judged["verdict_reasons"]
    # the default delta min(1e-5, 1 / (10 N)) passes at any N
    for units in (10, 64, 20_000):
        row = {**CLEAN, "dp_delta": min(1e-5, 1 / (10 * units)), "dp_units": units}
        assert verdict(row, Gate(), trained=True)["verdict"] == PASS
    unstated = {k: v for k, v in CLEAN.items() if k not in ("dp_delta", "dp_units")}
    assert verdict(unstated, Gate(), trained=True)["verdict"] == POLICY


def test_inverted_bounds_never_pass():
    inverted = {**CLEAN, "leak_near_excess_low": 0.04, "leak_near_excess_high": -0.01}
    judged = verdict(inverted, Gate(), trained=False)
    assert judged["verdict"] == INCONCLUSIVE and "inverted bounds [0.04, -0.01]" in judged["verdict_reasons"]


def test_bad_gate_settings_stop_with_one_line():
    with pytest.raises(ValueError, match="threat_model 'everything'"):
        Gate(threat_model="everything")
    with pytest.raises(ValueError, match="unknown \\['vibes'\\]"):
        Gate.from_config({"criteria": ["vibes"]})
    with pytest.raises(ValueError, match="release.gate has no threshold 'vibes_max'"):
        Gate().threshold("vibes_max")


def _text_only(row: dict) -> tuple[str, str]:
    judged = verdict(row, Gate(criteria=("text_membership",)), trained=False)
    return judged["verdict"], judged["verdict_reasons"]


def test_the_text_criterion_judges_the_auc_beyond_the_negative_control():
    # the raw AUCs [0.70, 0.90] would fail; the excess over the negative control is what the gate judges
    biased = {"text_mia_auc_cosine_low": 0.70, "text_mia_auc_cosine_high": 0.90}
    biased |= {"text_mia_auc_ngram_low": 0.70, "text_mia_auc_ngram_high": 0.90}
    biased |= {"text_mia_auc_reidentification_low": 0.70, "text_mia_auc_reidentification_high": 0.90}
    assert _text_only(biased)[0] == FAIL  # an older record, without the control: today's rule
    both = {
        f"text_mia_excess_{n}_{side}": v for n in TEXT_MEMBERSHIP_ATTACKS for side, v in (("low", -0.05),)
    }
    within = {**biased, **both, "text_mia_excess_cosine_high": 0.08, "text_mia_excess_ngram_high": 0.05}
    within |= {"text_mia_excess_reidentification_high": 0.05}
    outcome, reasons = _text_only(within)
    assert outcome == PASS  # 0.5 + 0.08 = 0.58 <= 0.60
    assert "text membership AUC (cosine) beyond the negative control <= 0.58 (max 0.60)" in reasons
    straddling = {**within, "text_mia_excess_cosine_high": 0.12}  # 0.62 > 0.60, 0.45 <= 0.60
    assert _text_only(straddling)[0] == INCONCLUSIVE
    above = {**within, "text_mia_excess_ngram_low": 0.15, "text_mia_excess_ngram_high": 0.30}
    outcome, reasons = _text_only(above)
    assert outcome == FAIL and "beyond the negative control >= 0.65 (max 0.60)" in reasons


def test_with_a_coin_split_the_text_criterion_judges_the_attacks_own_auc():
    # the same excess that PASSes beside the negative control; members and held-out drawn by a coin:
    # the raw AUCs are what the gate judges, the control's correction is not applied
    raw = {f"text_mia_auc_{n}_{side}": v for n in TEXT_MEMBERSHIP_ATTACKS for side, v in (("low", 0.48),)}
    raw |= {f"text_mia_auc_{n}_high": 0.57 for n in TEXT_MEMBERSHIP_ATTACKS}
    excess = {
        f"text_mia_excess_{n}_{side}": v for n in TEXT_MEMBERSHIP_ATTACKS for side, v in (("low", 0.15),)
    }
    excess |= {f"text_mia_excess_{n}_high": 0.3 for n in TEXT_MEMBERSHIP_ATTACKS}
    assert _text_only({**raw, **excess})[0] == FAIL  # beside the control: 0.5 + 0.15 > 0.6
    outcome, reasons = _text_only({**raw, **excess, "text_mia_split": "coin"})
    assert outcome == PASS
    assert "text membership AUC (cosine, members and held-out drawn by a coin) <= 0.57 (max 0.60)" in reasons
    above = {**raw, **excess, "text_mia_split": "coin", "text_mia_auc_ngram_low": 0.61}
    assert _text_only({**above, "text_mia_auc_ngram_high": 0.7})[0] == FAIL


@pytest.mark.parametrize("missing", [None, math.nan, pd.NA, "0.01"])
def test_a_half_missing_excess_is_no_evidence_whatever_the_raw_auc(missing):
    clean_raw = {key: value for key, value in CLEAN.items() if key.startswith("text_mia_auc")}
    excess = {
        f"text_mia_excess_{n}_{s}": v
        for n in TEXT_MEMBERSHIP_ATTACKS
        for s, v in (("low", -0.1), ("high", 0.0))
    }
    row = {**clean_raw, **excess, "text_mia_excess_cosine_high": missing}
    assert _text_only(row)[0] == INCONCLUSIVE


def test_an_inconclusive_reason_names_the_sample_that_would_decide_it():
    row = {
        **CLEAN,
        "leak_design": "paired",
        "leak_near_members": 24,
        "leak_near_excess": 0.0,
        "leak_near_control_rate": 0.0,
        "leak_near_excess_low": -0.14,
        "leak_near_excess_high": 0.14,
    }
    reasons = verdict(row, Gate(), trained=False)["verdict_reasons"].split("; ")
    assert reasons[0] == (
        "leak_excess: INCONCLUSIVE (near leak excess in [-0.14, 0.14] straddles 0.05 (needs >= 72 "
        "generations to PASS with probability 0.8 at excess 0.00 and control rate 0.00, this run has 24))"
    )
    assert [reason.split(":")[0] for reason in reasons] == list(Gate().criteria)  # still one per criterion


def test_an_inconclusive_auc_names_the_texts_that_would_decide_it():
    row = {
        **CLEAN,
        "text_mia_members": 148,
        "text_mia_non_members": 148,
        "text_mia_auc_cosine": 0.5,
        "text_mia_auc_cosine_high": 0.61,
    }
    outcome = verdict(row, EMPIRICAL_GATE, trained=False)
    assert outcome["verdict"] == INCONCLUSIVE
    assert (
        "(needs >= 134 members and as many held-out texts to PASS with probability 0.8 at AUC 0.50, this "
        "run has 148 and 148)" in (outcome["verdict_reasons"])
    )
    # fewer members than that: the corpus cannot give the sample, and the reason says what can decide
    fewer = verdict(
        {**row, "text_mia_members": 48, "text_mia_non_members": 48}, EMPIRICAL_GATE, trained=False
    )
    assert (
        "(cannot be decided on this corpus: needs >= 134 members and as many held-out texts to PASS with "
        "probability 0.8 at AUC 0.50, it has 48 and 48; a larger corpus can decide it"
    ) in fewer["verdict_reasons"]
    assert "needs" not in verdict(CLEAN, Gate(), trained=False)["verdict_reasons"]  # a PASS names nothing


def test_the_text_criterion_judges_the_re_identification_attack_beside_the_others():
    # the nearest-document attacks within the threshold beside the negative control; the re-identification
    # attack's units are not
    within = {
        f"text_mia_excess_{n}_{side}": v
        for n in ("cosine", "ngram")
        for side, v in (("low", -0.05), ("high", 0.05))
    }
    linked = {
        **within,
        "text_mia_excess_reidentification_low": 0.2,
        "text_mia_excess_reidentification_high": 0.4,
    }
    outcome, reasons = _text_only(linked)
    assert outcome == FAIL
    assert "text membership AUC (reidentification) beyond the negative control >= 0.70 (max 0.60)" in reasons
    assert _text_only({**within, "text_mia_excess_reidentification_high": 0.05})[0] == INCONCLUSIVE  # half
    unlinked = {
        **within,
        "text_mia_excess_reidentification_low": -0.1,
        "text_mia_excess_reidentification_high": 0.0,
    }
    assert _text_only(unlinked)[0] == PASS
    # a record written before the attack has no evidence of it: never a PASS
    outcome, reasons = _text_only(within)
    assert outcome == INCONCLUSIVE and "text membership AUC (reidentification): no evidence" in reasons


def test_an_inconclusive_re_identification_auc_names_the_units_it_compared():
    row = {
        **CLEAN,
        "text_mia_members": 48,
        "text_mia_non_members": 48,
        "text_mia_reidentification_members": 24,
        "text_mia_reidentification_non_members": 24,
        "text_mia_auc_reidentification": 0.5,
        "text_mia_auc_reidentification_high": 0.65,
    }
    reasons = verdict(row, EMPIRICAL_GATE, trained=False)["verdict_reasons"]
    assert "to PASS with probability 0.8 at AUC 0.50, it has 24 and 24;" in reasons


def test_a_filtered_release_has_no_guarantee_and_its_filters_criteria_are_no_evidence():
    filtered = {**CLEAN, "release_filter": "any_identifier"}
    # the guarantee does not cover texts a filter chose after the mechanism, whatever the row says
    formal = verdict(filtered, Gate(), trained=True)
    assert (
        formal["verdict"] == POLICY
        and "the release filter (any_identifier) read private data" in (formal["verdict_kind"])
    )
    # under the empirical policy the verdict rests on the criteria independent of the filter alone
    empirical = verdict(filtered, Gate(policy="empirical_evidence"), trained=True)
    assert empirical["verdict"] == PASS and empirical["verdict_kind"] == EMPIRICAL
    assert (
        "leak_excess: BY CONSTRUCTION (the release filter (any_identifier) dropped"
        in (empirical["verdict_reasons"])
    )
    assert "unit_linkage: BY CONSTRUCTION" in empirical["verdict_reasons"]
    leaking = {**filtered, "leak_near_excess_low": 0.2, "leak_near_excess_high": 0.3}
    assert verdict(leaking, Gate(policy="empirical_evidence"), trained=True)["verdict"] == PASS
    copying = {**filtered, "leak_verbatim_excess_low": 0.2, "leak_verbatim_excess_high": 0.3}
    assert verdict(copying, Gate(policy="empirical_evidence"), trained=True)["verdict"] == FAIL
    # `none` is no filter: the corpus as the mechanism wrote it keeps its guarantee
    assert verdict({**CLEAN, "release_filter": "none"}, Gate(), trained=True)["verdict"] == PASS
