"""Whom a guarantee protects, per person: the corpus's privacy units, the group claim of a unit that
makes several protected records, and the statement each method's guarantee gets."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from plainsight.audit.guarantee import Guarantee
from plainsight.audit.protection import (
    PersonClaim,
    UnitSizes,
    group_claim,
    person_claim,
    person_statement,
    protected,
    unit_sizes,
    units_line,
)


def docs_table(units: dict[str, list[str]], split: str = "train", segments: int = 2) -> pd.DataFrame:
    """One row per document segment: `units` maps each unit to its documents."""
    return pd.DataFrame(
        [
            {"doc_id": doc, "split": split, "segment": segment, "unit_id": unit}
            for unit, documents in units.items()
            for doc in documents
            for segment in range(segments)
        ]
    )


# one patient with three notes, two with one each; a test patient with four notes, whom no guarantee
# covers (held out) and who therefore does not count
PATIENTS = pd.concat(
    [
        docs_table({"p1": ["n1", "n2", "n3"], "p2": ["n4"], "p3": ["n5"]}),
        docs_table({"p9": ["t1", "t2", "t3", "t4"]}, split="test"),
    ],
    ignore_index=True,
)
RPSG_RECORD = {"method": "rpsg", "epsilon": 4.0, "delta": 0.002, "release_epsilon": None}
AUG_PE_RECORD = {"method": "aug_pe", "epsilon": 4.0, "delta": 0.002, "release_epsilon": 3.98}
DP_RECORD = {"epsilon": 8.0, "delta": 1e-5, "privacy_unit": "document", "units": 3}


def test_unit_sizes_count_the_training_documents_of_each_unit():
    sizes = unit_sizes(PATIENTS)
    # p1: 3 notes of 2 segments each; the held-out p9 is left out
    assert sizes == UnitSizes(units=3, several=1, largest=3, most_segments=6, own=False)
    assert units_line(sizes) == (
        "Privacy units (the docs' `unit_id`) of the training split: 3, with more than one document: 1, "
        "largest: 3 documents (most training segments of one unit: 6)."
    )
    # a corpus that names no units: each document its own
    alone = unit_sizes(docs_table({"a": ["a"], "b": ["b"]}))
    assert alone == UnitSizes(units=2, several=0, largest=1, most_segments=2, own=True)
    assert units_line(alone).endswith(
        "largest: 1 document (most training segments of one unit: 2); the corpus names no units, so each "
        "document is its own."
    )
    with pytest.raises(ValueError, match="no training segment"):
        unit_sizes(docs_table({"a": ["a"]}, split="dev"))


def test_group_claims_multiply_epsilon_and_grow_delta():
    claim = Guarantee(1.0, 1e-5)
    assert group_claim(claim, 1, separate=False) == claim
    # group privacy: 3 epsilon at 3 e^2 delta
    three = group_claim(claim, 3, separate=False)
    assert three.epsilon == 3.0 and three.delta == pytest.approx(3 * math.exp(2) * 1e-5)
    # three separate mechanisms compose: 3 epsilon at 3 delta
    assert group_claim(claim, 3, separate=True) == Guarantee(3.0, pytest.approx(3e-5))
    assert group_claim(Guarantee(8.0, 1e-5), 6, separate=False).delta == 1.0  # bounds nothing


def test_what_each_method_protects_follows_the_registry_and_dp_sgds_record():
    assert protected("dpsgd", [DP_RECORD]) == "unit"
    assert protected("dpsgd", [{**DP_RECORD, "privacy_unit": "sequence"}]) == "segment"
    assert protected("aug_pe.large", [AUG_PE_RECORD]) == "unit"
    assert protected("rpsg", [RPSG_RECORD]) == "segment"
    assert protected("ft", []) is None and protected("icl", []) is None


def test_rpsg_a_unit_feeding_three_seeds_has_three_times_a_selections_epsilon():
    sizes = unit_sizes(PATIENTS)
    # seed 1's seeds drew 2 segments of one unit, seed 2's 3: the weaker seed counts
    records = [{**RPSG_RECORD, "largest_unit_seeds": 2}, {**RPSG_RECORD, "largest_unit_seeds": 3}]
    person = person_claim("rpsg", records, sizes)
    assert person.protects == "segment" and person.per_selection and person.per_unit == 3
    assert person.unit_claim == Guarantee(12.0, pytest.approx(0.006))
    assert person_statement("RPSG", person) == (
        "RPSG: epsilon 4.00 at delta 0.002 protects one training segment, per selection (its seed): a "
        "person whose documents feed m seeds has m x 4.00 at delta m x 0.002 (each selection reads its "
        "own seed alone); here one privacy unit fed up to 3 seeds: epsilon 12.00 at delta 0.006."
    )
    # a record that does not say how many seeds one unit fed: at most its training segments, 6
    assert person_claim("rpsg", [RPSG_RECORD], sizes).unit_claim == Guarantee(24.0, pytest.approx(0.012))
    # and without the corpus either, the formula alone
    assert person_statement("RPSG", person_claim("rpsg", [RPSG_RECORD], None)).endswith(
        "(each selection reads its own seed alone)."
    )


def test_a_unit_level_guarantee_covers_a_person_whose_documents_share_one_unit():
    person = person_claim("aug_pe", [AUG_PE_RECORD], unit_sizes(PATIENTS))
    # the epsilon that bounds the release: the one spent
    assert person == PersonClaim("unit", Guarantee(3.98, 0.002), False, 1, Guarantee(3.98, 0.002))
    assert person_statement("Aug-PE", person) == (
        "Aug-PE: epsilon 3.98 at delta 0.002 protects one privacy unit (the docs' `unit_id`, with all its "
        "documents): a person all of whose documents share one unit is protected as a whole, however many "
        "documents they have; one whose documents fall into k units has k x 3.98 at delta "
        "k e^((k-1) x 3.98) x 0.002 (group privacy)."
    )


def test_dp_sgd_per_training_segment_states_the_largest_units_claim():
    records = [{**DP_RECORD, "privacy_unit": "sequence", "epsilon": 0.5}]
    person = person_claim("dpsgd", records, unit_sizes(PATIENTS))
    # p1 makes 6 training segments: 6 x 0.5 at 6 e^(5 x 0.5) x 1e-5
    assert person.per_unit == 6 and not person.per_selection
    assert person.unit_claim == Guarantee(3.0, pytest.approx(6 * math.exp(2.5) * 1e-5))
    assert person_statement("DP-SGD", person).endswith(
        "here one privacy unit has up to 6 training segments: epsilon 3.00 at delta 0.00073."
    )


def test_no_guarantee_says_so_per_person():
    assert person_claim("ft", [], None) == PersonClaim(None)
    assert person_statement("Fine-tuning", PersonClaim(None)) == (
        "Fine-tuning: no formal guarantee; nothing bounds what is revealed of a person, with one document "
        "or many."
    )
