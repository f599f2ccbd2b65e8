"""Whether a corpus is fit to release as text: its documents share and downstream utility, with bounds."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from plainsight.audit.fitness import FIT, NOT_FIT, UNCLEAR, documents_share, fit_as_text, utility_evidence

RUN = {"dataset": "tab", "setting": "known", "idset": "direct"}


def test_the_documents_share_pools_the_paragraph_ranges_with_a_wilson_interval():
    summary = pd.DataFrame(
        {"segment": [0, 1, -1], "n_generations": [12, 12, 24], "documents": [100.0, 50.0, 75.0]}
    )
    share = documents_share(summary)
    # 12 + 6 of 24; Wilson 95%: 0.75 -/+ ... = [0.5509, 0.8800] (scipy's binomtest, hand-checked formula)
    assert share["documents_share"] == 0.75
    assert share["documents_share_low"] == pytest.approx(0.5509, abs=5e-4)
    assert share["documents_share_high"] == pytest.approx(0.8800, abs=5e-4)


def test_utility_evidence_reads_the_method_chance_and_the_ceiling_of_its_run():
    utility = pd.DataFrame(
        {
            **{k: [v] * 4 for k, v in RUN.items()},
            "method": ["real", "chance", "icl", "ft"],
            "macro_f1": [0.84, 0.10, 0.30, 0.20],
            "macro_f1_low": [0.80, 0.05, 0.25, 0.12],
            "macro_f1_high": [0.88, 0.15, 0.35, 0.28],
        }
    )
    assert utility_evidence(utility, RUN, "icl") == {
        "macro_f1": 0.30,
        "macro_f1_low": 0.25,
        "macro_f1_high": 0.35,
        "chance_macro_f1": 0.10,
        "real_macro_f1": 0.84,
    }
    assert math.isnan(utility_evidence(utility, RUN, "dpsgd")["macro_f1"])


ROW = {
    "documents_share": 0.95,
    "documents_share_low": 0.85,
    "documents_share_high": 0.99,
    "macro_f1": 0.30,
    "macro_f1_low": 0.25,
    "macro_f1_high": 0.35,
    "chance_macro_f1": 0.10,
    "real_macro_f1": 0.84,
}


def test_fit_when_both_lower_bounds_clear_their_bars():
    fitness = fit_as_text(ROW, documents_min=0.8)
    assert fitness["fit_as_text"] == FIT
    assert fitness["fit_reasons"] == (
        "documents 95% [85, 99] (min 80%); macro-F1 0.30 [0.25, 0.35] (chance 0.10, real data 0.84)"
    )


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"documents_share_high": 0.7}, NOT_FIT),  # mostly not documents
        ({"macro_f1_high": 0.10}, NOT_FIT),  # no better than chance
        ({"documents_share_low": 0.6}, UNCLEAR),  # the share straddles the minimum
        ({"macro_f1_low": 0.08}, UNCLEAR),  # utility could be chance
        ({"macro_f1": math.nan}, UNCLEAR),  # utility not measured
        ({"documents_share": None}, UNCLEAR),  # no documents share
    ],
)
def test_not_fit_and_unclear(change, expected):
    assert fit_as_text({**ROW, **change}, documents_min=0.8)["fit_as_text"] == expected
