"""A case-notes corpus whose generation copies a real case number's serial under another prefix: the
code-part leak flags it, ICL-PE's blocker bans the token that would complete it, and the release filter
leaves it out; the near-leak, exact and any-identifier measures let it through."""

from __future__ import annotations

import pandas as pd
import pytest

from plainsight.audit import nearest
from plainsight.code_runs import CodeRuns
from plainsight.generation.blocking import ValueBlocker, Vocabulary
from plainsight.methods.in_context import Blocking
from plainsight.report.release_filter import kept_rows, release_filter
from test_released import audit_alone, bag_of_words, corpus_tables, icl_corpus, measured

CASE_NUMBER = "XXX-2022-8363"
NOTES = {
    "t0": f"Home visit to Patricia Smith under case {CASE_NUMBER} at Kiln Street.",
    "t1": "Phone call with Aaron Webb under case XXX-2021-1190 about rent arrears.",
    "t2": "Office visit by Nadia Lund under case XXX-2020-4471 about her benefits.",
    "t3": "Home visit to Omar Reyes under case XXX-2019-5528 about his tenancy.",
    "h0": "Home visit to Ellen Ross under case XXX-2022-7702 about her flat.",
    "h1": "Phone call with Ida Marsh under case XXX-2023-3319 about a referral.",
    "h2": "Office visit by Tom Hale under case XXX-2021-6604 about his debts.",
    "h3": "Home visit to Rita Cole under case XXX-2020-2245 about her son.",
}
SHIPPED = "Home visit noted under case LY-2022-8363 on Kiln Street; the client was calm and well."


def case_notes():
    docs = pd.DataFrame(
        [(doc_id, 0, "train" if doc_id[0] == "t" else "test", text) for doc_id, text in NOTES.items()],
        columns=["doc_id", "segment", "split", "text"],
    ).assign(annotator="a")
    docs["unit_id"] = docs["doc_id"]
    spans = []
    for doc_id, text in NOTES.items():
        number = text.split("under case ")[1].split()[0]
        name = " ".join(text.split(" under case")[0].split()[-2:])
        for value, entity_type in ((number, "CODE"), (name, "PERSON")):
            start = text.index(value)
            spans.append((doc_id, 0, start, start + len(value), value, entity_type, "DIRECT", "e", "m", "L"))
    spans = pd.DataFrame(
        spans,
        columns=[
            "doc_id",
            "segment",
            "start",
            "end",
            "text",
            "entity_type",
            "identifier_type",
            "entity_id",
            "mention_id",
            "raw_label",
        ],
    )
    codes = docs[["doc_id", "segment", "split"]].assign(code="", entities=[[]] * len(docs))
    return docs, codes, spans


def generations() -> pd.DataFrame:
    """Generation 0 copies t0's serial under another prefix; generation 1 writes a number of its own."""
    return pd.DataFrame(
        {
            "generation_id": [0, 1],
            "text": [SHIPPED, "Home visit noted under case LY-2024-1000 on a quiet street; all was well."],
            "context_doc_ids": [["t0"], ["t1"]],
            "context_segments": [[0], [0]],
        }
    )


def test_the_copied_serial_is_a_code_part_leak_and_nothing_else():
    docs, codes, spans = case_notes()
    _, per_generation, counts = measured(generations(), "icl_pe", docs, spans, codes)
    assert per_generation["code_part_leak"].tolist() == [True, False]
    assert per_generation["control_code_part"].tolist() == [False, False]  # unshown notes' serials differ
    # what let it through before: not the value, not one digit off, not a near variant
    assert per_generation["leaked"].tolist() == [False, False]
    assert per_generation["near_leak"].tolist() == [False, False]
    assert per_generation["any_identifier_leak"].tolist() == [False, False]
    assert counts["measures"]["code_part"]["member_only"] == 1
    assert counts["measures"]["code_part"]["control_only"] == 0


def test_the_release_filter_leaves_the_copied_serial_out():
    docs, codes, spans = case_notes()
    corpus, per_generation, _ = measured(generations(), "icl_pe", docs, spans, codes)
    released = corpus.assign(fictional_code="CODE: LY-2024-1000")
    filtered = release_filter(released, per_generation, spans, codes, "any_identifier")
    assert filtered["code_part"].tolist() == [True, False]
    assert filtered["left_out"].tolist() == [True, False]
    assert kept_rows(released, filtered)["generation_id"].tolist() == [1]


@pytest.fixture(scope="module")
def vocabulary(tiny_tokenizer) -> Vocabulary:
    return Vocabulary(tiny_tokenizer)


def test_icl_pe_blocks_the_serial_under_another_prefix(tiny_tokenizer, vocabulary):
    context = [[("CODE", CASE_NUMBER), ("PERSON", "Patricia Smith")]]
    blocking = Blocking("values_and_parts", code_runs=CodeRuns())
    assert blocking.digit_runs(context) == ("20228363",)
    assert Blocking("values").digit_runs(context) == ()  # the paper's blocking: values only
    with_runs = ValueBlocker(
        vocabulary,
        blocking.blocked(context),
        near_words=blocking.near_words(context),
        digit_runs=blocking.digit_runs(context),
    )
    without_runs = ValueBlocker(
        vocabulary, blocking.blocked(context), near_words=blocking.near_words(context)
    )

    written = tiny_tokenizer(SHIPPED.split(" on Kiln")[0], add_special_tokens=False).input_ids
    # the shipped text, token by token: the blocker bans the token that completes the serial's run
    steps = [
        step
        for step in range(len(written))
        if written[step] in with_runs.banned(written[:step])
        and written[step] not in without_runs.banned(written[:step])
    ]
    assert steps == [len(written) - 1]
    completing = written[-1]
    assert vocabulary.texts[completing].decode()[-1] == "3"
    # the same digits after another serial are no run of the context: not banned
    other = tiny_tokenizer("case LY-2022-836", add_special_tokens=False).input_ids
    four = tiny_tokenizer("4", add_special_tokens=False).input_ids
    assert four[0] not in with_runs.banned(other)
    another_year = tiny_tokenizer("case LY-2023-836", add_special_tokens=False).input_ids
    assert not with_runs.banned(another_year) & {completing}


def test_a_trained_method_counts_distinct_serials_and_a_corpus_without_codes_has_nothing_to_match(
    monkeypatch,
):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes, spans = case_notes()
    _, _, counts = measured(
        generations().drop(columns=["context_doc_ids", "context_segments"]), "ft", docs, spans, codes
    )
    # the serials only the fine-tuning notes hold against those only held-out notes hold, one per note
    assert counts["measures"]["code_part"] | {"member_documents": None, "control_documents": None} == {
        "member_hits": 1,
        "members": 4,
        "control_hits": 0,
        "controls": 4,
        "member_documents": None,
        "control_documents": None,
    }
    # a corpus without code values: nothing to match, and the record says so instead of leaving no evidence
    docs, codes, spans = corpus_tables(4)
    corpus = icl_corpus(["alpha met delta", "nothing"], [[0], [1]]).drop(
        columns=["context_doc_ids", "context_segments"]
    )
    measured_corpus = measured(corpus, "ft", docs, spans, codes)
    assert measured_corpus[2]["measures"]["code_part"]["members"] == 0
    record = audit_alone("ft", measured_corpus, docs, codes, spans, with_control_rows=False)["ft"].record
    assert record["leak_code_part_members"] == 0 and record["leak_code_part_controls"] == 0
    assert "leak_code_part_excess" not in record
