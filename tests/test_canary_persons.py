"""Canary persons: fictional persons whose details are spread over the documents of one privacy unit,
each in or out by a seeded fair coin; the attack that asks whether the released text links two of a
person's details; the per-person one-run bound in the canary table."""

from __future__ import annotations

import itertools
import math
import random
import re
from dataclasses import replace

import pandas as pd
import pytest
import yaml

from conftest import RESOURCES
from plainsight.audit.canaries import CanaryPlan, with_rows_of
from plainsight.audit.canary_attacks import linked_details, person_attack_frame
from plainsight.audit.canary_persons import (
    OTHER_DETAILS,
    CanaryPerson,
    PersonDesign,
    PersonPlan,
    check_person_plan,
    drawn_persons,
    person_code_rows,
    person_document_rows,
    placed_persons,
    read_person_design,
    read_persons,
)
from plainsight.audit.canary_table import (
    PER_PERSON,
    DpClaim,
    canary_evidence,
    canary_table,
    person_rows,
    read_claim,
)
from plainsight.audit.epsilon import one_run_max_epsilon
from plainsight.errors import InputError
from plainsight.io import write_json
from plainsight.matching import leaked_values
from plainsight.report.audit_plots import plot_auc
from plainsight.report.canary_markdown import canary_markdown
from test_membership import court_document

SHIPPED = str(RESOURCES / "canaries.yaml")
RUN = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "icl", "seed": 1}


def persons(count: int, documents: int = 3, seed: int = 1) -> list[CanaryPerson]:
    return drawn_persons(read_person_design(SHIPPED), PersonPlan(count, documents, seed))


def alternating(drawn: list[CanaryPerson]) -> list[CanaryPerson]:
    """The persons with coins of our choosing: every other one included, the first among them."""
    return [replace(p, member=number % 2 == 0) for number, p in enumerate(drawn)]


def corpus(texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {"text": texts, "context_doc_ids": [[]] * len(texts), "context_segments": [[]] * len(texts)}
    )


def copying_corpus(drawn: list[CanaryPerson]) -> pd.DataFrame:
    """Released text that writes every included person's documents back, one per generation, among
    generations that hold no detail."""
    rng = random.Random(4)
    copies = [text for p in drawn if p.member for text in p.documents]
    return corpus([court_document(rng) for _ in range(10)] + copies)


def row_of(drawn: list[CanaryPerson], texts: pd.DataFrame, guesses: float, delta: float, claim=None) -> dict:
    frame = person_attack_frame(drawn, texts, in_context=False)
    (row,) = person_rows(frame, delta=delta, claim=claim, resamples=200, guesses=guesses)
    return row


# --- the design ---------------------------------------------------------------------------------


def string_entries(node) -> set[str]:
    if isinstance(node, dict):
        return {entry for value in node.values() for entry in string_entries(value)}
    if isinstance(node, list):
        return {entry for entry in node if isinstance(entry, str)}
    return set()


def test_the_shipped_pools_are_fictional_and_share_no_word_with_the_codes_pools():
    design = read_person_design(SHIPPED)
    ours = [*design.given_names, *design.surnames, *design.places]
    theirs = string_entries(yaml.safe_load((RESOURCES / "fictional_pools.yaml").read_text(encoding="utf-8")))
    theirs |= string_entries(yaml.safe_load((RESOURCES / "surrogate_lists.yaml").read_text(encoding="utf-8")))
    their_words = {word.casefold() for entry in theirs for word in re.findall(r"\w+", entry)}
    assert len(ours) == len(set(ours)) > 50
    assert not {word.casefold() for entry in ours for word in re.findall(r"\w+", entry)} & their_words
    assert set(design.sentences) == set(OTHER_DETAILS)


@pytest.mark.parametrize(
    ("old", "new", "key", "message"),
    [
        ("  places: [", "  lands: [", "persons", "incomplete"),
        ("{first: 1931, last: 1979}", "{first: 1979, last: 1931}", "persons.birth_years", "out of range"),
        ('"{name} lives in {place}."', '"Someone lives in {place}."', "persons.documents.place", "must name"),
        ('"{name} lives in {place}."', '"{name} lives in {town}."', "persons.documents.place", "town"),
        ("digits: 6}", "digits: six}", "persons", "not a number"),
    ],
)
def test_a_bad_person_design_stops_with_one_line_naming_the_file(tmp_path, old, new, key, message):
    text = (RESOURCES / "canaries.yaml").read_text(encoding="utf-8")
    assert old in text
    bad = tmp_path / "canaries.yaml"
    bad.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(InputError, match=message) as error:
        read_person_design(str(bad))
    assert str(error.value).startswith(f"{bad}: {key}:") and "\n" not in str(error.value)


def test_a_bad_plan_stops_with_one_line():
    check_person_plan(PersonPlan(0, 3, 1))  # off
    check_person_plan(PersonPlan(2, 2, 1))
    for plan, message in [
        (PersonPlan(1, 3, 1), "at least 2 persons"),
        (PersonPlan(-2, 3, 1), "at least 2 persons"),
        (PersonPlan(5, 1, 1), "at least 2 documents"),
    ]:
        with pytest.raises(ValueError, match=message) as error:
            check_person_plan(plan)
        assert "\n" not in str(error.value)
    small = PersonDesign(("Ann",), ("Zed", "Yew"), ("Oakvale",), 1950, 1950, "RN-", 2, {})
    with pytest.raises(ValueError, match="3 canary persons need as many distinct names"):
        drawn_persons(small, PersonPlan(3, 2, 1))


# --- the persons and their documents ------------------------------------------------------------


def test_each_document_names_the_person_and_one_other_detail_in_turn():
    drawn = persons(6, documents=5)
    for p in drawn:
        assert re.fullmatch(r"\d{1,2} [A-Z][a-z]+ (19[3-7]\d)", p.details["birth_date"])
        assert 1931 <= int(p.details["birth_date"][-4:]) <= 1979
        assert re.fullmatch(r"RN-\d{6}", p.details["record_number"])
        held = [set(leaked_values(text, p.details.values())) for text in p.documents]
        # document n: the name and the n-th other detail in turn, never more than two of the four
        assert held == [
            {p.details["name"], p.details[detail]}
            for detail in ("birth_date", "place", "record_number", "birth_date", "place")
        ]
        assert len(set(p.documents)) == 5  # the 4th and 5th take each detail's second sentence
    assert p.documents[0] == f"{p.details['name']} was born on {p.details['birth_date']}."
    assert p.documents[3] == (
        f"According to the register, {p.details['name']} was born on {p.details['birth_date']}."
    )
    names = [p.details["name"] for p in drawn]
    numbers = [p.details["record_number"] for p in drawn]
    assert len(set(names)) == len(set(numbers)) == 6
    # two documents: the name with the birth date, then with the place; no record number
    for p in persons(4, documents=2):
        assert [len(leaked_values(text, p.details.values())) for text in p.documents] == [2, 2]
        assert not any(p.details["record_number"] in text for text in p.documents)


def test_each_person_is_in_or_out_by_a_seeded_fair_coin_of_its_own():
    coins = PersonPlan(4000, 3, 7).coins()
    assert abs(sum(coins) / 4000 - 0.5) < 0.03  # 3.8 standard deviations
    assert abs(sum(a == b for a, b in itertools.pairwise(coins)) / 3999 - 0.5) < 0.03
    assert PersonPlan(4000, 3, 7).coins() == coins and PersonPlan(4000, 3, 8).coins() != coins
    # its own stream: not the sentence canaries' coins of the same seed
    assert PersonPlan(200, 3, 7).coins() != CanaryPlan(200, 1, (), 7).coins()
    assert [p.member for p in persons(40, seed=7)] == PersonPlan(40, 3, 7).coins()[:40]
    assert len({sum(PersonPlan(6, 3, seed).coins()) for seed in range(40)}) > 2  # not a fixed count


def test_the_draws_are_seeded_and_a_record_reads_back(tmp_path):
    training = [(f"d{n}", segment) for n in range(8) for segment in (0, 1)]
    placed = placed_persons(persons(10), training, seed=1)
    assert placed == placed_persons(persons(10), list(reversed(training)), seed=1)
    assert persons(10, seed=2) != persons(10)
    assert placed_persons(persons(10), training, seed=2) != placed
    assert all(p.source in training for p in placed)
    write_json({"persons": [p.record() for p in placed]}, tmp_path / "canaries.json")
    assert read_persons(str(tmp_path / "canaries.json")) == placed
    assert placed_persons([], [], seed=1) == []
    with pytest.raises(ValueError, match="need a training segment"):
        placed_persons(placed, [], seed=1)


def canary_set_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    docs = pd.DataFrame(
        {
            "doc_id": ["d1", "d1", "d2"],
            "segment": [0, 1, 1],
            "split": ["train"] * 3,
            "text": ["Text of d1.", "More of d1.", "Text of d2."],
            "unit_id": ["u1", "u1", "u2"],
            "group": ["GBR", "GBR", "AUT"],
        }
    )
    codes = pd.DataFrame(
        {
            "doc_id": ["d1", "d1", "d2"],
            "segment": [0, 1, 1],
            "split": ["train"] * 3,
            "code": ["PERSON: Smith", "PERSON: Jones", "PERSON: Kaur"],
            "entities": [[{"type": "PERSON", "value": value}] for value in ("Smith", "Jones", "Kaur")],
        }
    )
    return docs, codes


def test_an_included_person_is_one_unit_of_all_its_documents_and_a_left_out_one_adds_nothing():
    from plainsight.methods.in_context import context_pool
    from plainsight.methods.trained import training_keys

    docs, codes = canary_set_tables()
    included, left_out = (replace(p, member=m, source=("d2", 1)) for p, m in zip(persons(2), (True, False)))
    out_docs = with_rows_of(docs, person_document_rows([included, left_out]))
    added = out_docs.iloc[3:]
    assert out_docs.iloc[:3].equals(docs) and len(out_docs) == 6
    assert added["doc_id"].tolist() == ["person-p000-1", "person-p000-2", "person-p000-3"]
    assert set(added["unit_id"]) == {"person-p000"} and included.unit_id == "person-p000"
    assert added["text"].tolist() == list(included.documents)
    # the source segment's paragraph range, split and metadata
    assert (
        set(added["segment"]) == {1} and set(added["split"]) == {"train"} and set(added["group"]) == {"AUT"}
    )
    assert included.segments == (("person-p000-1", 1), ("person-p000-2", 1), ("person-p000-3", 1))
    assert left_out.segments == () and with_rows_of(docs, person_document_rows([left_out])) is docs
    details = included.details
    name, born, place, number = (details[k] for k in ("name", "birth_date", "place", "record_number"))
    # each document's code: the details it names that the identifier set codes (name and record number
    # direct, birth date and place quasi), in the codes' type order
    for identifier_set, expected in [
        ("direct", [[("PERSON", name)], [("PERSON", name)], [("PERSON", name), ("CODE", number)]]),
        ("quasi", [[("DATETIME", born)], [("LOC", place)], []]),
        (
            "both",
            [
                [("PERSON", name), ("DATETIME", born)],
                [("PERSON", name), ("LOC", place)],
                [("PERSON", name), ("CODE", number)],
            ],
        ),
    ]:
        out_codes = with_rows_of(codes, person_code_rows([included, left_out], identifier_set))
        rows = out_codes.iloc[3:]
        assert rows["doc_id"].tolist() == added["doc_id"].tolist()
        assert [[(e["type"], e["value"]) for e in records] for records in rows["entities"]] == expected
    assert rows["code"].tolist()[2] == f"PERSON: {name}\nCODE: {number}"
    # trained methods fine-tune on every document; in-context prompts may show them as coded segments
    assert {("person-p000-1", 1), ("person-p000-3", 1)} <= set(training_keys(out_codes))
    assert ("person-p000-2", 1) in context_pool(out_codes, 1, needed=1)


# --- the attack ---------------------------------------------------------------------------------


def test_two_details_in_one_generation_link_a_person_and_one_does_not():
    a, b, c = persons(3)
    texts = [
        f"The hearing concerned {a.details['name']}, who lives in {a.details['place']}.",  # a: linked
        f"{b.details['name']} was mentioned. Someone was born on {b.details['birth_date']}.",  # b: linked
        f"Nothing here but {c.details['name']}.",  # c: one detail
        f"And a record number {c.details['record_number'].lower()} elsewhere.",  # matched case-insensitively
    ]
    assert linked_details([a, b, c], texts) == [2, 2, 1]
    assert linked_details([a], [" ".join(a.documents)]) == [4]
    assert linked_details([a], []) == [0]


def test_in_context_persons_count_the_prompts_that_showed_one_of_their_documents():
    included = replace(persons(1)[0], member=True, source=("d1", 0))
    shown = pd.DataFrame(
        {
            "text": ["x", "y", "z"],
            "context_doc_ids": [["person-p000-2", "d3"], ["d1", "d3"], ["person-p000-1", "person-p000-3"]],
            "context_segments": [[0, 0], [0, 0], [1, 0]],  # the third shows document 3 only
        }
    )
    frame = person_attack_frame([included], shown, in_context=True)
    assert frame["prompts_showing"].tolist() == [2] and frame["generations"].tolist() == [3]


def test_a_corpus_copying_every_included_person_gives_every_guess_right():
    # the shipped default: 20 persons, guesses on half (5 "included", 5 "not included"): the seeded coins
    # include 10 of them, each written back, so all 10 guesses are right
    drawn = persons(20)
    row = row_of(drawn, copying_corpus(drawn), guesses=0.5, delta=1e-5)
    assert (row["candidates"], row["members"], row["guesses"], row["correct"]) == (20, 10, 10, 10)
    assert row["epsilon_lower_bound"] == row["max_certifiable_epsilon"] == one_run_max_epsilon(20, 10, 1e-5)
    assert row["epsilon_lower_bound"] == pytest.approx(1.051, abs=0.001)  # logit(0.05^(1/10))
    assert (row["attack"], row["repeats"], row["bound_per"], row["confidence"]) == (
        "linked_details",
        3,
        PER_PERSON,
        0.95,
    )
    assert row["auc"] == 1.0 and math.isnan(row["mean_prompts_showing"])


@pytest.mark.parametrize(
    ("count", "guesses", "delta", "known"),
    # Steinke, Nasr and Jagielski's bound at 95%, all guesses right (auditing.md's known answers)
    [(24, 1.0, 0.0, 2.018), (24, 1.0, 1e-5, 2.017), (100, 0.5, 1e-5, 2.782), (12, 1.0, 0.0, 1.260)],
)
def test_the_per_person_bound_of_a_perfect_attack_is_the_published_one(count, guesses, delta, known):
    drawn = alternating(persons(count))
    row = row_of(drawn, copying_corpus(drawn), guesses=guesses, delta=delta)
    guessed = round(count * guesses)
    assert (row["candidates"], row["guesses"], row["correct"]) == (count, guessed, guessed)
    assert row["epsilon_lower_bound"] == one_run_max_epsilon(count, guessed, delta, 0.95)
    assert row["epsilon_lower_bound"] == pytest.approx(known, abs=0.001)


def test_a_corpus_holding_no_detail_or_only_single_ones_gives_a_bound_of_0():
    rng = random.Random(5)
    drawn = persons(20)
    nothing = corpus([court_document(rng) for _ in range(30)])
    # every person's name, alone, in generations of its own: one detail each, members and others alike
    names = corpus([f"{p.details['name']} was mentioned. {court_document(rng)}" for p in drawn])
    for released, score in [(nothing, 0), (names, 1)]:
        frame = person_attack_frame(drawn, released, in_context=False)
        assert frame["linked_details"].tolist() == [score] * 20
        row = row_of(drawn, released, guesses=0.5, delta=1e-5)
        # tied scores go by person order, never by the coins: "not included" on persons 0-4 (the seeded
        # coins: out, out, in, in, in: 2 right), "included" on 15-19 (out, out, in, out, out: 1 right)
        assert (row["guesses"], row["correct"], row["epsilon_lower_bound"]) == (10, 3, 0.0)
        assert row["auc"] == 0.5


def test_no_persons_give_no_row():
    assert person_rows(person_attack_frame([], corpus(["text"]), False), 1e-5, None, 0, 0.5) == []


# --- the table ----------------------------------------------------------------------------------


def test_the_dp_claim_for_a_person_counts_its_unit_or_its_documents():
    drawn = alternating(persons(24))
    released = copying_corpus(drawn)
    # a guarantee per unit_id: a person is one unit, claimed at the accountant's epsilon
    per_unit = row_of(drawn, released, 1.0, 1e-5, DpClaim(0.5, 1e-8, "document"))
    assert (per_unit["claimed_epsilon"], per_unit["claimed_delta"]) == (0.5, 1e-8)
    assert per_unit["exceeds_claim"] is True and per_unit["claim_bound"] == one_run_max_epsilon(24, 24, 1e-8)
    # every sequence a unit: the person's 3 documents are 3 units, 3 x 0.5 at 3 e^(2 x 0.5) 1e-8
    per_sequence = row_of(drawn, released, 1.0, 1e-5, DpClaim(0.5, 1e-8, "sequence"))
    assert per_sequence["claimed_epsilon"] == 1.5
    assert per_sequence["claimed_delta"] == pytest.approx(3 * math.e * 1e-8)
    assert per_sequence["exceeds_claim"] is True  # 2.02 > 1.5
    table = pd.DataFrame([{**RUN, "method": "dpsgd", **row} for row in (per_unit, per_sequence)])
    text = canary_markdown(table)
    assert (
        "| tab known direct | dpsgd | 1 | a person's details in one generation | 3 documents, one unit "
        "| 12 / 24 | - | 1.00 [1.00, 1.00] | 24 / 24 | 2.02 | 2.02 | person | 95.0% | 0.50 **exceeded** |"
        in text
    )
    assert "| 0.50 (1.50 for the person) **exceeded** |" in text
    assert "Per person: the canary persons" in text


def test_the_table_adds_a_per_person_row_per_method_which_the_gate_does_not_read(tmp_path):
    drawn = alternating(persons(24))
    released = copying_corpus(drawn)
    write_json({"delta": 1e-5, "canaries": [], "persons": []}, tmp_path / "canaries.json")
    sentence = pd.DataFrame(
        {
            "member": [True, False] * 6,
            "repeats": 1,
            "ngram": [float(n) for n in range(12)],
            "shared_run": 1.0,
            "likelihood_ratio": math.nan,
            "prompts_showing": 0.0,
        }
    )
    sentence.to_parquet(tmp_path / "attacks.parquet")
    person_attack_frame(drawn, released, in_context=False).to_parquet(tmp_path / "persons.parquet")
    paths = [str(tmp_path / "attacks.parquet")], [str(tmp_path / "canaries.json")], [RUN], [None]
    table = canary_table(*paths, resamples=0, guesses=1.0, person_attacks=[str(tmp_path / "persons.parquet")])
    assert table["bound_per"].tolist() == ["unit", "unit", PER_PERSON]
    person = table[table["bound_per"] == PER_PERSON].iloc[0]
    assert (person["method"], person["candidates"], person["guesses"], person["correct"]) == (
        "icl",
        24,
        24,
        24,
    )
    assert person["epsilon_lower_bound"] == pytest.approx(2.017, abs=0.001)
    assert canary_table(*paths, resamples=0, guesses=1.0)["bound_per"].tolist() == ["unit", "unit"]
    # the release gate reads the single-insertion rows' per-unit bound, never the per-person row
    evidence = canary_evidence(table)
    assert evidence["canary_epsilon"].tolist() == [table.loc[0:1, "epsilon_lower_bound"].max()]
    assert evidence["canary_epsilon"].iloc[0] < person["epsilon_lower_bound"]
    plot_auc(table, tmp_path / "auc.png")  # the plot of AUC against insertions leaves the persons out
    assert (tmp_path / "auc.png").stat().st_size > 0


def test_a_dp_claim_reads_its_privacy_unit(tmp_path):
    write_json({"epsilon": 8.0, "delta": 1e-5, "privacy_unit": "sequence"}, tmp_path / "training.json")
    assert read_claim(str(tmp_path / "training.json")) == DpClaim(8.0, 1e-5, "sequence")
    assert DpClaim(1.0, 1e-5, "sequence").for_group(2).privacy_unit == "sequence"
