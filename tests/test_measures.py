"""The leak-measure registry: every output that handles leak measures reads it, so a measure declared
in it alone (with its two matching functions) reaches the metrics, the held-out control, the evidence,
the gate, the audit table, the review page's data and the release bundle's card."""

from __future__ import annotations

import pandas as pd
import pytest

from plainsight.audit import nearest
from plainsight.audit.criteria import Gate, criterion_outcomes
from plainsight.audit.outcomes import FAIL
from plainsight.audit.privacy_audit_table import with_verdicts
from plainsight.evaluation import measures
from plainsight.evaluation.held_out import trained_value_counts
from plainsight.evaluation.measures import LeakMeasure, judged_by, leak_measure, leak_measures
from plainsight.evaluation.privacy import real_values
from plainsight.methods.trained import training_keys
from plainsight.report.privacy_audit_markdown import verdict_markdown, write_privacy_audit
from plainsight.report.release import build_release, evidence_tables, method_verdict
from plainsight.report.release_filter import kept_rows, release_filter
from plainsight.report.release_run import ReleaseRun
from plainsight.report.review_data import flags
from test_released import audit_alone, bag_of_words, corpus_tables, icl_corpus, measured


def _tag(text: str) -> str:
    """The last word of a test segment: `segment{n}`, its own."""
    return text.split()[-1]


TAGGED = LeakMeasure(
    "segment_tag",
    "Segment tag",
    "segment-tag leak excess",
    "the tag word a real segment ends with",
    "segment_tag_leak",
    lambda text, source, real: any(_tag(real.texts[key]) in text.split() for key in source.keys),
    lambda side: (
        sum(_tag(side.real.texts[key]) in side.corpus.split() for key in side.keys),
        len(side.keys),
    ),
    unit="segments",
    criterion="leak_excess",
    review_flag="tag",
    drop_reason="the tag of a real segment",
)


@pytest.fixture
def tagged(monkeypatch):
    monkeypatch.setitem(measures.REGISTRY, TAGGED.name, TAGGED)
    return TAGGED


def test_the_registry_holds_each_measure_once_with_its_criterion():
    names = [m.name for m in leak_measures()]
    assert names == [
        "exact",
        "partial",
        "near",
        "any_identifier",
        "code_part",
        "verbatim",
        "unit_linkage",
        "joint_linkage",
    ]
    assert [m.name for m in judged_by("leak_excess")] == ["near", "any_identifier", "code_part"]
    assert [m.name for m in judged_by("verbatim")] == ["verbatim"]
    assert [m.name for m in judged_by("unit_linkage")] == ["unit_linkage"]
    # joint linkage is reported, not judged, and has no paired control: its hit needs the whole corpus
    assert leak_measure("joint_linkage").criterion is None and not leak_measure("joint_linkage").paired
    assert len({m.member_column for m in leak_measures()}) == len(names)
    with pytest.raises(ValueError, match="unknown leak measure 'vibes'"):
        leak_measure("vibes")


def test_a_measure_declared_once_reaches_every_output(tagged, monkeypatch, tmp_path):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes, spans = corpus_tables(4)
    # each generation copies the tag of its one context segment and nothing else of it: six discordant
    # pairs, McNemar's p = 1/64
    copying = icl_corpus([f"a note on segment{n}" for n in range(6)], [[n] for n in range(6)])
    corpus, per_generation, counts = measured(copying, "icl", docs, spans, codes)

    # metrics and held-out control: the member hit, the control hit and the paired counts
    assert per_generation["segment_tag_leak"].tolist() == [True] * 6
    assert per_generation["control_segment_tag"].tolist() == [False] * 6
    assert counts["measures"]["segment_tag"] == {
        "member_hits": 6,
        "members": 6,
        "control_hits": 0,
        "controls": 6,
        "member_only": 6,
        "control_only": 0,
    }

    # evidence: its excess over the control, with bounds and a conclusion
    record = audit_alone("icl", (corpus, per_generation, counts), docs, codes, spans)["icl"].record
    assert record["leak_segment_tag_excess"] == 1.0 and record["leak_segment_tag_conclusion"] == "leaks"

    # the gate judges it under the criterion it declares
    outcome, reason = criterion_outcomes(record, Gate(), trained=False)["leak_excess"]
    # the reason names what its rates are shares of: in-context, generations
    assert outcome == FAIL and "segment-tag leak excess (share of generations) >=" in reason

    # the audit table: its verdict section, in Markdown and CSV
    run = {"dataset": "tab", "setting": "known", "idset": "direct"}
    seeds = pd.DataFrame([{**run, "method": "icl", "seed": 1, **record}])
    table = with_verdicts(seeds.drop(columns="seed").assign(Method="ICL"), seeds, Gate())
    section = "\n".join(verdict_markdown(table))
    assert "| Segment tag |" in section and "100 vs 0 (% of generations): +100" in section
    # joint linkage, which no criterion judges, is shown beside the judged measures
    assert "| Joint linkage (not judged) |" in section
    csv = tmp_path / "privacy_audit.csv"
    write_privacy_audit(table, 10, csv, tmp_path / "privacy_audit.md")

    # the review page's data: a flag of the generation
    metrics_row = per_generation.iloc[0].to_dict()
    assert flags(metrics_row, corpus.iloc[0].to_dict())["tag"] is True

    # the bundle: its generations left out by reason, its verdict and its evidence on the card
    release = ReleaseRun("tab", "known", "direct", "icl", "smollm2-135m", {"max_new_tokens": 8})
    release = ReleaseRun(
        *(getattr(release, k) for k in ("dataset", "setting", "idset", "method", "model", "generation")),
        evidence=tuple(evidence_tables(release, [str(csv)], [])),
        verdict=method_verdict(release, [str(csv)]),
    )
    released = corpus.assign(fictional_code="PERSON: Teodor Aalto")
    summaries = pd.DataFrame({"segment": [-1], "pipp": [0.0]})
    filtered = release_filter(released, per_generation, spans, codes, "any_identifier")
    bundle, card = build_release(release, released, filtered, kept_rows(released, filtered), summaries)
    assert bundle == ""
    assert "- the tag of a real segment: 6" in card
    assert "segment-tag leak excess (share of generations) >=" in card and "leak_segment_tag_excess" in card


def test_a_declared_measure_counts_distinct_items_for_trained_methods(tagged):
    docs, codes, spans = corpus_tables(4)
    train = training_keys(codes)
    held_out = [key for key in zip(codes["doc_id"], codes["segment"]) if key not in set(train)]
    generations = ["segment0 and segment1", "then segment21"]
    counts = trained_value_counts(generations, train, held_out, real_values(docs, spans, "direct", 10, 4))
    assert counts["segment_tag"] == {"member_hits": 2, "members": 8, "control_hits": 1, "controls": 4}
