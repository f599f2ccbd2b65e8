"""Unit linkage on hand-made corpora with known answers: which privacy unit a text singles out, alone and
joined with other generations, against its held-out control."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest

from plainsight.audit.criteria import Gate, criterion_outcomes
from plainsight.audit.evidence import excess_of
from plainsight.audit.outcomes import FAIL, PASS
from plainsight.data.ingest import ingest_dataset
from plainsight.evaluation.held_out import (
    corpus_hits,
    in_context_control,
    in_context_value_counts,
    measure_hits,
    paired_value_counts,
    trained_control,
    trained_value_counts,
)
from plainsight.evaluation.linkage import UnitIndex, ValueFinder
from plainsight.evaluation.privacy import real_values, run_privacy_metrics
from plainsight.evaluation.real_segments import Source

REPO = Path(__file__).resolve().parents[1]
Document = tuple[str, str, str, str, list[tuple[str, str, str]]]  # doc_id, unit, split, text, values

# Vejle and 1961 are each held by two units; only u1 holds both. Lindholm Manor is u4's alone.
DOCUMENTS: list[Document] = [
    ("a", "u1", "train", "Henrik Hasslund was born in Vejle in 1961.", [
        ("Henrik Hasslund", "PERSON", "DIRECT"), ("Vejle", "LOC", "QUASI"), ("1961", "DATETIME", "QUASI"),
    ]),
    ("b", "u2", "train", "Ida Olsson was born in Vejle in 1958.", [
        ("Ida Olsson", "PERSON", "DIRECT"), ("Vejle", "LOC", "QUASI"), ("1958", "DATETIME", "QUASI"),
    ]),
    ("c", "u3", "test", "Jonas Berg moved to Odense in 1961.", [
        ("Jonas Berg", "PERSON", "DIRECT"), ("Odense", "LOC", "QUASI"), ("1961", "DATETIME", "QUASI"),
    ]),
    ("d", "u4", "test", "Lene Holm works at Lindholm Manor in Odense.", [
        ("Lene Holm", "PERSON", "DIRECT"), ("Lindholm Manor", "ORG", "QUASI"), ("Odense", "LOC", "QUASI"),
    ]),
    ("e", "u5", "train", "Dr Karl Dam treated the applicant in Aalborg.", [
        ("Dr Karl Dam", "PERSON", "DIRECT"), ("Aalborg", "LOC", "QUASI"),
    ]),
    ("f", "u6", "test", "Dr Karl Dam examined her in Aalborg.", [
        ("Dr Karl Dam", "PERSON", "DIRECT"), ("Aalborg", "LOC", "QUASI"),
    ]),
]  # fmt: skip
KEY = {doc_id: (doc_id, 0) for doc_id, *_ in DOCUMENTS}
TRAIN, HELD_OUT = [KEY["a"], KEY["b"], KEY["e"]], [KEY["c"], KEY["d"], KEY["f"]]
METRICS = {
    "partial_leak_min_letters": 4,
    "verbatim_ngram": 10,
    "linkage_quasi_min": 2,
    "code_runs": {"entity_types": ["CODE"], "min_digits": 4},
    "document": {"min_words": 1, "max_code_copy_share": 0.5, "max_repeated_4gram_share": 0.5},
}


def tables(documents: list[Document]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """docs and spans of one-segment documents; each value's span is its first occurrence."""
    docs = pd.DataFrame(
        [
            {"doc_id": d, "split": split, "segment": 0, "text": text, "unit_id": unit}
            for d, unit, split, text, _ in documents
        ]
    )
    spans = pd.DataFrame(
        [
            {
                "doc_id": d,
                "segment": 0,
                "start": text.index(value),
                "end": text.index(value) + len(value),
                "text": value,
                "entity_type": entity_type,
                "identifier_type": identifier,
                "entity_id": value,
            }
            for d, _, _, text, values in documents
            for value, entity_type, identifier in values
        ]
    )
    return docs, spans


def corpus_real(documents: list[Document] = DOCUMENTS, quasi_min: int = 2):
    docs, spans = tables(documents)
    return real_values(docs, spans, "direct", 10, 4, quasi_min)


def codes_of(docs: pd.DataFrame) -> pd.DataFrame:
    return docs[["doc_id", "segment", "split"]].assign(code="", entities=[[]] * len(docs))


# --- one text ----------------------------------------------------------------------------------


def test_two_quasi_values_that_only_one_unit_holds_together_link_it():
    real = corpus_real()
    assert real.linked_units("Someone was born in Vejle in 1961.") == {"u1"}
    # one of the two alone is held by two units: no one is singled out
    assert real.linked_units("Someone was born in Vejle.") == frozenset()
    assert real.linked_units("Someone was born in 1961.") == frozenset()


def test_a_direct_value_links_its_unit_only_where_no_other_units_text_holds_it():
    real = corpus_real()
    assert real.linked_units("A letter from Henrik Hasslund.") == {"u1"}
    # two cases name the same doctor: the name singles out neither
    assert real.linked_units("Dr Karl Dam was on call in Aalborg.") == frozenset()


def test_a_value_in_another_units_text_counts_though_nobody_annotated_it_there():
    archive = ("g", "u7", "test", "The Vejle archive keeps the files of 1961.", [])  # no annotation
    real = corpus_real([*DOCUMENTS, archive])
    assert real.linked_units("Someone was born in Vejle in 1961.") == frozenset()  # u1 or u7


def test_more_quasi_values_are_needed_when_the_config_asks_for_more():
    assert corpus_real(quasi_min=3).linked_units("Born in Vejle in 1961.") == frozenset()
    with pytest.raises(ValueError, match="linkage_quasi_min must be at least 1"):
        _ = corpus_real(quasi_min=0).unit_index


def test_the_index_is_built_once_and_a_text_is_matched_once():
    real = corpus_real()
    assert real.unit_index is real.unit_index
    assert real.unit_index.holders["vejle"] == {"u1", "u2"} and real.unit_index.quasi["1961"] == {"u1", "u3"}
    assert real.held_values("Born in Vejle in 1961.") is real.held_values("Born in Vejle in 1961.")


# --- across generations ------------------------------------------------------------------------

# Each holds one of u1's two values and Lindholm Manor, which only u4's text holds: one source, a reader
# infers, and together they single out u1.
SPLIT = ["A visit to Vejle and to Lindholm Manor.", "Lindholm Manor was rebuilt in 1961."]


def test_a_person_split_over_two_generations_is_linked_only_by_joining_them():
    real = corpus_real()
    assert [real.linked_units(text) for text in SPLIT] == [frozenset(), frozenset()]
    assert real.unit_index.groups([real.held_values(text) for text in SPLIT]) == [[0, 1]]
    assert real.jointly_linked(SPLIT) == [{"u1"}, {"u1"}]  # u4 holds one quasi value only: not linked


def test_generations_without_a_value_specific_to_one_unit_stay_apart():
    real = corpus_real()
    apart = ["A visit to Vejle.", "Rebuilt in 1961."]  # Vejle and 1961 are two units' each
    assert real.unit_index.groups([real.held_values(text) for text in apart]) == [[0], [1]]
    assert real.jointly_linked(apart) == [frozenset(), frozenset()]


def test_groups_join_transitively():
    index = UnitIndex(
        direct={},
        quasi={},
        holders={"x": frozenset({"u1"}), "y": frozenset({"u2"}), "z": frozenset({"u1", "u2"})},
        finder=ValueFinder(()),
        quasi_min=2,
    )
    held = [frozenset({"x"}), frozenset({"z"}), frozenset({"x", "y"}), frozenset({"y"}), frozenset()]
    assert index.groups(held) == [[0, 2, 3], [1], [4]]  # "z" is two units': it joins nothing


# --- the measures: member against control --------------------------------------------------------


def test_the_paired_control_is_the_same_generation_against_its_control_segments():
    real = corpus_real()
    text = "Someone was born in Vejle in 1961."
    assert measure_hits(text, Source.of([KEY["a"]], real), real)["unit_linkage"] is True
    assert measure_hits(text, Source.of([KEY["c"]], real), real)["unit_linkage"] is False  # u3 holds 1961
    # joint linkage needs the corpus: a generation's hit comes from its group
    sources = [Source.of([KEY["a"]], real), Source.of([KEY["b"]], real)]
    assert corpus_hits(SPLIT, sources, real)["joint_linkage"] == [True, False]


def test_trained_counts_are_per_unit_and_joint_linkage_counts_a_split_person_once():
    real = corpus_real()
    counts = trained_value_counts(SPLIT, TRAIN, HELD_OUT, real)
    # fine-tuning units u1, u2, u5 against held-out u3, u4, u6; each unit one item of its first document
    assert counts["unit_linkage"] == {
        "member_hits": 0,
        "members": 3,
        "control_hits": 0,
        "controls": 3,
        "member_documents": [[0, 1], [0, 1], [0, 1]],
        "control_documents": [[0, 1], [0, 1], [0, 1]],
    }
    assert counts["joint_linkage"] == {
        "design": "unpaired",
        "member_hits": 1,
        "members": 3,
        "control_hits": 0,
        "controls": 3,
        "member_documents": [[1, 1], [0, 1], [0, 1]],
        "control_documents": [[0, 1], [0, 1], [0, 1]],
    }
    table = trained_control(pd.DataFrame({"text": SPLIT}), TRAIN, real)
    assert table["unit_linked"].tolist() == [False, False]
    assert table["jointly_linked"].tolist() == [True, True]
    assert "control_joint_linkage" not in table and table["control_unit_linkage"].isna().all()


def test_a_unit_of_both_sides_is_an_item_of_neither():
    second = ("a2", "u1", "test", "Henrik Hasslund appealed.", [("Henrik Hasslund", "PERSON", "DIRECT")])
    real = corpus_real([*DOCUMENTS, second])
    counts = trained_value_counts(["Henrik Hasslund again."], TRAIN, [*HELD_OUT, ("a2", 0)], real)
    assert (counts["unit_linkage"]["members"], counts["unit_linkage"]["controls"]) == (2, 3)


def test_an_in_context_run_pairs_unit_linkage_and_counts_joint_linkage_per_shown_unit():
    docs, spans = tables(DOCUMENTS)
    corpus = pd.DataFrame(
        {
            "generation_id": [0, 1, 2],
            "method": "icl",
            "seed": 1,
            "segment": 0,
            "text": ["Born in Vejle in 1961.", *SPLIT],
            "context_doc_ids": [["a"], ["b"], ["e"]],
            "context_segments": [[0], [0], [0]],
            "fictional_code": "",
            "fictional_entities": [[]] * 3,
        }
    )
    per_generation, _, record = run_privacy_metrics(
        "icl", corpus, docs, spans, codes_of(docs), "direct", METRICS, 1
    )
    # generation 0 links its own context's u1; its control (b or e, an unshown training unit) links nothing
    assert per_generation["unit_linked"].tolist() == [True, False, False]
    assert per_generation["jointly_linked"].tolist() == [True, False, False]  # u1 was not their context
    assert record["design"] == "paired" and record["measures"]["unit_linkage"]["member_only"] == 1
    joint = record["measures"]["joint_linkage"]
    # shown units u1, u2, u5 against never-shown u3, u4, u6: u1 linked (generation 0, and the split pair)
    assert (joint["member_hits"], joint["members"], joint["control_hits"], joint["controls"]) == (1, 3, 0, 3)
    # a measure without a paired control is judged unpaired inside a paired run
    assert excess_of(joint, record["design"]).design == "unpaired"
    assert excess_of(record["measures"]["unit_linkage"], record["design"]).design == "paired"


def test_the_gate_judges_unit_linkage_by_its_own_threshold_and_joint_linkage_not_at_all():
    row = {"leak_unit_linkage_excess_low": 0.08, "leak_unit_linkage_excess_high": 0.2}
    outcome, reason = criterion_outcomes(row, Gate(), trained=False)["unit_linkage"]
    assert outcome == FAIL and "unit linkage excess" in reason and "(max 0.05)" in reason
    loose = Gate.from_config({"unit_linkage_excess_max": 0.25})
    assert criterion_outcomes(row, loose, trained=False)["unit_linkage"][0] == PASS
    assert "unit_linkage" in Gate().criteria and "joint_linkage" not in criterion_outcomes(row, Gate(), False)


# --- units -------------------------------------------------------------------------------------


def test_a_corpus_without_unit_ids_makes_each_record_its_own_unit(tmp_path):
    label_map = {"NAME": {"type": "PERSON", "identifier": "direct"}}

    def record(doc_id: str, split: str, name: str) -> dict:
        text = f"Visit by {name} in Tromso.\n\nThe client moved on 3 May 2001."
        return {
            "doc_id": doc_id,
            "split": split,
            "text": text,
            "spans": [{"start": 9, "end": 9 + len(name), "label": "NAME"}],
        }

    rows = [
        record("d0", "train", "Anna Berg"),
        record("d1", "train", "Anna Berg"),
        record("d2", "train", "Anna Berg"),
    ]
    rows += [record("d3", "dev", "Bo Lund"), record("d4", "test", "Eva Rask")]
    path = tmp_path / "notes.jsonl"

    def ingested(records: list[dict]):
        path.write_text("".join(json.dumps(row) + "\n" for row in records), encoding="utf-8")
        dataset = {"format": "generic", "segments": [[1, 1], [2, 2]], "label_map": label_map}
        docs, spans = ingest_dataset(
            [path], dataset, "error", REPO / "resources/mimic_placeholder_types.yaml"
        )
        return real_values(docs, spans, "direct", 10, 4)

    own = ingested(rows)
    assert own.unit_of(("d1", 0)) == "d1"
    assert own.linked_units("Anna Berg called.") == frozenset()  # three records, three units hold the name
    assert own.linked_units("Bo Lund called.") == {"d3"}
    # the first three records as one client's notes: the name is that client's alone
    one = ingested([{**row, "unit_id": "client-7"} if row["split"] == "train" else row for row in rows])
    assert one.linked_units("Anna Berg called.") == {"client-7"}
    # tables without a unit column: each document its own unit
    docs, spans = tables(DOCUMENTS)
    assert real_values(docs.drop(columns="unit_id"), spans, "direct", 10, 4).unit_of(KEY["a"]) == "a"


# --- a corpus that learnt nothing ----------------------------------------------------------------

TOWNS = ["Vejle", "Odense", "Aalborg", "Esbjerg", "Horsens", "Kolding"]
TOWNS += ["Randers", "Viborg", "Silkeborg", "Herning", "Holstebro", "Skive"]
YEARS = [str(year) for year in range(1950, 1970)]


def simulated(units: int, rng: random.Random) -> tuple[list[Document], list[tuple[str, str]]]:
    """Units with a town and a birth year each (240 combinations: about half the units have their own),
    one document each, half of them training documents; and each unit's pair of values."""
    documents, pairs = [], []
    for n in range(units):
        town, year = rng.choice(TOWNS), rng.choice(YEARS)
        text = f"The applicant lives in {town} and was born in {year}."
        values = [(town, "LOC", "QUASI"), (year, "DATETIME", "QUASI")]
        documents.append((f"p{n:03d}", f"u{n:03d}", "train" if n % 2 else "test", text, values))
        pairs.append((town, year))
    return documents, pairs


def controlled(corpus: pd.DataFrame, contexts, pool, real) -> pd.DataFrame:
    """The control's columns of an in-context corpus, beside paper columns that these tests do not read."""
    return in_context_control(corpus, contexts, pool, real, seed=1).assign(
        leaked=False, partial_leak=False, near_leak=False
    )


def writing(pairs: list[tuple[str, str]]) -> str:
    return " ".join(f"Someone from {town} was born in {year}." for town, year in pairs)


def test_a_corpus_drawing_values_regardless_of_membership_links_members_at_the_controls_rate():
    rng = random.Random(7)
    documents, pairs = simulated(160, rng)
    real = corpus_real(documents)
    keys = [(doc_id, 0) for doc_id, *_ in documents]
    train = [key for key, document in zip(keys, documents) if document[2] == "train"]
    held_out = [key for key in keys if key not in train]
    # trained: 60 generations, each writing the values of 4 units of the whole corpus, seen or not
    generations = [writing(rng.sample(pairs, 4)) for _ in range(60)]
    counts = trained_value_counts(generations, train, held_out, real)["unit_linkage"]
    excess = excess_of(counts, "unpaired")
    assert counts["members"] == counts["controls"] == 80
    assert excess.member_rate > 0.2 and excess.control_rate > 0.2  # both sides are linked often
    assert excess.excess_low < 0 < excess.excess_high and excess.p_value > 0.05
    # in-context: each prompt shows 3 training units, the generation writes 10 units' values regardless
    contexts = [rng.sample(train, 3) for _ in range(200)]
    texts = [writing(rng.sample(pairs, 10)) for _ in contexts]
    corpus = pd.DataFrame({"generation_id": range(len(texts)), "text": texts})
    paired = paired_value_counts(controlled(corpus, contexts, train, real))["unit_linkage"]
    excess = excess_of(paired, "paired")
    assert paired["member_hits"] > 10 and paired["control_hits"] > 10
    assert excess.excess_low < 0 < excess.excess_high and excess.p_value > 0.05
    # the same prompts copied: the excess is the leak
    copied = corpus.assign(text=[writing([pairs[keys.index(context[0])]]) for context in contexts])
    leaked = excess_of(
        paired_value_counts(controlled(copied, contexts, train, real))["unit_linkage"], "paired"
    )
    assert leaked.excess_low > 0.3 and leaked.p_value < 0.001


def test_joint_linkage_of_an_in_context_corpus_compares_shown_units_with_unshown_ones():
    rng = random.Random(11)
    documents, pairs = simulated(160, rng)
    real = corpus_real(documents)
    keys = [(doc_id, 0) for doc_id, *_ in documents]
    contexts = [[keys[n]] for n in range(0, 160, 4)]  # 40 units shown, 120 never
    texts = [writing(rng.sample(pairs, 4)) for _ in contexts]
    corpus = pd.DataFrame({"generation_id": range(len(texts)), "text": texts})
    per_generation = controlled(corpus, contexts, keys, real)
    counts = in_context_value_counts(per_generation, texts, contexts, keys, real)["joint_linkage"]
    assert (counts["members"], counts["controls"]) == (40, 120)
    excess = excess_of(counts, "paired")
    assert excess.design == "unpaired" and excess.excess_low < 0 < excess.excess_high
