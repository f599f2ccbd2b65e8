"""The released-text audit: membership from nearest synthetic documents, closest records, verbatim
copies, leaks."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from plainsight.audit import NEGATIVE_CONTROL, POSITIVE_CONTROL, control_corpora, nearest
from plainsight.audit.criteria import Gate
from plainsight.audit.gate import verdict
from plainsight.audit.nearest import embed, words
from plainsight.audit.outcomes import FAIL, PASS
from plainsight.audit.reidentification import RealUnits, reidentification
from plainsight.audit.released import (
    AuditedCorpus,
    TextAuditSettings,
    audit_record,
    member_keys,
    released_text_audit,
)
from plainsight.audit.released_text_job import RunInputs, audit_corpora
from plainsight.audit.roc import paired_auc_difference
from plainsight.audit.shared_runs import longest_shared_with_any
from plainsight.audit.text_evidence import TEXT_MEMBERSHIP_ATTACKS
from plainsight.errors import InputError
from plainsight.evaluation.features import FeatureSettings
from plainsight.evaluation.held_out import in_context_control, trained_control
from plainsight.evaluation.privacy import context_keys, real_values, run_privacy_metrics
from plainsight.methods.registry import method
from plainsight.methods.trained import training_keys
from test_nearest import nearest_table

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
]


def bag_of_words(texts, settings, batch_size=16):
    import numpy as np

    return np.array([[words(text).count(word) for word in WORDS] for text in texts], dtype=np.float32)


def test_longest_shared_with_any_never_spans_two_texts():
    target = words("a b c d e f")
    assert longest_shared_with_any(target, [words("x a b c"), words("d e f y")]) == 3
    assert longest_shared_with_any(target, [words("q a b c d e f")]) == 6
    assert longest_shared_with_any([], [words("a")]) == 0 and longest_shared_with_any(target, []) == 0


def segment_text(number: int) -> str:
    """Ten words of its own per segment, so copies and near neighbours are known."""
    return " ".join(WORDS[(number * 3 + k) % len(WORDS)] for k in range(10)) + f" segment{number}"


def corpus_tables(held_out: int = 4):
    rows = [(f"t{n}", 0, "train", segment_text(n)) for n in range(8)]
    rows += [(f"h{n}", 0, "test", segment_text(20 + n)) for n in range(held_out)]
    docs = pd.DataFrame(rows, columns=["doc_id", "segment", "split", "text"]).assign(annotator="a")
    docs["unit_id"] = docs["doc_id"]
    codes = docs[["doc_id", "segment", "split"]].assign(code="", entities=[[]] * len(docs))
    spans = pd.DataFrame(
        {
            "doc_id": ["t0", "t1", "t5"],
            "segment": [0, 0, 0],
            "start": 0,
            "end": 5,
            "text": ["alpha", "delta", "papa"],
            "entity_type": "PERSON",
            "identifier_type": ["QUASI", "DIRECT", "QUASI"],
            "entity_id": "e",
            "mention_id": "m",
            "raw_label": "PERSON",
        }
    )
    return docs, codes, spans


def icl_corpus(texts: list[str], contexts: list[list[int]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "generation_id": range(len(texts)),
            "text": texts,
            "context_doc_ids": [[f"t{n}" for n in c] for c in contexts],
            "context_segments": [[0] * len(c) for c in contexts],
        }
    )


def test_members_are_context_documents_or_the_fine_tuning_set():
    _docs, codes, _ = corpus_tables()
    corpus = icl_corpus(["x", "y"], [[0, 1], [1, 2]])
    assert member_keys(corpus, codes, method("icl")) == [("t0", 0), ("t1", 0), ("t2", 0)]
    assert member_keys(corpus, codes, method("ft")) == [(f"t{n}", 0) for n in range(8)]
    # RPSG's corpus records the one seed each text rewrote; every training segment votes in Aug-PE
    rewrites = icl_corpus(["x", "y"], [[3], [5]])
    assert member_keys(rewrites, codes, method("rpsg")) == [("t3", 0), ("t5", 0)]
    assert member_keys(icl_corpus(["x"], [[]]), codes, method("aug_pe")) == [(f"t{n}", 0) for n in range(8)]


def test_any_identifier_leak_counts_quasi_values_of_the_contexts_only():
    corpus = icl_corpus(["Mr Alpha came.", "Papa spoke.", "nothing here"], [[0], [0], [5]])
    # "alpha" is a QUASI value of t0 (a context of generation 0); "papa" belongs to t5, not generation
    # 1's context
    docs, codes, spans = corpus_tables()
    real = real_values(docs, spans, "direct", 10, 4)
    contexts = [context_keys(row) for row in corpus.to_dict("records")]
    in_context = in_context_control(corpus, contexts, training_keys(codes), real, seed=1)
    assert in_context["any_identifier_leak"].tolist() == [True, False, False]
    # a trained method's private values are the whole fine-tuning set's
    assert trained_control(corpus, training_keys(codes), real)["any_identifier_leak"].tolist() == [
        True,
        True,
        False,
    ]


def any_identifier_metrics(corpus, codes, docs, spans):
    contexts = [context_keys(row) for row in corpus.to_dict("records")]
    real = real_values(docs, spans, "direct", 10, 4)
    return in_context_control(corpus, contexts, training_keys(codes), real, seed=1)


def run_audit(monkeypatch, corpus, chosen_method="icl", held_out=4):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes, spans = corpus_tables(held_out)
    table = nearest_table(corpus, codes, docs)
    return released_text_audit(
        AuditedCorpus(corpus, any_identifier_metrics(corpus, codes, docs, spans), table),
        codes,
        docs,
        method(chosen_method),
        TextAuditSettings(verbatim_ngram=10, bootstrap=50, seed=1),
    )


def test_a_corpus_that_copies_its_contexts_is_flagged(monkeypatch):
    copies = [segment_text(n) for n in range(4)]
    audit, distances = run_audit(monkeypatch, icl_corpus(copies, [[0, 1], [1, 2], [2, 3], [3, 0]]))
    assert audit.verbatim_share == 1.0 and audit.longest_shared_ngram == 11  # ten words and "segmentN"
    assert audit.text_mia_auc_cosine == 1.0 and audit.text_mia_auc_ngram == 1.0  # members are found
    assert audit.text_mia_members == audit.text_mia_non_members == 4
    assert audit.dcr_synthetic_median == pytest.approx(1.0)
    assert audit.dcr_closer_than_held_out
    # copy 0 holds "alpha" (t0, its context) and copy 1 "delta" (t1, its context); copies 2 and 3 hold none
    # of their contexts' values (copy 2 holds "papa", a value of t5, which is not its context)
    assert audit.any_identifier_leak_share == pytest.approx(0.5)
    assert set(distances["kind"]) == {"synthetic", "held_out"}
    assert (distances["kind"] == "held_out").sum() == 4


def test_a_corpus_unlike_any_real_document_is_not(monkeypatch):
    unrelated = ["zulu zulu zulu yankee", "xray xray whiskey", "victor uniform uniform", "tango tango"]
    audit, _ = run_audit(monkeypatch, icl_corpus(unrelated, [[0, 1], [1, 2], [2, 3], [3, 0]]))
    assert audit.verbatim_share == 0.0 and audit.longest_shared_ngram < 10
    assert audit.any_identifier_leak_share == 0.0


def test_no_held_out_segments_names_the_codes_file(monkeypatch):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes, spans = corpus_tables(0)
    corpus = icl_corpus(["alpha"], [[0]])
    table = nearest_table(corpus, codes, docs)
    with pytest.raises(InputError, match="codes.parquet: no held-out"):
        released_text_audit(
            AuditedCorpus(corpus, any_identifier_metrics(corpus, codes, docs, spans), table),
            codes,
            docs,
            method("icl"),
            TextAuditSettings(bootstrap=0),
            files={"codes": "codes.parquet"},
        )


METRICS = {
    "partial_leak_min_letters": 4,
    "verbatim_ngram": 10,
    "linkage_quasi_min": 2,
    "code_runs": {"entity_types": ["CODE"], "min_digits": 4},
    "document": {"min_words": 5, "max_code_copy_share": 0.5, "max_repeated_4gram_share": 0.5},
}


def measured(corpus, name, docs, spans, codes):
    corpus = corpus.assign(method=name, seed=1, segment=0, fictional_entities=[[]] * len(corpus))
    per_generation, _, counts = run_privacy_metrics(name, corpus, docs, spans, codes, "direct", METRICS, 1)
    return corpus, per_generation, counts


def audit_alone(name, measured_corpus, docs, codes, spans, **options):
    """`audit_corpora` on one method's corpus, as `measured` returns it."""
    corpus, per_generation, counts = measured_corpus
    return audit_corpora(
        {name: corpus},
        {name: per_generation},
        {name: counts},
        RunInputs(codes, docs, spans, "direct", METRICS),
        TextAuditSettings(verbatim_ngram=10, bootstrap=50, seed=1),
        **options,
    )


def test_no_training_segments_names_the_codes_file():
    docs, codes, spans = corpus_tables()
    held_out_only = codes[codes["split"] != "train"]
    corpus = icl_corpus(["alpha"], [[0]])
    with pytest.raises(InputError, match="codes.parquet: no fine-tuning"):
        audit_corpora(
            {"icl": corpus},
            {"icl": pd.DataFrame()},
            {"icl": {}},
            RunInputs(held_out_only, docs, spans, "direct", METRICS, codes_file="codes.parquet"),
            TextAuditSettings(bootstrap=0),
        )


def test_the_positive_control_fires_where_a_method_that_writes_its_own_text_does_not(monkeypatch):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes, spans = corpus_tables(4)
    unrelated = ["zulu zulu zulu yankee", "xray xray whiskey", "victor uniform uniform", "tango tango"]
    shown = icl_corpus(unrelated, [[0, 1], [1, 2], [2, 3], [3, 0]])
    audits = audit_alone("icl", measured(shown, "icl", docs, spans, codes), docs, codes, spans)
    copying, own = audits[POSITIVE_CONTROL].record, audits["icl"].record
    assert copying["text_mia_auc_cosine"] >= 0.95 and copying["verbatim_share"] == 1.0
    assert copying["leak_verbatim_member_rate"] == 1.0 and copying["leak_verbatim_excess"] > 0.5
    assert own["leak_verbatim_member_rate"] == 0.0 and own["leak_verbatim_excess"] == 0.0
    assert own["leak_any_identifier_conclusion"] != "leaks"
    assert len(audits["icl"].nearest) == 4 * 3  # three nearest training segments per generation
    # the re-identification attack ranks the copied document's unit first; the method's own text shares
    # no 3-gram with any unit, so its two context units of 12 are first at chance, as its controls are
    assert copying["reidentification_top1"] == copying["reidentification_top5"] == 1.0
    assert own["reidentification_top1"] == pytest.approx(2 / 12, abs=1e-12)
    assert own["reidentification_top1_control"] == pytest.approx(2 / 12, abs=1e-12)
    assert own["text_mia_auc_reidentification"] == 0.5


def test_private_selection_corpora_are_audited_without_a_positive_control(monkeypatch):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes, spans = corpus_tables(4)
    evolved = icl_corpus(["zulu zulu yankee", "xray whiskey", "victor uniform", "tango tango"], [[]] * 4)
    audits = audit_alone(
        "aug_pe",
        measured(evolved, "aug_pe", docs, spans, codes),
        docs,
        codes,
        spans,
        with_control_rows=False,
    )
    assert list(audits) == ["aug_pe"]
    record = audits["aug_pe"].record
    # members: the 8 training segments, balanced against the 4 held-out ones
    assert record["text_mia_members"] == record["text_mia_non_members"] == 4
    assert record["leak_design"] == "unpaired" and record["verbatim_share"] == 0.0


def test_a_dp_claim_is_tested_against_the_leaks_it_allows():
    from plainsight.audit.guarantee import Guarantee, guarantee_record

    copying = {
        "measures": {"any_identifier": {"member_hits": 24, "members": 24, "control_hits": 0, "controls": 24}}
    }
    assert guarantee_record(copying, Guarantee(epsilon=0.1, delta=1e-5))["dp_claim_rejected"]
    loose = guarantee_record(copying, Guarantee(epsilon=8.0, delta=1e-5))
    assert not loose["dp_claim_rejected"] and loose["dp_null_p_value"] == 1.0


def test_the_claim_tested_is_the_one_that_bounds_the_release(tmp_path):
    from plainsight.audit.guarantee import Guarantee, release_guarantee
    from plainsight.io import write_json

    adapter = tmp_path / "dpsgd"
    adapter.mkdir()
    write_json({"epsilon": 8.0, "delta": 1e-5}, adapter / "training.json")
    write_json({"epsilon": 4.0, "delta": 1e-5, "release_epsilon": 3.97}, tmp_path / "aug_pe.json")
    write_json({"epsilon": 4.0, "delta": 1.6e-3, "release_epsilon": None}, tmp_path / "rpsg.json")
    assert release_guarantee([adapter]) == Guarantee(8.0, 1e-5)
    assert release_guarantee([tmp_path / "aug_pe.json"]) == Guarantee(3.97, 1e-5)
    # RPSG's epsilon bounds each seed's selection, not the rewrite it releases: no claim to test
    assert release_guarantee([tmp_path / "rpsg.json"]) is None


def test_a_corpus_behind_several_mechanisms_is_judged_on_their_composition():
    """DP-SGD's training and the released code patterns: the claim is the accountant's composition over
    the unit the training protects, never the training's share alone."""
    from plainsight.accounting import composed_epsilon
    from plainsight.audit.guarantee import composed_claim

    training = {
        "epsilon": 0.75,
        "delta": 1e-5,
        "noise_multiplier": 2.0,
        "sample_rate": 0.25,
        "steps": 16,
        "protects": "unit",
        "units": 120,
    }
    patterns = {"epsilon": 0.25, "delta": 1e-6, "noise_multiplier": 8.0, "privacy_unit": "document"}
    claim = composed_claim([training, patterns])
    expected = composed_epsilon([(2.0, 0.25, 16), (8.0, 1.0, 1)], 1e-5)
    assert claim.epsilon == expected and claim.delta == 1e-5
    assert (claim.unit, claim.units) == ("unit", 120)
    # the composition spends more than the training alone, less than the two epsilons added
    training_alone = composed_epsilon([(2.0, 0.25, 16)], 1e-5)
    assert training_alone < claim.epsilon < training_alone + composed_epsilon([(8.0, 1.0, 1)], 1e-5)
    # codes from the prior spend nothing: the training's own claim stands
    prior = {"epsilon": 0.0, "delta": None, "source": "prior"}
    assert composed_claim([training, prior]).epsilon == 0.75


# --- the negative control: the same attacks on a corpus written without private data ---

STORYLINE = "oscar papa quebec romeo sierra tango"


def storyline_tables():
    """Members longer than the held-out segments: each training segment has words of its own and a storyline
    shared by every training segment, which any corpus of the same storyline comes close to without having
    learnt a member."""
    own = [" ".join(WORDS[(2 * n + k) % 14] for k in range(3)) for n in range(12)]
    rows = [(f"t{n}", 0, "train", f"{own[n]} {STORYLINE}") for n in range(8)]
    rows += [(f"h{n}", 0, "test", own[8 + n]) for n in range(4)]
    docs = pd.DataFrame(rows, columns=["doc_id", "segment", "split", "text"]).assign(annotator="a")
    docs["unit_id"] = docs["doc_id"]
    codes = docs[["doc_id", "segment", "split"]].assign(code="", entities=[[]] * len(docs))
    return docs, codes


def storyline_splits(codes):
    """(training, held-out) segment keys."""
    return training_keys(codes), [(d, 0) for d in codes.loc[codes["split"] != "train", "doc_id"]]


def audit_against(monkeypatch, texts, control_texts, docs, codes, chosen_method="ft"):
    """The released-text audit of a corpus of `texts`, its text attacks judged against `control_texts`."""
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    corpus = icl_corpus(texts, [[n % 8] for n in range(len(texts))])
    metrics = pd.DataFrame({"any_identifier_leak": [False] * len(texts)})
    audit, _ = released_text_audit(
        AuditedCorpus(corpus, metrics, nearest_table(corpus, codes, docs)),
        codes,
        docs,
        method(chosen_method),
        TextAuditSettings(verbatim_ngram=10, bootstrap=200, seed=1),
        negative_control=(control_texts, embed(control_texts, FeatureSettings())),
    )
    return audit


def test_the_paired_difference_of_two_equal_scores_is_exactly_zero():
    member = [True] * 4 + [False] * 4
    score = [0.9, 0.8, 0.4, 0.7, 0.5, 0.1, 0.6, 0.2]
    assert paired_auc_difference(member, score, score, resamples=100, seed=3) == (0.0, 0.0, 0.0)
    # a perfect score against a useless one (every text tied): 1.0 - 0.5 in every resample
    assert paired_auc_difference(member, [1] * 4 + [0] * 4, [0] * 8, resamples=100) == (0.5, 0.5, 0.5)


def test_a_split_biased_by_construction_shows_in_the_negative_control_and_the_excess_cancels_it(monkeypatch):
    docs, codes = storyline_tables()
    # neither corpus saw a member: both write the storyline, one with its own words as well
    method_texts = [f"{STORYLINE} uniform victor", f"{STORYLINE} whiskey", STORYLINE, f"xray {STORYLINE}"]
    control_texts = [STORYLINE, f"{STORYLINE} yankee", f"zulu {STORYLINE}", STORYLINE]
    audit = audit_against(monkeypatch, method_texts, control_texts, docs, codes)
    record = audit_record(audit)
    # the raw attack finds every member (the storyline), and so does it on the negative control
    assert record["text_mia_auc_ngram"] == 1.0 and record["text_mia_auc_ngram_negative"] == 1.0
    assert record["text_mia_auc_cosine"] == 1.0 and record["text_mia_auc_cosine_negative"] == 1.0
    # so does the re-identification attack: the storyline's 3-grams, held by the 8 members and no
    # held-out unit, link both corpora to every member alike
    units = RealUnits.of(docs, pd.DataFrame(columns=["text", "identifier_type"]), *storyline_splits(codes))
    record |= reidentification(
        units,
        method_texts,
        [[]] * 4,
        [[]] * 4,
        [f"t{n}" for n in range(8)],
        200,
        1,
        units.index.unit_scores(control_texts),
    )
    assert record["text_mia_auc_reidentification"] == record["text_mia_auc_reidentification_negative"] == 1.0
    for name in TEXT_MEMBERSHIP_ATTACKS:
        assert record[f"text_mia_excess_{name}"] == 0.0
        assert record[f"text_mia_excess_{name}_low"] == record[f"text_mia_excess_{name}_high"] == 0.0
    # the gate fails the raw AUC and passes the bias-corrected one: 0.5 + 0.0 <= 0.6
    gate = Gate(criteria=("text_membership",))
    raw = {key: value for key, value in record.items() if not key.startswith("text_mia_excess")}
    assert verdict(raw, gate, trained=True)["verdict"] == FAIL
    assert verdict(record, gate, trained=True)["verdict"] == PASS


def test_a_copying_corpus_has_a_large_excess_and_a_zero_learning_one_none(monkeypatch):
    docs, codes = storyline_tables()
    members = docs.loc[docs["split"] == "train", "text"].tolist()
    unrelated = ["lorem ipsum dolor", "sit amet consectetur", "adipiscing elit sed", "do eiusmod tempor"]
    copying = audit_record(audit_against(monkeypatch, members, unrelated, docs, codes))
    # every member copied: AUC 1 against the unrelated control's chance (nothing in common with anyone)
    assert copying["text_mia_auc_ngram"] == 1.0 and copying["text_mia_auc_ngram_negative"] == 0.5
    assert copying["text_mia_excess_ngram"] == 0.5 and copying["text_mia_excess_ngram_low"] == 0.5
    assert copying["text_mia_excess_cosine_low"] > 0.4
    zero_learning = audit_record(audit_against(monkeypatch, unrelated[::-1], unrelated, docs, codes))
    for name in ("cosine", "ngram"):
        assert zero_learning[f"text_mia_excess_{name}"] == 0.0
        assert zero_learning[f"text_mia_excess_{name}_high"] == 0.0


def test_every_corpus_is_judged_against_the_negative_control_which_has_its_own_row(monkeypatch):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes, spans = corpus_tables(4)
    unrelated = ["zulu zulu zulu yankee", "xray xray whiskey", "victor uniform uniform", "tango tango"]
    shown = icl_corpus(unrelated, [[0, 1], [1, 2], [2, 3], [3, 0]])
    written = icl_corpus(unrelated[::-1], [[n] for n in range(4)]).assign(
        method=NEGATIVE_CONTROL, seed=1, segment=0, fictional_entities=[[]] * 4
    )
    corpus, per_generation, counts = measured(shown, "icl", docs, spans, codes)
    audits = audit_corpora(
        {"icl": corpus},
        {"icl": per_generation},
        {"icl": counts},
        RunInputs(codes, docs, spans, "direct", METRICS),
        TextAuditSettings(verbatim_ngram=10, bootstrap=50, seed=1),
        negative_control=written,
    )
    assert list(audits) == ["icl", POSITIVE_CONTROL, NEGATIVE_CONTROL]
    copying, own = audits[POSITIVE_CONTROL].record, audits[NEGATIVE_CONTROL].record
    # copies of its members, against text that is not: significant although 4 units a side widen the
    # interval by the small-sample factor sqrt(4/3) t_3 / z = 1.87
    assert copying["text_mia_excess_cosine_low"] > 0.15
    # the control's own row: members are the fine-tuning set (8, balanced against the 4 held out), and
    # it is not judged against itself
    assert own["text_mia_members"] == own["text_mia_non_members"] == 4
    assert "text_mia_excess_cosine" not in own and own["leak_design"] == "unpaired"
    assert "text_mia_auc_cosine_negative" in audits["icl"].record
    assert "text_mia_excess_reidentification" in audits["icl"].record
    # re-identification: the copies link every member unit and no held-out one, the negative control's
    # unrelated text none (chance); its own row ranks no sources (a trained method's prompts show none)
    assert copying["text_mia_excess_reidentification_low"] == 0.5
    assert copying["text_mia_reidentification_conclusion"] == "leaks"
    assert own["text_mia_reidentification_members"] == own["text_mia_reidentification_non_members"] == 4
    assert own["text_mia_auc_reidentification"] == 0.5 and "text_mia_excess_reidentification" not in own
    assert math.isnan(own["reidentification_top1"])


def test_a_run_of_trained_methods_alone_audits_them_beside_the_negative_control_only(monkeypatch):
    """The positive control copies an in-context corpus: a run with none (DP-SGD alone, as a frontier run)
    has no positive control, and the workflow expects none (`control_corpora`)."""
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes, spans = corpus_tables(4)
    unrelated = ["zulu zulu zulu yankee", "xray xray whiskey", "victor uniform uniform", "tango tango"]
    written = icl_corpus(unrelated[::-1], [[n] for n in range(4)]).assign(
        method=NEGATIVE_CONTROL, seed=1, segment=0, fictional_entities=[[]] * 4
    )
    trained = icl_corpus(unrelated, [[n % 8] for n in range(4)])
    audits = audit_alone(
        "ft", measured(trained, "ft", docs, spans, codes), docs, codes, spans, negative_control=written
    )
    assert list(audits) == ["ft", NEGATIVE_CONTROL] == ["ft", *control_corpora(in_context=False)]
    assert control_corpora(in_context=True) == [POSITIVE_CONTROL, NEGATIVE_CONTROL]
