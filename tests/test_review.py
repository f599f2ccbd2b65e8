"""The review page: its highlight spans, nearest-segment n-grams, entity index, comments and the page itself
in headless Chromium (built from fixture corpora with the nearest-documents schema)."""

from __future__ import annotations

import base64
import json
import re
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from conftest import headless_chromium
from plainsight.data.validate import read_config
from plainsight.errors import InputError
from plainsight.evaluation.downstream import not_measured_scores
from plainsight.evaluation.privacy import real_values
from plainsight.matching import near_spans, value_spans
from plainsight.report.audit_verdict import AuditVerdict, audit_verdicts
from plainsight.report.frontier import frontier_view
from plainsight.report.release import (
    PageBundles,
    bundle_frames,
    bundle_summary,
    page_bundle_summaries,
    shipped_verdict,
)
from plainsight.report.release_run import BundleSettings, ReleaseRun
from plainsight.report.review_comments import comments_table, read_comment_file, review_notes
from plainsight.report.review_data import (
    corpus_fingerprint,
    corpus_records,
    entity_index,
    real_corpus,
    shared_ngram_spans,
)
from plainsight.report.review_site import (
    ReviewEvidence,
    ReviewRun,
    ReviewSubject,
    SitePaths,
    build_review_site,
    data_script,
)
from plainsight.report.sign_off import read_sign_offs
from plainsight.report.summary import ReleaseSummary, value_types
from plainsight.report.summary_render import summary_html, summary_markdown
from plainsight.report.units_at_risk import Link, PersonView, UnitAtRisk, units_at_risk
from plainsight.report.utility_table import run_utility_table
from plainsight.settings import Settings
from test_generic import REPO, ingest, records, write_jsonl

SUBJECT = ReviewSubject("tab", "known", "direct")
REAL_A = (
    "The applicant, Mr Henrik Hasslund, was born in 1950 and lives in Aarhus. "
    "He lodged application no. 40593/04 with the Court on the same day."
)
REAL_B = "The applicant, Ms Anna Kowalska, lives in Krakow and works as a teacher at the local school."
REAL_TEST = "Ms Joanna Nowak lives in Gdansk."
# markup in a real value: the person view shows it as text
REAL_C = "Mr Piotr Zielinski chairs the <b>Amber</b> Guild in Gdynia."
# the metrics' matching settings, as rule privacy_metrics reads them
METRICS = {
    "partial_leak_min_letters": 4,
    "verbatim_ngram": 10,
    "linkage_quasi_min": 2,
    "code_runs": {"entity_types": ["CODE"], "min_digits": 4},
}


def _spans_of(
    doc_id: str, text: str, values: list[tuple[str, str]], identifier_type: str = "DIRECT"
) -> list[dict]:
    rows = []
    for entity_type, value in values:
        start = text.index(value)
        rows.append(
            {
                "doc_id": doc_id,
                "segment": 0,
                "start": start,
                "end": start + len(value),
                "text": value,
                "entity_type": entity_type,
                "identifier_type": identifier_type,
                "entity_id": value,
                "mention_id": f"{doc_id}-{start}",
                "raw_label": entity_type,
            }
        )
    return rows


def real_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    docs = pd.DataFrame(
        {
            "doc_id": ["A", "B", "T", "C"],
            "split": ["train", "train", "test", "train"],
            "segment": [0, 0, 0, 0],
            "text": [REAL_A, REAL_B, REAL_TEST, REAL_C],
            "annotator": ["x", "x", "x", "x"],
        }
    )
    spans = pd.DataFrame(
        _spans_of("A", REAL_A, [("PERSON", "Henrik Hasslund"), ("CODE", "40593/04")])
        + _spans_of("A", REAL_A, [("LOC", "Aarhus")], "QUASI")  # outside the page's identifier set
        + _spans_of("B", REAL_B, [("PERSON", "Anna Kowalska")])
        + _spans_of("T", REAL_TEST, [("PERSON", "Joanna Nowak")])
        + _spans_of("C", REAL_C, [("PERSON", "Piotr Zielinski")])
        + _spans_of("C", REAL_C, [("ORG", "<b>Amber</b> Guild"), ("LOC", "Gdynia")], "QUASI")
    )
    return docs, spans


# generation 0 copies A word for word with a near variant of its applicant; 1 holds a fictional name and
# markup; 2 is short and holds C's guild and town, which only C's text holds together
GENERATIONS = [
    "Mr Henrik Hasslud was born in 1950 and lives in Aarhus. He lodged application no. 40593/04 today.",
    "The applicant, Mr Tomas Berg, wrote <script>window.pwned = 1</script> to the Court in Oslo.",
    "A short note on the <b>Amber</b> Guild of Gdynia.",
]


def corpus_frames(
    method: str = "icl", texts: list[str] = GENERATIONS
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    corpus = pd.DataFrame(
        {
            "generation_id": [f"g{i}" for i in range(3)],
            "method": method,
            "seed": 1,
            "segment": [0, 0, 1],
            "text": texts,
            "context_doc_ids": [["A", "B"]] * 3,
            "context_segments": [[0, 0]] * 3,
            "context_codes": [["", ""]] * 3,
            "fictional_code": ["PERSON: Tomas Berg\nLOC: Oslo"] * 3,
            "fictional_entities": [
                [{"type": "PERSON", "value": "Tomas Berg"}, {"type": "LOC", "value": "Oslo"}]
            ]
            * 3,
            "regenerations": [0, 2, 0],
            "hit_max_regenerations": [False, False, False],
        }
    )
    metrics = pd.DataFrame(
        {
            "generation_id": corpus["generation_id"],
            "leaked": [True, False, False],
            "leaked_values": [["40593/04"], [], []],
            "partial_leak": [True, False, False],
            "near_leak": [True, False, False],
            "near_leaked_values": [["Henrik Hasslund", "40593/04", "Hasslund"], [], []],
            # the control's classes: the town (a quasi value, outside the direct set) is common
            "leaked_identifier_values": [["Aarhus", "40593/04"], [], []],
            "leaked_value_classes": [["common", "source_specific"], [], []],
            "source_specific_leak": [True, False, False],
            "is_document": [True, True, False],
        }
    )
    nearest = pd.DataFrame(
        {
            "generation": [0, 0, 1],
            "rank": [1, 2, 1],
            "doc_id": ["A", "B", "B"],
            "segment": [0, 0, 0],
            "cosine": [0.91, 0.42, 0.3],
            "longest_shared_ngram": [9, 2, 3],
        }
    )
    return corpus, metrics, nearest


def test_shared_ngrams_of_five_words_are_marked_on_both_sides():
    a = "x y The cat sat on the mat today z"
    b = "Today the cat sat on the mat, said the cat sat on"  # the second run has four words only
    ours, theirs = shared_ngram_spans(a, b)
    assert [a[s:e] for s, e in ours] == ["The cat sat on the mat"]
    assert [b[s:e] for s, e in theirs] == ["the cat sat on the mat"]
    assert shared_ngram_spans("one two three four", "one two three four") == ([], [])  # under five words


def test_near_and_exact_spans_follow_the_matcher():
    text = "Then Mr Henrik Hasslud said 40593/02 and 40593/04 to Holst-Christenson, the carer."
    assert [text[s:e] for s, e in near_spans(text, "Henrik Hasslund")] == ["Henrik Hasslud"]
    assert [text[s:e] for s, e in near_spans(text, "40593/04")] == ["40593/02", "40593/04"]
    assert [text[s:e] for s, e in near_spans(text, "Holst-Christensen")] == ["Holst-Christenson"]
    assert near_spans(text, "Carter", frozenset({"carer"})) == []
    assert [text[s:e] for s, e in value_spans(text, "40593/04")] == ["40593/04"]


def test_records_highlight_real_and_fictional_values_with_their_sources():
    docs, spans = real_frames()
    corpus, metrics, nearest = corpus_frames()
    records = corpus_records(corpus, metrics, nearest, real_corpus(docs, spans, "direct", 4), in_context=True)
    first, second = records[0], records[1]
    shown = [(GENERATIONS[0][s:e], kind, sources, cls) for s, e, kind, _, sources, cls in first["highlights"]]
    # the near variant has no class in the metrics; the town is highlighted though outside the direct set
    assert shown == [
        ("Henrik Hasslud", "near", ["A#0"], ""),
        ("Aarhus", "real", [], "common"),
        ("40593/04", "real", ["A#0"], "source_specific"),
    ]
    assert [(GENERATIONS[1][s:e], kind, cls) for s, e, kind, _, _, cls in second["highlights"]] == [
        ("Tomas Berg", "fictional", ""),
        ("Oslo", "fictional", ""),
    ]
    assert first["flags"] == {
        "exact": True,
        "partial": True,
        "near": True,
        "source_specific": True,
        "not_document": False,
        "regenerated": 0,
        "hit_max": False,
    }
    assert records[2]["flags"]["not_document"] and second["flags"]["regenerated"] == 2
    assert [n["ref"] for n in first["nearest"]] == ["A#0", "B#0"] and first["cosine"] == 0.91
    assert records[2]["nearest"] == [] and records[2]["cosine"] is None
    # "was born in 1950 and lives in Aarhus" and "He lodged application no. 40593/04" are shared with A
    assert [GENERATIONS[0][s:e] for s, e in first["nearest"][0]["shared"]] == [
        "was born in 1950 and lives in Aarhus. He lodged application no. 40593/04"
    ]
    assert [c["ref"] for c in first["contexts"]] == ["A#0", "B#0"]
    assert (
        corpus_records(corpus, metrics, nearest, real_corpus(docs, spans, "direct", 4), False)[0]["contexts"]
        == []
    )


def test_the_entity_index_lists_real_and_synthetic_holders_exactly_or_near():
    docs, spans = real_frames()
    corpus, metrics, nearest = corpus_frames()
    real = real_corpus(docs, spans, "direct", 4)
    index = entity_index(real, {"icl/1": corpus_records(corpus, metrics, nearest, real, True)})
    assert index["henrik hasslund"]["real"] == {"A#0": "exact"}
    assert index["henrik hasslund"]["synthetic"] == {"icl/1:0": "near"}
    assert index["40593/04"]["synthetic"] == {"icl/1:0": "exact"}
    assert index["tomas berg"]["kinds"] == ["fictional"] and index["tomas berg"]["synthetic"] == {
        "icl/1:1": "exact"
    }
    assert index["joanna nowak"]["real"] == {"T#0": "exact"} and index["hasslund"]["real"] == {"A#0": "exact"}


# --- the person view: units at risk ---------------------------------------------------------------

# doc_id, unit, text, direct values, quasi values. Vejle and 1961 are two units' each; only case-1 holds
# both. Lindholm Manor is case-4's alone; so are Ida Olsson and 1958 case-2's.
LINKAGE_DOCUMENTS = [
    ("p1", "case-1", "Henrik Hasslund was born in Vejle in 1961.", [("PERSON", "Henrik Hasslund")],
     [("LOC", "Vejle"), ("DATETIME", "1961")]),
    ("p2", "case-1", "The appeal of Henrik Hasslund failed.", [("PERSON", "Henrik Hasslund")], []),
    ("q1", "case-2", "Ida Olsson was born in Vejle in 1958.", [("PERSON", "Ida Olsson")],
     [("LOC", "Vejle"), ("DATETIME", "1958")]),
    ("r1", "case-3", "Jonas Berg moved to Odense in 1961.", [("PERSON", "Jonas Berg")],
     [("LOC", "Odense"), ("DATETIME", "1961")]),
    ("s1", "case-4", "Lene Holm works at Lindholm Manor in Odense.", [("PERSON", "Lene Holm")],
     [("ORG", "Lindholm Manor"), ("LOC", "Odense")]),
]  # fmt: skip
LINKING = [
    "A visit to Vejle and to Lindholm Manor.",  # with the next, joined through Lindholm Manor: case-1
    "Lindholm Manor was rebuilt in 1961.",
    "A letter from Ida Olsson.",  # case-2's name, which no other unit's text holds
    "Born in Odense in 1958.",  # two units' town and case-2's year: one quasi value singles out no one
]


def linkage_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    docs = pd.DataFrame(
        [
            {"doc_id": d, "split": "train", "segment": 0, "text": text, "unit_id": unit}
            for d, unit, text, _, _ in LINKAGE_DOCUMENTS
        ]
    )
    spans = pd.DataFrame(
        [
            row
            for d, _, text, direct, quasi in LINKAGE_DOCUMENTS
            for row in _spans_of(d, text, direct) + _spans_of(d, text, quasi, "QUASI")
        ]
    )
    return docs, spans


def linkage_view() -> PersonView:
    docs, spans = linkage_frames()
    return PersonView(real_values(docs, spans, "direct", 10, 4, 2), value_types(spans))


def test_units_at_risk_are_those_a_generation_links_alone_or_its_group_together():
    real = linkage_view().real
    held = [real.held_values(text) for text in LINKING]
    assert units_at_risk(real.unit_index, held) == [
        UnitAtRisk("case-1", (Link((0, 1), ("1961", "vejle"), ("lindholm manor",)),)),
        UnitAtRisk("case-2", (Link((2,), ("ida olsson",)),)),
    ]
    # each generation alone: case-1 is no one's; the name links case-2 whatever the others hold
    assert [unit.unit for unit in units_at_risk(real.unit_index, held[:1])] == []
    assert units_at_risk(real.unit_index, [held[2], held[1]]) == [
        UnitAtRisk("case-2", (Link((0,), ("ida olsson",)),))
    ]
    assert units_at_risk(real.unit_index, []) == []


def test_a_unit_at_risk_shows_its_values_in_the_generations_and_in_its_own_segments():
    view = linkage_view()
    case_1, case_2 = view.corpus(LINKING)
    assert case_1["unit"] == "case-1" and case_1["segments"] == 2
    assert case_1["values"] == [
        {"value": "1961", "type": "DATETIME", "identifier": "quasi", "units": 2},
        {"value": "Vejle", "type": "LOC", "identifier": "quasi", "units": 2},
    ]
    (link,) = case_1["links"]
    assert link["joins"] == ["Lindholm Manor"] and [g["i"] for g in link["generations"]] == [0, 1]
    marked = [[(LINKING[g["i"]][s:e], kind) for s, e, kind, _ in g["spans"]] for g in link["generations"]]
    assert marked == [
        [("Vejle", "quasi"), ("Lindholm Manor", "joins")],
        [("Lindholm Manor", "joins"), ("1961", "quasi")],
    ]
    # the unit's segment that holds the values, not its other one (p2 holds neither)
    (segment,) = case_1["real"]
    text = LINKAGE_DOCUMENTS[0][2]
    assert segment["ref"] == "p1#0"
    assert [(text[s:e], kind, value) for s, e, kind, value in segment["spans"]] == [
        ("Vejle", "quasi", "Vejle"),
        ("1961", "quasi", "1961"),
    ]
    assert case_2["values"] == [{"value": "Ida Olsson", "type": "PERSON", "identifier": "direct", "units": 1}]
    assert [(r["ref"], [kind for *_, kind, _ in r["spans"]]) for r in case_2["real"]] == [
        ("q1#0", ["direct"])
    ]
    assert view.corpus(["Nothing of anyone.", LINKING[3]]) == []


def test_the_page_lists_each_corpus_units_at_risk_or_says_it_has_none(tmp_path):
    site = build_fixture_site(tmp_path, texts={"ft": ["A short note."] * 3})
    page = (site / "index.html").read_text(encoding="utf-8")
    assert [c["units_at_risk"] for c in page_manifest(page)["corpora"]] == [2, 0]
    summary = page.split('<ul id="units-summary">')[1].split("</ul>")[0]
    assert [line.split("</li>")[0].strip() for line in summary.split("<li>")[1:]] == [
        "ICL, seed 1: 2 units at risk",
        "Fine-tuning, seed 1: no unit at risk",
    ]
    script = (site / "data/units.js").read_text(encoding="utf-8")
    units = json.loads(script.split(" = ", 2)[2].rstrip(";\n"))
    assert units["ft/1"] == []
    # A: its application number, which no other text holds, and its town beside it; C: its guild and town,
    # which only C's text holds both
    assert [(u["unit"], [v["value"] for v in u["values"]]) for u in units["icl/1"]] == [
        ("A", ["40593/04", "Aarhus"]),
        ("C", ["<b>Amber</b> Guild", "Gdynia"]),
    ]
    # the unit's segments are in the real segments' data file
    assert '"C#0"' in (site / "data/real.js").read_text(encoding="utf-8")


def test_fingerprint_changes_with_any_corpus(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    a.write_bytes(b"one")
    b.write_bytes(b"two")
    first = corpus_fingerprint([a, b])
    assert first == corpus_fingerprint([a, b]) and len(first) == 16
    assert corpus_fingerprint([b, a]) != first
    b.write_bytes(b"three")
    assert corpus_fingerprint([a, b]) != first


def test_data_scripts_assign_the_payload_to_the_global():
    script = data_script("real", {"A#0": {"text": "</script><b>"}})
    assert script.startswith("window.PLAINSIGHT_REVIEW_DATA = window.PLAINSIGHT_REVIEW_DATA || {};")
    assert json.loads(script.split(" = ", 2)[2].rstrip(";\n")) == {"A#0": {"text": "</script><b>"}}


ICL_VERDICT = AuditVerdict(
    "FAIL",
    ("leak_excess: FAIL (<b>any identifier</b> >= 0.12 (max 0.05))", "verbatim: PASS (<= 0.01 (max 0.05))"),
    "the adversary holds the released text and knows the rest of the corpus",
)


def build_fixture_site(
    root: Path,
    verdicts: dict[str, AuditVerdict] | None = None,
    utility: pd.DataFrame | None = None,
    texts: dict[str, list[str]] | None = None,
    bundles: dict[str, ReleaseSummary] | None = None,
    frontier: dict | None = None,
) -> Path:
    """The review page of two fixture corpora (icl and ft), as the rule builds it; the audit's verdicts
    (icl audited, ft without a row) unless given, no utility table and no comments unless given; each
    method's generations `GENERATIONS` unless `texts` gives others."""
    verdicts = {"icl": ICL_VERDICT} if verdicts is None else verdicts
    docs, spans = real_frames()
    runs = []
    for method in ("icl", "ft"):
        corpus, metrics, nearest = corpus_frames(method, (texts or {}).get(method, GENERATIONS))
        folder = root / "runs" / method
        folder.mkdir(parents=True)
        corpus.to_parquet(folder / "seed1.parquet")
        metrics.to_parquet(folder / "metrics.parquet")
        nearest.to_parquet(folder / "nearest.parquet")
        runs.append(
            ReviewRun(
                method, 1, folder / "seed1.parquet", folder / "metrics.parquet", folder / "nearest.parquet"
            )
        )
    site = root / "review/tab/known/direct"
    build_review_site(
        SUBJECT,
        runs,
        docs,
        spans,
        {"icl": "ICL", "ft": "Fine-tuning"},
        METRICS,
        SitePaths(site / "index.html", site / "data"),
        ReviewEvidence(
            verdicts or None,
            utility,
            pd.DataFrame({"method": ["icl"], "seed": [1], "verdict": ["leaks"]}),
            bundles,
            frontier,
        ),
    )
    return site


def page_manifest(page: str) -> dict:
    return json.loads(page.split('<script id="manifest" type="application/json">')[1].split("</script>")[0])


def test_the_site_keeps_corpus_text_out_of_the_page(tmp_path):
    site = build_fixture_site(tmp_path)
    page = (site / "index.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in (site / "data").iterdir()) == [
        "corpus_ft_seed1.js",
        "corpus_icl_seed1.js",
        "entities.js",
        "real.js",
        "units.js",
    ]
    assert "window.pwned" not in page and "Hasslund" not in page
    manifest = page_manifest(page)
    assert [c["key"] for c in manifest["corpora"]] == ["icl/1", "ft/1"]
    assert [c["leaking"] for c in manifest["corpora"]] == [1, 1]
    assert manifest["flags"] == ["exact", "partial", "near", "source_specific", "not_document", "regenerated"]
    assert manifest["fingerprint"] == corpus_fingerprint(
        [tmp_path / "runs/icl/seed1.parquet", tmp_path / "runs/ft/seed1.parquet"]
    )


def test_the_page_shows_each_methods_audit_verdict_escaped_or_no_audit(tmp_path):
    page = (build_fixture_site(tmp_path / "audited") / "index.html").read_text(encoding="utf-8")
    audit = page_manifest(page)["audit"]
    assert audit["audited"] and audit["threat_model"] == ICL_VERDICT.threat_model
    assert [(m["method"], m["verdict"], len(m["reasons"])) for m in audit["methods"]] == [
        ("icl", "FAIL", 2),
        ("ft", "no audit", 0),  # the audit table has no row for it
    ]
    header = page.split('<section id="release-summary"')[1].split("</section>")[0]
    assert '<td>ICL</td><td><span class="verdict-badge verdict-fail">FAIL</span>' in header
    assert '<td>Fine-tuning</td><td><span class="verdict-badge verdict-no-audit">no audit</span>' in header
    assert "&lt;b&gt;any identifier&lt;/b&gt;" in header and "<b>" not in header
    page = (build_fixture_site(tmp_path / "plain", verdicts={}) / "index.html").read_text(encoding="utf-8")
    audit = page_manifest(page)["audit"]
    assert not audit["audited"] and {m["verdict"] for m in audit["methods"]} == {"no audit"}
    assert "(no audit of this run" in page


def test_the_page_shows_the_frontier_where_given_escaped(tmp_path):
    table = tmp_path / "frontier.csv"
    pd.DataFrame(
        [
            {
                "method": "dpsgd",
                "dp_epsilon": 1.0,
                "verdict": "PASS",
                "fit_as_text": "<b>not fit</b> as text",
                "documents_share": 0.17,
                "documents_share_low": 0.12,
                "documents_share_high": 0.22,
                "macro_f1": 0.15,
                "macro_f1_low": 0.05,
                "macro_f1_high": 0.25,
                "mauve": float("nan"),
                "mauve_low": float("nan"),
                "mauve_high": float("nan"),
            }
        ]
    ).to_csv(table, index=False)
    figure = tmp_path / "frontier.png"
    figure.write_bytes(b"\x89PNG fixture bytes")
    view = frontier_view([table, figure], {"dpsgd": "DP-SGD"})
    assert frontier_view([], {}) is None
    page = (build_fixture_site(tmp_path / "with", frontier=view) / "index.html").read_text(encoding="utf-8")
    section = page.split('<section id="frontier"')[1].split("</section>")[0]
    assert "<td>DP-SGD</td><td>1</td>" in section and 'verdict-pass">PASS' in section
    assert "<td>17 [12, 22]</td><td>0.150 [0.050, 0.250]</td><td>not measured</td>" in section
    assert "&lt;b&gt;not fit&lt;/b&gt; as text" in section and "<b>" not in section
    assert 'src="data:image/png;base64,' + base64.b64encode(figure.read_bytes()).decode() + '"' in section
    page = (build_fixture_site(tmp_path / "without") / "index.html").read_text(encoding="utf-8")
    assert 'id="frontier"' not in page


def summary_rows(page: str) -> list[str]:
    """The top table's rows of the page's release summary, each as its cells' texts."""
    table = page.split('<table class="summary-table">')[1].split("</table>")[0]
    return [
        " | ".join(cell.split("</td>")[0] for cell in row.split("<td>")[1:])
        for row in table.split("<tbody>")[1].split("</tr>")[:-1]
    ]


def test_the_page_opens_with_each_methods_release_summary(tmp_path):
    utility = pd.DataFrame(
        {
            "dataset": "tab",
            "setting": "known",
            "idset": "direct",
            "method": ["real", "chance", "negative_control", "icl"],
            "macro_f1": [0.8, 0.2, 0.3, 0.5],
        }
    )
    page = (build_fixture_site(tmp_path / "a", utility=utility) / "index.html").read_text(encoding="utf-8")
    # icl: 3 generations, the first holding a source-specific code and a common town; reviewed: one
    # generation marked as leaking; ft: the same texts, no audit row, no utility row
    stamp = '<span class="stamp">NOT FOR RELEASE</span>'
    assert summary_rows(page) == [
        f'ICL | <span class="verdict-badge verdict-fail">FAIL</span> | {stamp} | 3 | 1 | 1 | 0.500 (chance '
        "0.200, zero learning 0.300, ceiling 0.800) | 1 of 3 | "
        '<a class="summary-link" href="#summary-icl">summary</a>',
        f'Fine-tuning | <span class="verdict-badge verdict-no-audit">no audit</span> | {stamp} | 3 | 1 | 1 '
        '| not measured | 0 of 3 | <a class="summary-link" href="#summary-ft">summary</a>',
    ]
    details = page.split('<details class="method-summary" id="summary-icl">')[1].split("</details>")[0]
    assert '<p class="stamp"><strong>NOT FOR RELEASE.</strong> The verdict is FAIL, not PASS' in details
    assert "<td>CODE</td><td>1</td><td>0</td><td>1</td><td>0</td>" in details
    assert "<td>LOC</td><td>0</td><td>1</td><td>0</td><td>1</td>" in details
    assert (
        "Downstream macro-F1: 50% of the way from chance to the real-data ceiling, 0.200 above the "
        "zero-learning corpus (0.300)." in details
    )
    assert "1 of 3 generations (33.3%) reviewed on the review page; their verdicts: leaks 1." in details


CONFIDENTIAL = '<p class="confidential" role="note"><strong>Confidential: real text.</strong>'
VIEWS = ("document", "unit-view", "real-view")  # the page's views beside its index, each a section


def test_every_view_of_the_page_says_it_holds_real_text_for_the_custodian_alone(tmp_path):
    page = (build_fixture_site(tmp_path) / "index.html").read_text(encoding="utf-8")
    body = page.split("<body>")[1]
    index = body.split("<header>")[0]
    assert CONFIDENTIAL in index and "it stays with the data custodian" in index
    for view in VIEWS:
        section = body.split(f'<section id="{view}"')[1].split("</section>")[0]
        assert section.count(CONFIDENTIAL) == 1, view
    # the views are the sections the page shows on demand: a view added without the stamp fails here
    assert re.findall(r'<section id="([\w-]+)"[^>]*hidden>', body) == list(VIEWS)
    assert body.count(CONFIDENTIAL) == 1 + len(VIEWS)


def test_audit_verdicts_read_the_rows_of_the_pages_run(tmp_path):
    table = pd.DataFrame(
        {
            "dataset": ["tab", "tab", "tab"],
            "setting": ["known", "known", "unknown"],
            "idset": ["direct", "direct", "direct"],
            "method": ["base", "icl", "icl"],
            "verdict": [None, "PASS", "FAIL"],
            "verdict_reasons": [None, "leak_excess: PASS (a); verbatim: PASS (b)", "x: FAIL (c)"],
            "threat_model": [None, "t", "t"],
        }
    )
    table.to_csv(tmp_path / "privacy_audit.csv", index=False)
    path = str(tmp_path / "privacy_audit.csv")
    verdicts = audit_verdicts([path], SUBJECT.keys)
    assert verdicts == {
        "base": AuditVerdict("no verdict", (), "", path),  # the control row released nothing
        "icl": AuditVerdict("PASS", ("leak_excess: PASS (a)", "verbatim: PASS (b)"), "t", path),
    }
    # a later table's row wins: the all-methods page reads the methods table, then the audit table
    methods = table.assign(verdict=["PASS", "FAIL", "FAIL"], threat_model=[None, "m", "m"])
    methods.to_csv(tmp_path / "methods.csv", index=False)
    both = audit_verdicts([str(tmp_path / "methods.csv"), path], SUBJECT.keys)
    assert both["icl"].verdict == "PASS" and both["icl"].source == path
    assert both["base"].verdict == "no verdict"
    assert audit_verdicts([], SUBJECT.keys) is None


def exported(fingerprint: str, comments: list[dict], idset: str = "direct") -> dict:
    return {
        "format": "plainsight-review-comments",
        "version": 1,
        "dataset": "tab",
        "setting": "known",
        "idset": idset,
        "fingerprint": fingerprint,
        "comments": comments,
    }


SIZES = {("icl", 1): 3, ("ft", 1): 3}


def test_comment_files_become_one_table_and_a_table_note(tmp_path):
    first = tmp_path / "alice.json"
    first.write_text(
        json.dumps(
            exported(
                "f" * 16,
                [
                    {
                        "method": "icl",
                        "seed": 1,
                        "generation": 0,
                        "verdict": "leaks",
                        "comment": "names the applicant",
                        "updated": "2026-01-01T10:00:00Z",
                    },
                    {
                        "method": "ft",
                        "seed": 1,
                        "generation": 2,
                        "verdict": "not a document",
                        "comment": "",
                        "updated": "2026-01-01T10:00:00Z",
                    },
                ],
            )
        )
    )
    second = tmp_path / "bob.json"
    second.write_text(
        json.dumps(
            exported(
                "f" * 16,
                [
                    {
                        "method": "icl",
                        "seed": 1,
                        "generation": 0,
                        "verdict": "copies",
                        "comment": "later",
                        "updated": "2026-01-02T10:00:00Z",
                    },
                    {
                        "method": "icl",
                        "seed": 1,
                        "generation": 1,
                        "verdict": "leaks",
                        "updated": "2026-01-02T10:00:00Z",
                    },
                ],
            )
        )
    )
    table = comments_table([first, second], SUBJECT, "f" * 16, SIZES)
    assert list(zip(table["method"], table["generation"], table["verdict"])) == [
        ("ft", 2, "not a document"),
        ("icl", 0, "copies"),
        ("icl", 1, "leaks"),
    ]
    assert set(table["dataset"]) == {"tab"} and table["comment"].tolist()[1] == "later"
    notes = review_notes(table, {"icl": "ICL", "ft": "Fine-tuning", "icl_pe": "ICL-PE"})
    assert notes == [
        "Review page: 3 reviewed, 1 marked as leaking "
        "(ICL 2 reviewed, 1 marked as leaking; Fine-tuning 1 reviewed, 0 marked as leaking)."
    ]
    assert review_notes(table.iloc[0:0], {"icl": "ICL"}) == []


@pytest.mark.parametrize(
    "content, message",
    [
        (
            exported("f" * 16, [], idset="quasi"),
            "written for tab/known/quasi (corpora ffffffffffffffff), not for tab/known/direct",
        ),
        (exported("0" * 16, []), "written for tab/known/direct (corpora 0000000000000000)"),
        (
            exported("f" * 16, [{"method": "icl", "seed": 1, "generation": 3, "verdict": "fine"}]),
            "comment 1: generation 3 is not in icl seed 1",
        ),
        (
            exported("f" * 16, [{"method": "icl", "seed": 1, "generation": 0, "verdict": "bad"}]),
            "comment 1: verdict 'bad' is not one of",
        ),
        ({"comments": []}, "not a review comments file"),
    ],
)
def test_a_comment_file_for_other_corpora_or_malformed_stops_naming_it(tmp_path, content, message):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(content))
    with pytest.raises(
        InputError, match=str(path).replace("/", ".") + ".*" + message.replace("(", ".").replace(")", ".")
    ):
        read_comment_file(path, SUBJECT, "f" * 16, SIZES)
    path.write_text("{not json")
    with pytest.raises(InputError, match="malformed JSON"):
        read_comment_file(path, SUBJECT, "f" * 16, SIZES)


# --- the page in headless Chromium ---------------------------------------------------------------


def wait_for(condition, seconds: float = 10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError("timed out waiting for the page")


def test_the_page_filters_looks_up_comments_exports_and_imports(tmp_path):
    from selenium.webdriver.common.by import By

    site = build_fixture_site(tmp_path)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser = headless_chromium(5, downloads)
    try:
        browser.get((site / "index.html").as_uri())
        wait_for(lambda: browser.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "icl/1")
        verdicts = browser.find_elements(By.CSS_SELECTOR, "#release-summary tr.audit-verdict")
        assert [v.find_element(By.CLASS_NAME, "verdict-badge").text for v in verdicts] == ["FAIL", "no audit"]
        assert [v.text.split()[0] for v in verdicts] == ["ICL", "Fine-tuning"]
        release_summary(browser)
        rows = lambda: browser.find_elements(By.CSS_SELECTOR, "#generations tbody tr")  # noqa: E731
        assert len(rows()) == 3
        browser.find_element(By.ID, "only-leaking").click()
        assert [row.get_attribute("data-index") for row in rows()] == ["0"]
        browser.find_element(By.ID, "only-leaking").click()
        # markup in a generation shows as text and never runs
        rows()[1].click()
        text = wait_for(lambda: browser.find_element(By.ID, "doc-text").text)
        assert "<script>window.pwned = 1</script>" in text
        assert browser.execute_script("return window.pwned === undefined")
        assert [m.text for m in browser.find_elements(By.CSS_SELECTOR, "#doc-text mark.hl-fictional")] == [
            "Tomas Berg",
            "Oslo",
        ]
        # the leaking generation: highlights, nearest segment with its shared run
        wait_for(lambda: len(rows()) == 3)
        rows()[0].click()
        wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#doc-text mark.hl-near"))
        assert [m.text for m in browser.find_elements(By.CSS_SELECTOR, "#doc-text mark")] == [
            "Henrik Hasslud",
            "Aarhus",
            "40593/04",
        ]
        # the leaked values' classes: a distinct style each, said in the title and the value list
        specific = browser.find_element(By.CSS_SELECTOR, "#doc-text mark.leak-source_specific")
        assert specific.text == "40593/04" and "source-specific" in specific.get_attribute("title")
        assert [m.text for m in browser.find_elements(By.CSS_SELECTOR, "#doc-text mark.leak-common")] == [
            "Aarhus"
        ]
        assert "common: other real segments hold it too" in browser.find_element(By.ID, "doc-values").text
        styles = [
            browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", mark)
            for mark in (specific, browser.find_element(By.CSS_SELECTOR, "#doc-text mark.leak-common"))
        ]
        assert styles == ["solid", "dashed"]
        shared = browser.find_elements(By.CSS_SELECTOR, "#doc-nearest .pair .text:last-child mark.hl-shared")
        assert shared and shared[0].text.startswith("was born in 1950")
        # entity lookup by typing
        browser.find_element(By.ID, "lookup-input").send_keys("Henrik Hasslund")
        browser.find_element(By.ID, "lookup-button").click()
        entry = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#lookup-results .lookup-entry"))[0]
        assert "A#0" in entry.find_element(By.CLASS_NAME, "lookup-real").text
        assert "ICL seed 1 #0 (near)" in entry.find_element(By.CLASS_NAME, "lookup-synthetic").text
        person_view(browser)
        comment_export_and_import(browser, tmp_path, downloads)
        browser.save_screenshot(str(tmp_path / "review.png"))
    finally:
        browser.quit()


def release_summary(browser) -> None:
    """The page opens with each method's release summary: the stamp shows in red, and a method's link
    opens its whole summary, the verdict sentence and the values by entity type."""
    from selenium.webdriver.common.by import By

    stamps = browser.find_elements(By.CSS_SELECTOR, "#release-summary tr.audit-verdict .stamp")
    assert [stamp.text for stamp in stamps] == ["NOT FOR RELEASE"] * 2 and stamps[0].is_displayed()
    assert (
        browser.execute_script("return getComputedStyle(arguments[0]).color", stamps[0]) == "rgb(176, 0, 32)"
    )
    details = browser.find_element(By.ID, "summary-icl")
    assert details.get_attribute("open") is None
    browser.find_element(By.CSS_SELECTOR, 'a.summary-link[href="#summary-icl"]').click()
    wait_for(lambda: details.get_attribute("open") is not None)
    assert details.find_element(By.CSS_SELECTOR, "p.stamp").text.startswith(
        "NOT FOR RELEASE. The verdict is FAIL"
    )
    assert details.find_element(By.CSS_SELECTOR, "p.verdict").text.startswith(
        "FAIL under the threat model that the adversary holds the released text"
    )
    rows = details.find_elements(By.CSS_SELECTOR, "table.leaks tbody tr")
    assert [row.text for row in rows] == ["CODE 1 0 1 0", "LOC 0 1 0 1", "All types 1 1 1 1"]
    browser.find_element(By.CSS_SELECTOR, "#summary-icl > summary").click()  # closed again


def person_view(browser) -> None:
    """The units at risk of the open corpus: a unit opens with its values highlighted in the generation
    that links it and in its own real segment, markup in a value shown as text; a generation's button
    opens it in the document view."""
    from selenium.webdriver.common.by import By

    summary = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#units-summary li")]
    assert summary == ["ICL, seed 1: 2 units at risk", "Fine-tuning, seed 1: 2 units at risk"]
    units = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#units-list li.unit-entry"))
    assert [unit.text.split(":")[0] for unit in units] == ["unit A", "unit C"]
    units[1].find_element(By.CSS_SELECTOR, "button.ref").click()
    view = wait_for(
        lambda: (
            browser.find_element(By.ID, "unit-view").is_displayed()
            and browser.find_element(By.ID, "unit-view")
        )
    )
    assert view.find_element(By.ID, "unit-title").text == "Unit C, singled out by ICL, seed 1"
    values = [m.text for m in view.find_elements(By.CSS_SELECTOR, "#unit-values mark")]
    assert values == ["<b>Amber</b> Guild", "Gdynia"] and not view.find_elements(By.TAG_NAME, "b")
    assert "generation #2 links it alone" in view.find_element(By.ID, "unit-links").text
    for where in ("#unit-links .unit-generation", "#unit-real .unit-segment"):
        marks = view.find_elements(By.CSS_SELECTOR, where + " mark.unit-quasi")
        assert [m.text for m in marks] == ["<b>Amber</b> Guild", "Gdynia"] and marks[0].is_displayed()
        colour = browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", marks[0])
        assert colour == "rgb(255, 217, 160)"
    assert "C#0 (train split)" in view.find_element(By.ID, "unit-real").text
    # A: its application number, a direct value, framed in its own segment; its generation opens
    units[0].find_element(By.CSS_SELECTOR, "button.ref").click()
    wait_for(lambda: view.find_element(By.ID, "unit-title").text.startswith("Unit A"))
    direct = view.find_element(By.CSS_SELECTOR, "#unit-real .unit-segment mark.unit-direct")
    assert direct.text == "40593/04" and direct.is_displayed()
    view.find_element(By.XPATH, ".//button[text()='open generation #0']").click()
    wait_for(lambda: browser.find_element(By.ID, "doc-title").text.startswith("ICL, seed 1, generation 0"))


def comment_export_and_import(browser, tmp_path: Path, downloads: Path) -> None:
    """Write a comment on the open generation, export it, read it as the rule does, import it into a
    fresh browser store; a file for another corpus is refused with one line."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "verdict")).select_by_visible_text("leaks")
    browser.find_element(By.ID, "comment").send_keys("names the applicant")
    browser.find_element(By.ID, "save-comment").click()
    browser.find_element(By.ID, "export").click()
    exported_file = wait_for(lambda: next(downloads.glob("review-tab-known-direct*.json"), None))
    content = json.loads(wait_for(lambda: exported_file.read_text() or None))
    assert content["fingerprint"] == corpus_fingerprint(
        [tmp_path / "runs/icl/seed1.parquet", tmp_path / "runs/ft/seed1.parquet"]
    )
    assert [(c["method"], c["generation"], c["verdict"], c["comment"]) for c in content["comments"]] == [
        ("icl", 0, "leaks", "names the applicant")
    ]
    # the rule reads what the page wrote
    table = comments_table([exported_file], SUBJECT, content["fingerprint"], SIZES)
    assert table["verdict"].tolist() == ["leaks"]
    # imported into a fresh browser store, it shows again; a file for another corpus is refused
    browser.execute_script("localStorage.clear()")
    browser.refresh()
    wait_for(lambda: browser.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "icl/1")
    browser.find_element(By.ID, "import").send_keys(str(exported_file))
    wait_for(lambda: "Imported 1 comments" in browser.find_element(By.ID, "message").text)
    assert browser.find_elements(By.CSS_SELECTOR, "#generations tbody tr td.verdict")[0].text == "leaks"
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**content, "idset": "quasi"}))
    browser.find_element(By.ID, "import").send_keys(str(other))
    message = wait_for(lambda: browser.find_element(By.CSS_SELECTOR, "#message.error").text)
    assert message.startswith("other.json: written for tab/known/quasi")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    browser.find_element(By.ID, "import").send_keys(str(broken))
    wait_for(
        lambda: browser.find_element(By.CSS_SELECTOR, "#message.error").text == "broken.json: malformed JSON"
    )


# --- one summary per release: the page shows the bundle's SUMMARY.md -----------------------------


def own_corpus_config() -> dict:
    """The config of a corpus of one's own as docs/own-corpus.md sets it up: the shipped example over the
    embedded default, no key edited."""
    return read_config([REPO / "config/config.yaml", REPO / "config/examples/generic.yaml"])


def test_an_own_corpus_is_audited_and_its_page_shows_the_bundles_summary_without_editing_a_key():
    config = own_corpus_config()
    assert (
        "datasets" not in config["audit"] and "casenotes" in Settings.from_config(config).audited_datasets()
    )
    assert config["review"]["release_summaries"] is True
    # the embedded default keeps make run's page on the run's audit
    assert read_config([REPO / "config/config.yaml"])["review"]["release_summaries"] is False


def test_the_pages_summary_is_the_bundles_summary_md_word_for_word_from_one_audit_record(tmp_path):
    config = own_corpus_config()
    assert config["datasets"]["casenotes"]["format"] == "generic"
    subject = {"dataset": "casenotes", "setting": "known", "idset": "direct"}
    # one audit record (rule release_audit) of what the icl bundle ships: an undecided leak criterion
    record = {
        "row": {
            "verdict": "INCONCLUSIVE",
            "verdict_reasons": "leak_excess: INCONCLUSIVE (near <= 0.142 (max 0.05))",
            "threat_model": "the adversary holds the released text and knows the rest of the corpus",
        }
    }
    audit_path = tmp_path / "casenotes/known/direct/release/icl/audit.json"
    audit_path.parent.mkdir(parents=True)
    audit_path.write_text(json.dumps(record), encoding="utf-8")
    corpus, metrics, _ = corpus_frames("icl")
    files = {}
    for seed in (1, 2):  # the bundle's seeds, each with its kept rows (the first two) and metrics
        for name, frame in (("kept", corpus.head(2)), ("metrics", metrics)):
            files.setdefault(name, []).append(
                _parquet(frame.assign(seed=seed), tmp_path / f"{name}{seed}.parquet")
            )
    _, spans = ingest(write_jsonl(tmp_path / "notes.jsonl", records(3)))  # the generic reader's spans
    # a corpus without labels: the run's utility says why the downstream task is not measured
    measures = not_measured_scores(
        {("icl", 1): corpus, ("icl", 2): corpus}, "no labels: no document has a `label`"
    )
    utility_file = _parquet(measures.assign(**subject), tmp_path / "measures.parquet")
    comments = pd.DataFrame({"method": ["icl"], "seed": [1], "verdict": ["leaks"]})
    release = config["release"]

    # rule release_bundle: the verdict of the audit record, the frames of every seed -> SUMMARY.md
    run = ReleaseRun(*subject.values(), "icl", "smollm2-135m", {}, BundleSettings.from_config(release))
    run = replace(
        run,
        verdict=shipped_verdict(record, str(audit_path)),
        sign_offs=read_sign_offs(release["sign_off"]),
        audit=record,
    )
    utility = run_utility_table([utility_file], {})
    bundle_files = {**files, **dict.fromkeys(("corpora", "filtered", "summaries"), files["kept"])}
    frames = bundle_frames(
        {**bundle_files, "spans": _parquet(spans, tmp_path / "spans.parquet")}, utility, comments
    )
    links = {
        "card": "results/release/casenotes/known/direct/icl/custodian/EVIDENCE.md",
        "verdict": "x/verdict.json",
    }
    summary_md = summary_markdown(bundle_summary(run, frames, [], links))

    # rule review_page: the same files, read by the same code, the links reaching the bundle's folder
    bundles = PageBundles(
        [("icl", 1), ("icl", 2)], [str(audit_path)], [utility_file], files["kept"], files["metrics"]
    )
    page_path = "results/review/casenotes/known/direct/index.html"
    page_summaries = page_bundle_summaries(
        subject, bundles, release, {"spans": spans, "comments": comments}, {}, page_path
    )
    folder = "../../../../release/casenotes/known/direct/icl/custodian/"
    assert list(page_summaries) == ["icl"]
    assert summary_markdown(page_summaries["icl"]).replace(folder, "") == summary_md
    assert f"[the verdict for machines]({folder}verdict.json)" in summary_markdown(page_summaries["icl"])
    assert page_summaries["icl"].outcome == "INCONCLUSIVE" and page_summaries["icl"].stamped
    assert "Downstream task not measured: no labels: no document has a `label`." in summary_md
    assert "The bundle ships 4 of these 6 (`release.drop: any_identifier`)" in summary_md
    # where the page shows its run's audit, no bundle summary is read
    assert page_bundle_summaries(subject, PageBundles([], [], [], [], []), release, {}, {}, page_path) is None

    site = build_fixture_site(
        tmp_path / "site", bundles={"icl": page_summaries["icl"], "ft": page_summaries["icl"]}
    )
    page = (site / "index.html").read_text(encoding="utf-8")
    assert summary_html(page_summaries["icl"], top_level=3) in page
    assert "ICL: the summary to sign, its release bundle's <code>SUMMARY.md</code>" in page
    assert (
        'ICL | <span class="verdict-badge verdict-inconclusive">INCONCLUSIVE</span>' in summary_rows(page)[0]
    )
    assert "not the summary to sign" not in page and "no audit of this run" not in page


def _parquet(frame: pd.DataFrame, path: Path) -> str:
    frame.to_parquet(path)
    return str(path)
