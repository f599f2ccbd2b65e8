"""The privacy-audit table: membership rows per model, the join with the released-text records, Markdown."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from plainsight.audit.privacy_audit_table import BASE_DISPLAY, audit_table, membership_rows
from plainsight.report.privacy_audit_markdown import privacy_audit_markdown

METHODS = {"baseline": "Baseline", "dpsgd": "DP-SGD", "ft": "Fine-tuning"}


def scores_frame() -> pd.DataFrame:
    """Base and ft scores of 6 members and 6 non-members: ft's loss separates them, the base model's
    does not."""
    rng = np.random.default_rng(0)
    keys = [(f"d{n}", 0) for n in range(12)]
    member = [n < 6 for n in range(12)]
    base_nll = rng.uniform(3, 4, 12)
    rows = []
    for model, nll in (("base", base_nll), ("ft", base_nll - np.where(member, 1.0, 0.0))):
        for (doc_id, segment), is_member, value in zip(keys, member, nll):
            rows.append(
                {
                    "model": model,
                    "doc_id": doc_id,
                    "segment": segment,
                    "split": "train" if is_member else "test",
                    "member": is_member,
                    "tokens": 10,
                    "nll_sum": 10 * value,
                    "nll_mean": value,
                    "zlib_bytes": 50,
                    "min_k": -value,
                }
            )
    return pd.DataFrame(rows)


def test_membership_rows_give_each_model_its_attacks():
    rows = membership_rows(scores_frame(), resamples=20, seed=1).set_index("method")
    assert list(rows.index) == ["base", "ft"]
    assert rows.loc["ft", "mia_reference_auc"] == 1.0 and rows.loc["ft", "mia_reference_tpr1"] == 1.0
    assert np.isnan(rows.loc["base", "mia_reference_auc"])  # the base model is not its own reference
    assert rows.loc["base", "mia_members"] == rows.loc["base", "mia_non_members"] == 6


def test_table_has_a_control_row_first_and_means_over_seeds():
    run = {"dataset": "tab", "setting": "known", "idset": "direct"}
    membership = pd.concat(
        [membership_rows(scores_frame(), 0, 1).assign(**run, seed=seed) for seed in (1, 2)]
    )
    released = pd.DataFrame(
        [
            {
                **run,
                "method": m,
                "seed": seed,
                "verbatim_share": share,
                "pipp": 10.0,
                "dcr_closer_than_held_out": closer,
            }
            for m in ("ft", "baseline")
            for seed, share, closer in ((1, 0.0, True), (2, 0.5, True))
        ]
    )
    table = audit_table(released, membership, METHODS)
    assert list(table["Method"]) == [BASE_DISPLAY, "Baseline", "Fine-tuning"]
    assert table.loc[table["method"] == "ft", "verbatim_share"].item() == pytest.approx(0.25)
    assert (table["seeds"] == "1,2").all()
    assert table.loc[table["method"] == "baseline", "mia_loss_auc"].isna().all()
    text = privacy_audit_markdown(table, 10)
    assert "| tab known direct | Base model (control) |" in text and "**closer**" in text
    assert "Verbatim >= 10 words (% of generations)" in text
    assert "| Any-identifier leak (% of generations) | PIPP (% of generations) |" in text


def test_a_verdict_cell_names_what_its_rates_are_shares_of():
    """A fine-tuning row whose generations mostly hold an identifier, while few distinct values leak: the
    verdict's cell counts distinct values and says so, as verbatim copying counts segments copied."""
    from plainsight.evaluation.measures import leak_measure
    from plainsight.report.privacy_audit_markdown import _excess

    def rates(measure: str, member: float, control: float, design: str) -> dict:
        prefix = f"leak_{measure}"
        return {
            f"{prefix}_member_rate": member,
            f"{prefix}_control_rate": control,
            f"{prefix}_excess": member - control,
            f"{prefix}_excess_low": member - control - 0.03,
            f"{prefix}_excess_high": member - control + 0.03,
            f"{prefix}_conclusion": "no leak detected (could detect >= 0.04)",
            f"{prefix}_design": design,
        }

    row = pd.Series(
        {
            **rates("any_identifier", 0.02, 0.01, "unpaired"),
            **rates("verbatim", 0.042, 0.01, "unpaired"),
            **rates("near", 0.25, 0.1, "paired"),
        }
    )
    assert _excess(row, leak_measure("any_identifier")) == (
        "2 vs 1 (% of distinct values): +1 [-2, +4], no leak detected (could detect >= 0.04)"
    )
    assert _excess(row, leak_measure("verbatim")).startswith("4 vs 1 (% of segments copied): +3 [")
    assert _excess(row, leak_measure("near")).startswith("25 vs 10 (% of generations): +15 [+12, +18]")


def test_the_canary_table_feeds_the_released_rows_its_epsilon_bound(tmp_path):
    from plainsight.audit.privacy_audit_table import read_tables, with_canary_evidence

    run = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": 1}
    canaries = pd.DataFrame(
        [
            {
                **run,
                "method": "icl",
                "attack": "ngram",
                "epsilon_lower_bound": 0.4,
                "max_certifiable_epsilon": 2.2,
            },
            {
                **run,
                "method": "icl",
                "attack": "shared_run",
                "epsilon_lower_bound": 0.9,
                "max_certifiable_epsilon": 2.2,
            },
            # the adapter's attack counts only under a threat model that releases the adapter
            {
                **run,
                "method": "icl",
                "attack": "likelihood_ratio",
                "epsilon_lower_bound": 3.0,
                "max_certifiable_epsilon": 2.2,
            },
        ]
    )
    canaries.to_csv(tmp_path / "canaries.csv", index=False)
    released = pd.DataFrame([{**run, "method": "icl", "pipp": 5.0}, {**run, "method": "ft", "pipp": 0.0}])
    merged = with_canary_evidence(released, read_tables([str(tmp_path / "canaries.csv")]))
    assert merged.loc[0, "canary_epsilon"] == 0.9 and merged.loc[0, "canary_max_certifiable_epsilon"] == 2.2
    assert pd.isna(merged.loc[1, "canary_epsilon"])  # no canaries for ft: the criterion stays inconclusive
    assert read_tables([]) is None and with_canary_evidence(released, None) is released


def test_a_claim_too_loose_to_test_says_how_many_controls_it_needs():
    from plainsight.report.privacy_audit_markdown import claim_check

    loose = {"dp_null_testable": 0.0, "dp_null_controls_needed": 12457, "dp_claim_rejected": 0.0}
    assert claim_check(loose) == (
        "not testable at this size (needs 12,457 controls before any count could reject it)"
    )
    rejected = {"dp_null_testable": 1.0, "dp_claim_rejected": 1.0, "dp_null_p_value": 0.001}
    assert claim_check(rejected).startswith("**its leaks reject its own claim** (p = 0.001)")


def test_the_dp_null_flag_is_a_share_over_seeds_as_the_claim_check_reads_it():
    from plainsight.audit.privacy_audit_table import seed_rows
    from plainsight.report.privacy_audit_markdown import claim_check

    keys = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": 1}
    released = pd.DataFrame(
        [
            {**keys, "method": "dpsgd", "dp_null_testable": False, "dp_null_controls_needed": 10978},
            {**keys, "method": "icl", "dp_null_testable": None, "dp_null_controls_needed": None},
        ]
    )
    rows = seed_rows(released, pd.DataFrame(columns=[*keys, "method"]))
    assert rows["dp_null_testable"].tolist()[0] == 0.0
    dpsgd = {**rows.iloc[0].to_dict(), "dp_claim_rejected": 0.0}
    assert claim_check(dpsgd) == (
        "not testable at this size (needs 10,978 controls before any count could reject it)"
    )


def test_the_re_identification_attack_has_its_columns_with_their_units():
    run = {"dataset": "tab", "setting": "known", "idset": "direct"}
    reidentified = {
        "text_mia_auc_reidentification": 0.9,
        "text_mia_auc_reidentification_low": 0.8,
        "text_mia_auc_reidentification_high": 0.97,
        "text_mia_excess_reidentification": 0.3,
        "text_mia_excess_reidentification_low": 0.1,
        "text_mia_excess_reidentification_high": 0.45,
        "text_mia_reidentification_members": 24,
        "text_mia_reidentification_non_members": 24,
    }
    released = pd.DataFrame(
        [
            {
                **run,
                **reidentified,
                "method": "baseline",
                "seed": 1,
                "reidentification_top1": 0.5,
                "reidentification_top5": 1.0,
                "reidentification_top1_control": 0.04,
                "reidentification_top5_control": 0.2,
            },
            # a trained method: no context documents to find, so no ranks
            {**run, **reidentified, "method": "ft", "seed": 1, "reidentification_top1": np.nan},
        ]
    )
    table = audit_table(released, membership_rows(scores_frame(), 0, 1).assign(**run, seed=1), METHODS)
    text = privacy_audit_markdown(table, 10)
    assert "Re-identification AUC (units)" in text
    assert "Re-identification top-1 / top-5 (% of generations): sources vs controls" in text
    baseline = next(line for line in text.splitlines() if "| Baseline |" in line)
    assert "| 0.90 [0.80, 0.97]; beyond control +0.30 [+0.10, +0.45] | 50 / 100 vs 4 / 20 |" in baseline
    fine_tuning = next(line for line in text.splitlines() if "| Fine-tuning |" in line)
    assert "+0.45] | - |" in fine_tuning
    # the power statement names what each AUC compares: 24 units a side detect
    # 0.5 + (1.960 + 0.842) sqrt(49 / (12 x 24 x 24)) = 0.736
    assert "0.75 (re-identification) or more with 80% power" in text
