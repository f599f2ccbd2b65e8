"""The release verdict on hand-made audit rows: each of PASS, FAIL and INCONCLUSIVE."""

from __future__ import annotations

import pytest

from plainsight.audit.gate import FAIL, INCONCLUSIVE, PASS, Gate, verdict

CLEAN = {
    "leak_any_identifier_excess_low": -0.02,
    "leak_any_identifier_excess_high": 0.03,
    "leak_near_excess_low": -0.01,
    "leak_near_excess_high": 0.04,
    "text_mia_auc_cosine_low": 0.45,
    "text_mia_auc_cosine_high": 0.55,
    "text_mia_auc_ngram_low": 0.46,
    "text_mia_auc_ngram_high": 0.58,
    "leak_verbatim_excess_low": -0.01,
    "leak_verbatim_excess_high": 0.02,
    "canary_epsilon": 0.0,
    "canary_max_certifiable_epsilon": 3.5,
}


def test_every_upper_bound_under_its_threshold_passes():
    assert verdict(CLEAN, Gate(), trained=False)["verdict"] == PASS


def test_a_lower_bound_over_a_threshold_fails_and_names_the_criterion():
    row = {**CLEAN, "leak_any_identifier_excess_low": 0.2, "leak_any_identifier_excess_high": 0.5}
    result = verdict(row, Gate(), trained=False)
    assert result["verdict"] == FAIL
    assert "leak_excess: FAIL (any-identifier leak excess >= 0.20 (max 0.05)" in result["verdict_reasons"]


def test_the_reasons_split_into_one_per_criterion():
    # the card and the review page list the reasons split at "; ": a criterion's own parts stay together
    reasons = verdict(CLEAN, Gate(), trained=False)["verdict_reasons"].split("; ")
    assert [reason.split(":")[0] for reason in reasons] == list(Gate().criteria)
    assert "near leak excess <= 0.04 (max 0.05), any-identifier leak excess <= 0.03 (max 0.05)" in reasons[0]


def test_a_bound_straddling_the_threshold_is_inconclusive():
    row = {**CLEAN, "text_mia_auc_cosine_high": 0.7}
    assert verdict(row, Gate(), trained=False)["verdict"] == INCONCLUSIVE


def test_missing_canary_evidence_never_passes():
    row = {k: v for k, v in CLEAN.items() if not k.startswith("canary")}
    result = verdict(row, Gate(), trained=False)
    assert result["verdict"] == INCONCLUSIVE and "canaries: none in this run" in result["verdict_reasons"]
    assert (
        verdict(row, Gate(criteria=("leak_excess", "text_membership", "verbatim")), False)["verdict"] == PASS
    )


def test_too_few_canaries_to_certify_the_threshold_are_inconclusive():
    row = {**CLEAN, "canary_max_certifiable_epsilon": 0.9}
    assert verdict(row, Gate(canary_epsilon_max=1.0), trained=False)["verdict"] == INCONCLUSIVE


def test_the_adapter_threat_model_adds_the_adapter_attack_for_trained_methods():
    row = {**CLEAN, "mia_loss_auc_low": 0.8, "mia_loss_auc_high": 0.95}
    assert verdict(row, Gate(), trained=True)["verdict"] == PASS
    adapter = Gate(threat_model="released_text_and_adapter")
    assert verdict(row, adapter, trained=True)["verdict"] == FAIL
    assert verdict(row, adapter, trained=False)["verdict"] == PASS  # no adapter to attack


def test_bad_gate_settings_stop_with_one_line():
    with pytest.raises(ValueError, match="threat_model 'everything'"):
        Gate(threat_model="everything")
    with pytest.raises(ValueError, match="unknown \\['vibes'\\]"):
        Gate.from_config({"criteria": ["vibes"]})
