"""The re-identification attack: real units ranked by the rare evidence a generation shares with them."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

from plainsight.audit.reidentification import (
    MAX_HOLDERS,
    RealUnits,
    found_among_best,
    reidentification,
)
from plainsight.audit.released_text_job import copying_corpus
from plainsight.audit.roc import auc_resamples, draw_counts
from plainsight.data.segments import segment_texts
from plainsight.errors import InputError
from plainsight.evaluation.intervals import percentile_interval

SPAN_COLUMNS = ["doc_id", "segment", "start", "end", "text", "entity_type", "identifier_type"]
NO_SPANS = pd.DataFrame(columns=SPAN_COLUMNS)


def random_text(rng: random.Random, vocabulary: int, length: int) -> str:
    return " ".join(f"w{rng.randrange(vocabulary)}" for _ in range(length))


def docs_table(texts: dict[str, str], held_out: set[str] = frozenset(), units: dict[str, str] | None = None):
    """One segment per document, its unit the document itself unless `units` names another."""
    units = units or {}
    return pd.DataFrame(
        {
            "doc_id": list(texts),
            "segment": 0,
            "split": ["test" if doc in held_out else "train" for doc in texts],
            "text": list(texts.values()),
            "unit_id": [units.get(doc, doc) for doc in texts],
        }
    )


def split_keys(docs: pd.DataFrame):
    keys = list(zip(docs["doc_id"], docs["segment"]))
    return (
        [k for k, split in zip(keys, docs["split"]) if split == "train"],
        [k for k, split in zip(keys, docs["split"]) if split != "train"],
    )


def units_of(docs: pd.DataFrame, spans: pd.DataFrame = NO_SPANS) -> RealUnits:
    return RealUnits.of(docs, spans, *split_keys(docs))


def random_corpus(trained: int, held_out: int, vocabulary: int, length: int, seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    texts = {f"d{n}": random_text(rng, vocabulary, length) for n in range(trained + held_out)}
    return docs_table(texts, held_out={f"d{n}" for n in range(trained, trained + held_out)})


def attack(units, generations, sources, controls=None, members=None, negative_control=None, bootstrap=200):
    controls = controls if controls is not None else [[] for _ in generations]
    members = members if members is not None else sorted({doc for doc_ids in sources for doc in doc_ids})
    return reidentification(units, generations, sources, controls, members, bootstrap, 1, negative_control)


def test_a_copied_document_ranks_its_unit_first_and_its_control_at_chance():
    # 30 trained units, 10 held out, 30 random words each from 5,000: no two share a word 3-gram
    docs = random_corpus(30, 10, vocabulary=5000, length=30, seed=3)
    contexts = [[n, (n + 1) % 30] for n in range(30)]
    corpus = pd.DataFrame(
        {
            "generation_id": range(30),
            "text": "",
            "context_doc_ids": [[f"d{n}" for n in shown] for shown in contexts],
            "context_segments": [[0, 0]] * 30,
        }
    )
    copying = copying_corpus(corpus, segment_texts(docs))  # the positive control: the first context's text
    record = attack(
        units_of(docs),
        copying["text"].tolist(),
        list(copying["context_doc_ids"]),
        controls=[[f"d{(n + 2) % 30}", f"d{(n + 3) % 30}"] for n in range(30)],
    )
    assert record["reidentification_top1"] == 1.0 and record["reidentification_top5"] == 1.0
    # each control unit ties with the 38 other units at 0, behind the copied one: never first, and among
    # the first five with probability 1 - C(37, 4) / C(39, 4) = 1 - (35 x 34) / (39 x 38)
    assert record["reidentification_top1_control"] == 0.0
    assert record["reidentification_top5_control"] == pytest.approx(1 - 35 * 34 / (39 * 38), abs=1e-12)
    # every trained unit was copied once, no held-out one: its best score tells them apart
    assert record["reidentification_units"] == 40
    assert (
        record["text_mia_reidentification_members"] == record["text_mia_reidentification_non_members"] == 10
    )
    assert record["text_mia_auc_reidentification"] == 1.0


def test_texts_sharing_no_rare_evidence_rank_at_chance():
    docs = random_corpus(30, 10, vocabulary=5000, length=30, seed=4)
    generations = [" ".join(f"z{n}{k}" for k in range(20)) for n in range(30)]  # no real word at all
    sources = [[f"d{n}", f"d{(n + 1) % 30}"] for n in range(30)]
    record = attack(units_of(docs), generations, sources, negative_control=np.zeros((40, 1)))
    # every unit ties at 0: two wanted units of 40 are first with probability 2/40, among five with
    # 1 - C(38, 5) / C(40, 5) = 1 - (35 x 34) / (40 x 39)
    assert record["reidentification_top1"] == pytest.approx(2 / 40, abs=1e-12)
    assert record["reidentification_top5"] == pytest.approx(1 - 35 * 34 / (40 * 39), abs=1e-12)
    assert math.isnan(record["reidentification_top1_control"])  # no generation has a control
    assert record["text_mia_auc_reidentification"] == 0.5
    assert record["text_mia_auc_reidentification_low"] == record["text_mia_auc_reidentification_high"] == 0.5
    assert record["text_mia_excess_reidentification"] == 0.0


def test_on_random_text_the_auc_is_near_one_half_and_the_ranks_near_chance():
    # 300 trained and 300 held-out units of 25 words from 40: random 3-grams recur, so every unit scores
    docs = random_corpus(300, 300, vocabulary=40, length=25, seed=5)
    rng = random.Random(6)
    generations = [random_text(rng, 40, 25) for _ in range(300)]
    sources = [[f"d{rng.randrange(300)}"] for _ in generations]
    controls = [[f"d{rng.randrange(300)}"] for _ in generations]
    units = units_of(docs)
    negative = units.index.unit_scores([random_text(rng, 40, 25) for _ in range(300)])
    members = [f"d{n}" for n in range(300)]  # a trained method: every training unit is a member
    record = attack(units, generations, sources, controls, members, negative)
    assert record["text_mia_reidentification_members"] == 300
    # the AUC's null standard error is sqrt(601 / (12 x 300 x 300)) = 0.024: 0.1 is four of them
    assert abs(record["text_mia_auc_reidentification"] - 0.5) < 0.1
    assert abs(record["text_mia_auc_reidentification_negative"] - 0.5) < 0.1
    assert abs(record["text_mia_excess_reidentification"]) < 0.1
    assert record["text_mia_auc_reidentification_low"] < 0.5 < record["text_mia_auc_reidentification_high"]
    # one wanted unit of 600: 1/600 first, about 5/600 among five (300 generations: sd 0.005)
    for side in ("", "_control"):
        assert record[f"reidentification_top1{side}"] < 0.02
        assert abs(record[f"reidentification_top5{side}"] - 5 / 600) < 0.03


def idf_corpus() -> pd.DataFrame:
    """20 units: one holds "alpha bravo charlie", five "delta echo foxtrot", eleven (more than
    MAX_HOLDERS) "golf hotel india", each between words of its own."""
    phrases = ["alpha bravo charlie"] + ["delta echo foxtrot"] * 5 + ["golf hotel india"] * 11 + [""] * 3
    texts = {f"d{n}": f"own{n}a own{n}b {phrase} own{n}c own{n}d" for n, phrase in enumerate(phrases)}
    return docs_table(texts, held_out={"d17", "d18", "d19"})


def test_rare_evidence_weighs_log_n_over_its_holders_and_common_evidence_nothing():
    assert MAX_HOLDERS == 10
    units = units_of(idf_corpus())
    scores = units.index.scores(["alpha bravo charlie delta echo foxtrot golf hotel india"]).toarray()[0]
    row = units.index.row
    assert scores[row["d0"]] == pytest.approx(math.log(20 / 1))  # one holder
    assert all(scores[row[f"d{n}"]] == pytest.approx(math.log(20 / 5)) for n in range(1, 6))
    assert all(scores[row[f"d{n}"]] == 0.0 for n in range(6, 20))  # 11 holders: points to no one
    # the unit sharing the rare n-gram ranks first; one of the five sharing the common one ties with the
    # four others behind it: among the first five with probability 1 - C(4, 4) / C(5, 4) = 4/5
    for source, top1, top5 in (("d0", 1.0, 1.0), ("d3", 0.0, 0.8)):
        record = attack(units, ["alpha bravo charlie delta echo foxtrot"], [[source]], members=["d0"])
        assert record["reidentification_top1"] == top1
        assert record["reidentification_top5"] == pytest.approx(top5, abs=1e-12)


def test_identifier_values_are_evidence_and_a_value_that_is_an_ngram_counts_once():
    texts = {
        "d0": "one two Henrik Hasslund three four",
        "d1": "five six Anna Maria Berg seven eight",
        "d2": "nine ten Strasbourg eleven twelve",
        "d3": "thirteen fourteen fifteen sixteen",
    }
    docs = docs_table(texts, held_out={"d3"})
    spans = pd.DataFrame(
        [
            ("d0", 0, 8, 23, "Henrik  Hasslund", "PERSON", "DIRECT"),
            ("d1", 0, 9, 24, "Anna Maria Berg", "PERSON", "DIRECT"),
            ("d2", 0, 9, 19, "Strasbourg", "LOC", "NO_MASK"),  # not an identifier: no evidence of its own
        ],
        columns=SPAN_COLUMNS,
    )
    units = units_of(docs, spans)
    row = units.index.row
    # no 3-gram of the generation occurs in a unit: the values alone link it, each weighing log(4 / 1)
    scores = units.index.scores(["we met henrik hasslund in strasbourg with anna maria berg"]).toarray()[0]
    assert scores[row["d0"]] == pytest.approx(math.log(4))
    assert scores[row["d1"]] == pytest.approx(math.log(4))  # the value and the same 3-gram: once
    assert scores[row["d2"]] == 0.0 and scores[row["d3"]] == 0.0


def test_the_units_are_ranked_not_the_documents():
    # p1 and p2 are one patient's notes: a 3-gram both hold and q1 holds too has two holders, not three
    texts = {
        "p1": "kilo lima mike alpha1",
        "p2": "beta2 kilo lima mike gamma2",
        "q1": "kilo lima mike delta3",
        "r1": "epsilon4 zeta4 eta4",
        "s1": "theta5 iota5 kappa5",
    }
    docs = docs_table(texts, held_out={"s1"}, units={"p1": "patient", "p2": "patient"})
    units = units_of(docs)
    assert units.index.units == ("patient", "q1", "r1", "s1")
    scores = units.index.scores(["kilo lima mike"]).toarray()[0]
    assert scores[units.index.row["patient"]] == pytest.approx(math.log(4 / 2))
    # a generation written from p1 that copies p2 points to p1's unit
    record = attack(units, ["beta2 kilo lima mike gamma2"], [["p1"]])
    assert record["reidentification_top1"] == 1.0


def test_the_attack_is_deterministic_and_ignores_the_row_order_of_the_real_corpus():
    docs = random_corpus(40, 20, vocabulary=60, length=20, seed=7)
    rng = random.Random(8)
    generations = [random_text(rng, 60, 20) for _ in range(50)]
    sources = [[f"d{rng.randrange(40)}", f"d{rng.randrange(40)}"] for _ in generations]
    controls = [[f"d{rng.randrange(40)}"] for _ in generations]
    first = attack(units_of(docs), generations, sources, controls, negative_control=None)
    shuffled = docs.sample(frac=1.0, random_state=9).reset_index(drop=True)
    assert attack(units_of(docs), generations, sources, controls) == first
    assert attack(units_of(shuffled), generations, sources, controls) == first


def test_bad_input_names_the_file_or_the_mismatch():
    docs = random_corpus(3, 2, vocabulary=50, length=10, seed=1)
    with pytest.raises(InputError, match="docs.parquet: no unit_id column"):
        RealUnits.of(docs.drop(columns="unit_id"), NO_SPANS, *split_keys(docs), docs_file="docs.parquet")
    # a held-out segment of a trained unit: no unit is held out
    one_unit = docs.assign(unit_id="u")
    with pytest.raises(InputError, match="no held-out unit"):
        RealUnits.of(one_unit, NO_SPANS, *split_keys(docs))
    with pytest.raises(ValueError, match="2 generations, 1 source lists and 2 control lists"):
        reidentification(units_of(docs), ["a", "b"], [[]], [[], []], ["d0"], 0, 1)


def test_ties_among_the_best_are_broken_by_chance_exactly():
    positive = {0: 3.0, 1: 2.0, 2: 2.0, 3: 2.0}  # of five units: unit 4 scores 0
    assert found_among_best(positive, [2], 5, 1) == 0.0  # one unit above it
    assert found_among_best(positive, [2], 5, 2) == pytest.approx(1 / 3)  # one place among three tied
    assert found_among_best(positive, [1, 2], 5, 2) == pytest.approx(2 / 3)
    assert found_among_best(positive, [2], 5, 4) == 1.0  # every tied unit fits
    assert found_among_best(positive, [4, 0], 5, 1) == 1.0  # the best wanted unit counts
    assert found_among_best(positive, [4], 5, 4) == 0.0 and found_among_best(positive, [4], 5, 5) == 1.0
    # nothing shared: two wanted of 40 tied at 0, among the first five with 1 - (38 x 37 x 36 x 35 x 34) /
    # (40 x 39 x 38 x 37 x 36)
    assert found_among_best({}, [0, 1], 40, 5) == pytest.approx(1 - 35 * 34 / (40 * 39), abs=1e-12)


def test_the_bootstrap_auc_is_scikit_learns_and_pairs_its_draws():
    from sklearn.metrics import roc_auc_score

    member = [True] * 5 + [False] * 4
    score = np.array([0.9, 0.5, 0.5, 0.2, 0.7, 0.5, 0.1, 0.5, 0.3])
    draws = auc_resamples(member, [score, score[::-1]], resamples=50, seed=2)
    observed, drawn = draws.observed, draws.drawn
    # by hand: of 20 pairs, 13 ordered right and 4 ties at 0.5: (13 + 2) / 20
    assert observed[0] == pytest.approx(15 / 20) == roc_auc_score(member, score)
    assert observed[1] == pytest.approx(roc_auc_score(member, score[::-1]))
    # each draw is scikit-learn's AUC of the texts it drew (members, then non-members), for both scores
    rng = np.random.default_rng(2)
    members, non_members = draw_counts(rng, 5, 50), draw_counts(rng, 4, 50)
    for number in range(50):
        chosen = np.concatenate(
            [
                np.repeat(np.arange(5), members[number].astype(int)),
                5 + np.repeat(np.arange(4), non_members[number].astype(int)),
            ]
        )
        label = chosen < 5
        assert drawn[number, 0] == pytest.approx(roc_auc_score(label, score[chosen]))
        assert drawn[number, 1] == pytest.approx(roc_auc_score(label, score[::-1][chosen]))
    assert all(math.isnan(bound) for bound in percentile_interval(np.array([])))  # no draws, no interval
    assert auc_resamples(member, [score], resamples=0).drawn.shape == (0, 1)
