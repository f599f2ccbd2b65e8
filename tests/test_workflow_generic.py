"""The generic worked example (config/examples/generic.yaml) end to end with the tiny model."""

from __future__ import annotations

import hashlib
import json
import re

import pandas as pd
import pytest
import yaml

from test_workflow import REPO, make_workdir, snakemake, tiny_overlay, write_overlay

pytestmark = pytest.mark.workflow

EXAMPLE = "config/examples/generic.yaml"
METHODS = ["Baseline", "DP-SGD", "ICL", "ICL w/ privacy enhancement", "Fine-tuning", "Fine-tuning w/ masking"]


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory, tiny_model_dir):
    workdir = make_workdir(tmp_path_factory.mktemp("generic"))
    write_overlay(
        workdir,
        "tiny.yaml",
        tiny_overlay(tiny_model_dir, {"seeds": [1], "tables": {"seeds": {"table1": [1], "table2": [1]}}}),
    )
    snakemake(
        workdir,
        "results/tables/casenotes/table1.csv",
        "results/tables/casenotes/table2.csv",
        "--configfile",
        EXAMPLE,
        "tiny.yaml",
    )
    return workdir


def test_known_and_unknown_tables_of_the_case_notes(example_dir):
    for table in ("table1", "table2"):
        frame = pd.read_csv(example_dir / "results" / "tables" / "casenotes" / f"{table}.csv")
        assert list(frame["Method"]) == METHODS
        assert (frame["Seeds"] == 1).all()


def test_case_notes_ingested_with_labels_groups_and_units(example_dir):
    docs = pd.read_parquet(example_dir / "results/casenotes/docs.parquet")
    spans = pd.read_parquet(example_dir / "results/casenotes/spans.parquet")
    assert docs["doc_id"].nunique() == 80 and set(docs["segment"]) == {0, 1}
    assert docs["unit_id"].nunique() == 30 and (docs.groupby("unit_id")["split"].nunique() == 1).all()
    assert docs["labels"].map(len).eq(1).all() and set(docs["group"]) == {"north", "south", "east", "west"}
    assert set(spans["entity_type"]) == {"PERSON", "CODE", "DATETIME", "LOC", "ORG", "DEM", "QUANTITY"}
    codes = pd.read_parquet(example_dir / "results/casenotes/known/direct/codes.parquet")
    assert codes["code"].str.contains("PERSON: ").all()


def test_format_preserving_codes_keep_the_case_number_shape(example_dir):
    real = pd.read_parquet(example_dir / "results/casenotes/known/direct/codes.parquet")
    fictional = pd.read_parquet(example_dir / "results/casenotes/known/direct/fictional/seed1.parquet")
    real_codes = {r["value"] for records in real["entities"] for r in records if r["type"] == "CODE"}
    drawn = [r["value"] for records in fictional["entities"] for r in records if r["type"] == "CODE"]
    assert drawn and all(pd.Series(drawn).str.fullmatch(r"SC-\d{5}")) and not set(drawn) & real_codes
    # an in-context method's target code too: its case numbers in the shape of the contexts'
    corpus = pd.read_parquet(example_dir / "results/casenotes/known/direct/synthetic/icl/seed1.parquet")
    targets = [r["value"] for records in corpus["fictional_entities"] for r in records if r["type"] == "CODE"]
    assert targets and all(pd.Series(targets).str.fullmatch(r"SC-\d{5}")) and not set(targets) & real_codes


def test_known_on_a_corpus_without_spans_stops_before_any_job(tmp_path):
    workdir = make_workdir(tmp_path / "plain")
    plain = workdir / "plain.jsonl"
    notes = [json.loads(line) for line in (REPO / "resources/demo/casenotes.jsonl").read_text().splitlines()]
    plain.write_text("".join(json.dumps({k: v for k, v in n.items() if k != "spans"}) + "\n" for n in notes))
    write_overlay(workdir, "plain.yaml", {"datasets": {"casenotes": {"path": str(plain)}}})
    result = snakemake(
        workdir, "results/tables/casenotes/table1.csv", "--configfile", EXAMPLE, "plain.yaml", check=False
    )
    assert result.returncode != 0
    assert (
        "dataset casenotes" in result.stderr and "only the unknown setting (Presidio) runs" in result.stderr
    )
    assert not (workdir / "results").exists()
    write_overlay(workdir, "unknown.yaml", {"settings": ["unknown"]})
    snakemake(
        workdir,
        "--dry-run",
        "results/tables/casenotes/table2.csv",
        "--configfile",
        EXAMPLE,
        "plain.yaml",
        "unknown.yaml",
    )


def test_release_bundle_of_icl_pe_holds_no_real_value(example_dir):
    bundle_dir = "results/release/casenotes/known/direct/icl_pe"
    custodian = f"{bundle_dir}/custodian"
    snakemake(
        example_dir,
        f"{bundle_dir}/README.md",
        f"{custodian}/SUMMARY.md",
        "--configfile",
        EXAMPLE,
        "tiny.yaml",
    )
    rows = [
        json.loads(line) for line in (example_dir / bundle_dir / "synthetic.jsonl").read_text().splitlines()
    ]
    card = (example_dir / custodian / "EVIDENCE.md").read_text()
    corpus = pd.read_parquet(example_dir / "results/casenotes/known/direct/synthetic/icl_pe/seed1.parquet")
    assert all(set(row) == {"text", "fictional_code", "method", "seed"} for row in rows)
    assert f"{len(rows)} of {len(corpus)} generations" in card and "## Known limits" in card
    header = yaml.safe_load((example_dir / bundle_dir / "README.md").read_text().split("---\n")[1])
    assert header["configs"][0]["data_files"] == [{"split": "train", "path": "synthetic.jsonl"}]
    assert header["license"] == "other" and header["size_categories"] == ["n<1K"]
    # the bundle brings its own audit, of the texts it ships, and its utility; the run's own audit (every
    # configured dataset is audited where asked) judges the corpus before the filter
    verdict = json.loads((example_dir / custodian / "verdict.json").read_text())
    assert verdict["verdict"] in {"PASS", "FAIL", "INCONCLUSIVE", "NOT RELEASABLE BY POLICY"} and verdict[
        "generations"
    ] == {"1": len(rows)}
    data = (example_dir / bundle_dir / "synthetic.jsonl").read_bytes()
    assert verdict["data_sha256"] == hashlib.sha256(data).hexdigest()
    assert verdict["before_filter"]["verdict"] in {"PASS", "FAIL", "INCONCLUSIVE", "NOT RELEASABLE BY POLICY"}
    assert "## Utility" in card
    # what leaves is the data file and its public card; the custodian's folder stays behind
    assert sorted(p.name for p in (example_dir / bundle_dir).iterdir()) == [
        "README.md",
        "custodian",
        "synthetic.jsonl",
    ]
    assert {p.name for p in (example_dir / custodian).iterdir()} >= {
        "EVIDENCE.md",
        "SUMMARY.md",
        "verdict.json",
        "utility.csv",
    }
    summary = (example_dir / custodian / "SUMMARY.md").read_text()  # no verdict passes at this size
    assert summary.startswith("# NOT FOR RELEASE: release summary: casenotes, icl_pe, known setting")
    assert "## Real values in the generations" in summary
    assert f"The bundle ships {len(rows)} of these {len(corpus)} (`release.drop: any_identifier`)" in summary
    spans = pd.read_parquet(example_dir / "results/casenotes/spans.parquet")
    real = set(spans.loc[spans["identifier_type"].isin(["DIRECT", "QUASI"]), "text"])
    docs = pd.read_parquet(example_dir / "results/casenotes/docs.parquet")
    patterns = [re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE) for value in real]
    for row in rows:
        assert not [p.pattern for p in patterns if p.search(" ".join(row["text"].split()))], row["text"]
        assert row["text"] not in set(docs["text"])
