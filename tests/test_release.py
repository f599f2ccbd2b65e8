"""Release bundles: leaking generations left out and counted, no real text, the datasheet's evidence."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from plainsight.report.release import EvidenceTable, ReleaseRun, build_release

SPANS = pd.DataFrame(
    {
        "text": ["Anna Berg", "Tromso", "SC-10442", "a public word"],
        "identifier_type": ["DIRECT", "QUASI", "DIRECT", "NO_MASK"],
    }
)
CODES = pd.DataFrame({"entities": [[{"type": "ORG", "value": "Elmbury Homes Trust"}]]})
TEXTS = [
    "A clean note about a visit.",  # kept
    "Anna Berg was seen at home.",  # exact leak (metrics)
    "Ms Berg said little.",  # partial leak (metrics)
    "The visit was in Tromso.",  # a quasi identifier of the corpus (any identifier)
    "Referred by Elmbury Homes Trust.",  # a detected value of the codes (any identifier)
    "Another clean note, a public word.",
]  # NO_MASK values are not identifiers: kept


def frames(drop: bool = True):
    corpora = pd.DataFrame(
        {
            "generation_id": [0, 1, 2, 0, 1, 2],
            "seed": [1, 1, 1, 2, 2, 2],
            "text": TEXTS,
            "fictional_code": ["PERSON: Teodor Aalto"] * 6,
            "method": "icl_pe",
            "context_doc_ids": [["d1"]] * 6,
            "device": "cpu",
            "dtype": "float32",
        }
    )
    metrics = pd.DataFrame(
        {
            "generation_id": [2, 1, 0, 0, 1, 2],
            "seed": [1, 1, 1, 2, 2, 2],
            "leaked": [False, True, False, False, False, False],
            "partial_leak": [True, False, False, False, False, False],
            "near_leak": [False] * 6,
        }
    )
    summaries = pd.DataFrame(
        {
            "segment": [-1, -1, 0],
            "pipp": [10.0, 20.0, 99.0],
            "elp": [1.0, 3.0, 99.0],
            "rouge2": [0.1, 0.3, 0.9],
        }
    )
    run = ReleaseRun(
        "casenotes",
        "known",
        "direct",
        "icl_pe",
        "smollm2-135m",
        {"max_new_tokens": 128},
        drop,
        (EvidenceTable("Audit", pd.DataFrame({"nearest cosine": [0.41]})),),
    )
    return run, corpora, metrics, summaries


def test_leaking_generations_are_left_out_and_counted():
    run, corpora, metrics, summaries = frames()
    bundle, sheet = build_release(run, corpora, metrics, summaries, SPANS, CODES)
    rows = [json.loads(line) for line in bundle.splitlines()]
    assert [row["text"] for row in rows] == [TEXTS[0], TEXTS[5]]
    assert set(rows[0]) == {"text", "fictional_code", "method", "seed"} and rows[1]["seed"] == 2
    assert "2 of 6 generations; 4 left out" in sheet
    assert "- exact leak of a value of its code's identifier set: 1" in sheet
    assert "- partial leak (a word of a real name): 1" in sheet
    assert "- a real direct or quasi identifier of any document of the corpus: 3" in sheet


def test_datasheet_evidence():
    run, corpora, metrics, summaries = frames()
    _, sheet = build_release(run, corpora, metrics, summaries, SPANS, CODES)
    assert (
        "| PIPP (%) | ELP (%) | ROUGE-2 |\n|---|---|---|\n| 15 | 2 | 0.2 |" in sheet
    )  # means over the seeds
    assert "No formal guarantee" in sheet and "## Audit" in sheet and "| 0.41 |" in sheet
    dp = {"epsilon": 7.99, "delta": 1e-5, "noise_multiplier": 1.1, "privacy_unit": "document", "units": 30}
    _, sheet = build_release(run, corpora, metrics, summaries, SPANS, CODES, [dp])
    assert "DP-SGD: epsilon 7.99 at delta 1e-05 per document (30 documents)" in sheet


def test_without_dropping_everything_is_released():
    run, corpora, metrics, summaries = frames(drop=False)
    bundle, sheet = build_release(run, corpora, metrics, summaries, SPANS, CODES)
    assert len(bundle.splitlines()) == 6 and "All 6 generations" in sheet


def test_missing_metrics_row_is_an_error():
    run, corpora, metrics, summaries = frames()
    with pytest.raises(ValueError, match="no row in its corpus's per-generation metrics"):
        build_release(run, corpora, metrics.iloc[:5], summaries, SPANS, CODES)


def test_evidence_takes_the_methods_rows_of_its_run_and_its_review_status(tmp_path):
    from dataclasses import replace

    from plainsight.report.release import evidence_tables

    run, corpora, metrics, summaries = frames()
    run = replace(run, evidence=())
    audit = pd.DataFrame(
        {
            "dataset": [run.dataset, run.dataset, "other"],
            "setting": [run.setting] * 3,
            "idset": [run.idset] * 3,
            "method": [run.method, "base_model", run.method],
            "auc_loss": [0.61, 0.5, 0.9],
        }
    )
    audit.to_csv(tmp_path / "privacy_audit.csv", index=False)
    comments = pd.DataFrame(
        {"method": [run.method, run.method, "icl"], "verdict": ["leaks", "fine", "leaks"]}
    )
    comments.to_parquet(tmp_path / "comments.parquet")
    tables = evidence_tables(
        run, [str(tmp_path / "privacy_audit.csv")], [], [str(tmp_path / "comments.parquet")]
    )
    assert [t.title for t in tables] == [
        "Privacy audit (privacy_audit.csv)",
        "Review status (review page verdicts)",
    ]
    assert tables[0].frame["auc_loss"].tolist() == [0.61]  # its method and run only
    assert dict(zip(tables[1].frame["verdict"], tables[1].frame["generations"])) == {"leaks": 1, "fine": 1}
    _, sheet = build_release(replace(run, evidence=tuple(tables)), corpora, metrics, summaries, SPANS, CODES)
    assert "## Privacy audit (privacy_audit.csv)" in sheet and "| 0.61 |" in sheet
    [unreviewed] = evidence_tables(run, [], [], [])
    assert unreviewed.frame["verdict"].tolist() == ["none yet"]
