"""The audit of what a release bundle ships: the kept rows of every seed judged against the run's controls,
so that a bundle of copied training documents fails, one copied document among the kept texts moves the
verdict, and the audit reads exactly the rows the data file holds."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pandas as pd
import pytest

from conftest import REPO_ROOT
from plainsight.audit import nearest
from plainsight.audit.criteria import Gate
from plainsight.audit.outcomes import BY_CONSTRUCTION, FAIL, INCONCLUSIVE, PASS
from plainsight.audit.released import TextAuditSettings
from plainsight.audit.released_text_job import Judging, RunInputs, copying_corpus
from plainsight.data.segments import segment_texts
from plainsight.evaluation.privacy import run_privacy_metrics
from plainsight.report.bundle_audit import (
    NOTHING_KEPT,
    Bundle,
    BundleAuditFiles,
    BundleEvidence,
    ShippedSeed,
    bundle_audit,
    write_bundle_audit,
)
from plainsight.report.release import build_release, shipped_verdict, verdict_record
from plainsight.report.release_filter import kept_rows, read_seeds, release_filter, write_kept
from plainsight.report.release_run import BundleSettings, ReleaseRun
from plainsight.report.summary import NOT_FOR_RELEASE
from test_audit_table import scores_frame
from test_released import METRICS, bag_of_words, corpus_tables, icl_corpus

NAME = "Hasslund"  # the one real identifier of the run: a direct value of training segment t0 alone
ICL = Bundle("tab", "known", "direct", "icl")
SETTINGS = TextAuditSettings(verbatim_ngram=10, bootstrap=50, seed=1)
NAMES = {"icl": "ICL", "ft": "Fine-tuning"}
SUMMARIES = pd.DataFrame({"segment": [-1], "pipp": [0.0]})


@pytest.fixture(autouse=True)
def bag_of_words_features(monkeypatch):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)


def run_tables():
    """Eight training segments of ten words and a tag each, four held out; a copy of t0 holds the real
    name, a copy of any other training segment no identifier."""
    docs, codes, _ = corpus_tables(4)
    docs.loc[docs["doc_id"] == "t0", "text"] += f" {NAME}"
    start = docs.loc[docs["doc_id"] == "t0", "text"].item().index(NAME)
    spans = pd.DataFrame(
        {
            "doc_id": ["t0"],
            "segment": [0],
            "start": [start],
            "end": [start + len(NAME)],
            "text": [NAME],
            "entity_type": ["PERSON"],
            "identifier_type": ["DIRECT"],
            "entity_id": ["e1"],
            "mention_id": ["m1"],
            "raw_label": ["PERSON"],
        }
    )
    return docs, codes, spans


def generations(texts: list[str], seed: int = 1, method: str = "icl") -> pd.DataFrame:
    """An in-context corpus: generation n shows training segments n and n + 1 (mod 8)."""
    corpus = icl_corpus(texts, [[n % 8, (n + 1) % 8] for n in range(len(texts))])
    return corpus.assign(
        method=method,
        seed=seed,
        segment=0,
        fictional_entities=[[]] * len(texts),
        fictional_code="PERSON: Teodor Aalto",
    )


def own_words(docs: pd.DataFrame, count: int) -> list[str]:
    """Generation n: its first context's words in reverse order, so it shares no two-word run with it."""
    texts = segment_texts(docs)
    return [" ".join(reversed(texts[(f"t{n % 8}", 0)].split())) for n in range(count)]


def negative_control() -> pd.DataFrame:
    return icl_corpus([f"lorem ipsum dolor sit amet {n}" for n in range(8)], [[n] for n in range(8)])


def audit(kept: pd.DataFrame, tables, gate: Gate | None = None, bundle: Bundle = ICL, **seed) -> dict:
    """The record of one seed's kept rows, judged by `gate` (the default gate where None)."""
    docs, codes, spans = tables
    return bundle_audit(
        bundle,
        [ShippedSeed(int(kept["seed"].iloc[0]) if len(kept) else 1, kept, negative_control(), **seed)],
        RunInputs(codes, docs, spans, "direct", METRICS),
        SETTINGS,
        Judging(gate or Gate()),
        BundleEvidence(NAMES),
    )


def bundle_run(record: dict, drop: str = "any_identifier") -> ReleaseRun:
    """The bundle's run as rule release_bundle builds it, its verdict read from its audit record."""
    return ReleaseRun(
        "tab",
        "known",
        "direct",
        "icl",
        "smollm2-135m",
        {"max_new_tokens": 8},
        BundleSettings(drop),
        verdict=shipped_verdict(record, "results/tab/known/direct/release/icl/audit.json"),
        audit=record,
    )


def filtered_copies(tables):
    """A method that copies the first context document of each of eight generations, through the
    default release filter."""
    docs, codes, spans = tables
    copying = copying_corpus(generations(["x"] * 8), segment_texts(docs))
    metrics, _, _ = run_privacy_metrics("icl", copying, docs, spans, codes, "direct", METRICS, 1)
    filtered = release_filter(copying, metrics, spans, codes, "any_identifier")
    return copying, filtered, kept_rows(copying, filtered)


def test_a_bundle_of_copied_training_documents_fails_and_its_card_says_why():
    tables = run_tables()
    copying, filtered, kept = filtered_copies(tables)
    # the filter leaves out the copy of t0, which holds the real name; the seven other copies hold no
    # identifier and ship
    assert filtered["left_out"].tolist() == [True] + [False] * 7 and len(kept) == 7
    # judged as rule release_audit judges a filtered bundle, under a policy that accepts empirical evidence
    record = audit(kept, tables, Gate(policy="empirical_evidence"), drop="any_identifier")
    # the filter dropped what the leak detectors find: those criteria hold by construction, no evidence
    leak = next(c for c in record["criteria_by_seed"] if c["criterion"] == "leak_excess")
    assert leak["outcome"] == BY_CONSTRUCTION and "release filter (any_identifier)" in leak["reason"]
    # seven copies of their own context, no control hit: the verbatim excess is 1 with the paired lower
    # bound CP_low(7 of 7) - CP_high(0 of 7) = 2 x 0.025^(1/7) - 1 = 0.181 > 0.05 (one-sided 97.5% each)
    verbatim = next(c for c in record["criteria_by_seed"] if c["criterion"] == "verbatim")
    assert verbatim["outcome"] == FAIL and ">= 0.18 (max 0.05)" in verbatim["reason"]
    assert record["seed_rows"][0]["leak_verbatim_excess_low"] == pytest.approx(2 * 0.025 ** (1 / 7) - 1)
    assert record["row"]["verdict"] == FAIL and record["generations"] == {"1": 7}

    run = bundle_run(record)
    bundle, card = build_release(run, copying, filtered, kept, SUMMARIES)
    body = card.split("---\n", 2)[2].lstrip()
    assert body.startswith(f"# {NOT_FOR_RELEASE}: synthetic corpus: tab, icl")
    assert "The privacy audit's verdict on the texts it ships is FAIL, not PASS" in body
    assert "**FAIL** (the privacy audit of the 7 generations this bundle ships (7 of seed 1)" in body
    assert "- verbatim: FAIL (" in body
    shipped = verdict_record(run)
    assert shipped["verdict"] == FAIL and shipped["release"] == NOT_FOR_RELEASE
    assert shipped["data_sha256"] == hashlib.sha256(bundle.encode("utf-8")).hexdigest()
    assert {key: verbatim[key] for key in ("seed", "criterion", "outcome")} == {
        "seed": 1,
        "criterion": "verbatim",
        "outcome": FAIL,
    }


def test_one_copied_training_document_among_the_kept_texts_changes_the_verdict():
    tables = run_tables()
    docs = tables[0]
    kept = generations(own_words(docs, 24))
    # a gate on verbatim copying alone, its maximum between the two upper bounds below
    gate = Gate(criteria=("verbatim",), verbatim_excess_max=0.175)
    clean = audit(kept, tables, gate)
    copied = kept.copy()
    copied.loc[5, "text"] = segment_texts(docs)[("t5", 0)]  # generation 5's first context, word for word
    with_copy = audit(copied, tables, gate)
    # no hit in 24 pairs: the excess's upper bound is CP_high(0 of 24) = 1 - 0.025^(1/24) = 0.142 <= 0.175
    assert clean["seed_rows"][0]["leak_verbatim_excess_high"] == pytest.approx(1 - 0.025 ** (1 / 24))
    assert clean["row"]["verdict"] == PASS
    # one member hit: excess 1/24, its upper bound CP_high(1 of 24) = 0.211 above the maximum, and its lower
    # bound CP_low(1 of 24) - CP_high(0 of 24) below it
    row = with_copy["seed_rows"][0]
    assert row["leak_verbatim_excess"] == pytest.approx(1 / 24)
    assert 0.20 < row["leak_verbatim_excess_high"] < 0.22 and row["leak_verbatim_excess_low"] < 0
    assert with_copy["row"]["verdict"] == INCONCLUSIVE
    assert with_copy["would_decide"] and with_copy["would_decide"][0].startswith("seed 1: verbatim: ")
    assert with_copy["data_sha256"] != clean["data_sha256"]


def test_the_audit_reads_exactly_the_rows_the_bundle_ships(tmp_path):
    tables = run_tables()
    docs, codes, spans = tables
    seeds = {1: filtered_copies(tables)[0], 2: generations(own_words(docs, 4), seed=2)}
    paths = {}
    for seed, corpus in seeds.items():
        metrics, _, _ = run_privacy_metrics("icl", corpus, docs, spans, codes, "direct", METRICS, seed)
        paths[seed] = {
            "kept": tmp_path / f"seed{seed}_kept.parquet",
            "filter": tmp_path / f"seed{seed}_f.parquet",
        }
        write_kept(corpus, metrics, spans, codes, "any_identifier", paths[seed])
    negative = tmp_path / "negative_control.parquet"
    negative_control().to_parquet(negative)
    kept_files = [str(paths[seed]["kept"]) for seed in seeds]
    files = BundleAuditFiles(
        list(seeds),
        kept_files,
        [str(negative)] * 2,
        [],
        [],
        [],
        str(REPO_ROOT / "resources/paper_tables.yaml"),
    )
    record = write_bundle_audit(
        ICL,
        files,
        RunInputs(codes, docs, spans, "direct", METRICS),
        SETTINGS,
        Judging(Gate()),
        tmp_path / "a.json",
    )
    assert json.loads((tmp_path / "a.json").read_text(encoding="utf-8")) == record

    kept = read_seeds(kept_files)
    filtered = read_seeds([str(paths[seed]["filter"]) for seed in seeds])
    corpora = pd.concat(list(seeds.values()), ignore_index=True)
    bundle, _ = build_release(bundle_run(record), corpora, filtered, kept, SUMMARIES)
    rows = [json.loads(line) for line in bundle.splitlines()]
    # seed 1 ships the seven copies its filter kept, seed 2 three of its four texts (the first, t0's words
    # reversed, holds the real name); the audit judged the same rows: its counts per seed, and the SHA-256
    # of the very data file
    assert record["generations"] == {"1": 7, "2": 3}
    assert [row["generations"] for row in record["seed_rows"]] == [7, 3]
    assert [(row["seed"], row["text"]) for row in rows] == list(zip(kept["seed"], kept["text"]))
    assert not {seeds[1]["text"].iloc[0], seeds[2]["text"].iloc[0]} & {row["text"] for row in rows}
    assert record["data_sha256"] == hashlib.sha256(bundle.encode("utf-8")).hexdigest()

    # a kept text changed after the audit, or a row the filter left out, stops the bundle
    changed = kept.copy()
    changed.loc[0, "text"] = "written after the audit"
    with pytest.raises(ValueError, match="not those its audit judged"):
        build_release(bundle_run(record), corpora, filtered, changed, SUMMARIES)
    with pytest.raises(ValueError, match="not those the release filter kept"):
        build_release(bundle_run(record), corpora, filtered, kept.iloc[1:], SUMMARIES)


def test_a_bundle_that_ships_nothing_has_nothing_to_pass():
    tables = run_tables()
    empty = generations(own_words(tables[0], 2)).iloc[:0]
    record = audit(empty, tables)
    assert record["row"] == {
        "verdict": INCONCLUSIVE,
        "verdict_reasons": NOTHING_KEPT,
        "threat_model": "the adversary holds the released text and knows the rest of the corpus",
    }
    assert record["generations"] == {"1": 0} and record["seed_rows"] == []
    assert bundle_run(record).stamped


def test_the_adapter_attacks_judge_a_trained_bundle_only_where_the_adapter_is_released():
    tables = run_tables()
    ft = Bundle("tab", "known", "direct", "ft")
    kept = generations(own_words(tables[0], 6), method="ft")
    adapter = Gate(threat_model="released_text_and_adapter", criteria=("verbatim",))
    # ft's loss separates its six members from the six held out (test_audit_table.scores_frame): AUC 1 in
    # every resample, above the maximum 0.6
    record = audit(kept, tables, adapter, ft, scores=scores_frame())
    outcomes = {c["criterion"]: c["outcome"] for c in record["criteria_by_seed"]}
    assert outcomes == {"verbatim": INCONCLUSIVE, "adapter_membership": FAIL}
    assert record["row"]["mia_loss_auc"] == 1.0 and record["row"]["verdict"] == FAIL
    text_only = audit(kept, tables, replace(adapter, threat_model="released_text"), ft)
    assert {c["criterion"] for c in text_only["criteria_by_seed"]} == {"verbatim"}
    assert text_only["row"].get("mia_loss_auc") is None
