"""The review page: its highlight spans, nearest-segment n-grams, entity index, comments and the page itself
in headless Chromium (built from fixture corpora with the nearest-documents schema)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import headless_chromium
from plainsight.errors import InputError
from plainsight.matching import near_spans, value_spans
from plainsight.report.audit_verdict import AuditVerdict, audit_verdicts
from plainsight.report.review_comments import comments_table, read_comment_file, review_notes
from plainsight.report.review_data import (
    corpus_fingerprint,
    corpus_records,
    entity_index,
    real_corpus,
    shared_ngram_spans,
)
from plainsight.report.review_site import ReviewRun, ReviewSubject, build_review_site, data_script

SUBJECT = ReviewSubject("tab", "known", "direct")
REAL_A = (
    "The applicant, Mr Henrik Hasslund, was born in 1950 and lives in Aarhus. "
    "He lodged application no. 40593/04 with the Court on the same day."
)
REAL_B = "The applicant, Ms Anna Kowalska, lives in Krakow and works as a teacher at the local school."
REAL_TEST = "Ms Joanna Nowak lives in Gdansk."


def _spans_of(doc_id: str, text: str, values: list[tuple[str, str]]) -> list[dict]:
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
                "identifier_type": "DIRECT",
                "entity_id": value,
                "mention_id": f"{doc_id}-{start}",
                "raw_label": entity_type,
            }
        )
    return rows


def real_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    docs = pd.DataFrame(
        {
            "doc_id": ["A", "B", "T"],
            "split": ["train", "train", "test"],
            "segment": [0, 0, 0],
            "text": [REAL_A, REAL_B, REAL_TEST],
            "annotator": ["x", "x", "x"],
        }
    )
    spans = pd.DataFrame(
        _spans_of("A", REAL_A, [("PERSON", "Henrik Hasslund"), ("CODE", "40593/04")])
        + _spans_of("B", REAL_B, [("PERSON", "Anna Kowalska")])
        + _spans_of("T", REAL_TEST, [("PERSON", "Joanna Nowak")])
    )
    return docs, spans


# generation 0 copies A word for word with a near variant of its applicant; 1 holds a fictional name and
# markup; 2 is clean and short
GENERATIONS = [
    "Mr Henrik Hasslud was born in 1950 and lives in Aarhus. He lodged application no. 40593/04 today.",
    "The applicant, Mr Tomas Berg, wrote <script>window.pwned = 1</script> to the Court in Oslo.",
    "A short note.",
]


def corpus_frames(method: str = "icl") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    corpus = pd.DataFrame(
        {
            "generation_id": [f"g{i}" for i in range(3)],
            "method": method,
            "seed": 1,
            "segment": [0, 0, 1],
            "text": GENERATIONS,
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


def build_fixture_site(root: Path, verdicts: dict[str, AuditVerdict] | None = None) -> Path:
    """The review page of two fixture corpora (icl and ft), as the rule builds it; the audit's verdicts
    (icl audited, ft without a row) unless given."""
    verdicts = {"icl": ICL_VERDICT} if verdicts is None else verdicts
    docs, spans = real_frames()
    runs = []
    for method in ("icl", "ft"):
        corpus, metrics, nearest = corpus_frames(method)
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
        4,
        site / "index.html",
        site / "data",
        verdicts or None,
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
    header = page.split('<section id="audit-verdicts"')[1].split("</section>")[0]
    assert 'ICL <span class="verdict-badge verdict-fail">FAIL</span>' in header
    assert 'Fine-tuning <span class="verdict-badge verdict-no-audit">no audit</span>' in header
    assert "&lt;b&gt;any identifier&lt;/b&gt;" in header and "<b>" not in header
    page = (build_fixture_site(tmp_path / "plain", verdicts={}) / "index.html").read_text(encoding="utf-8")
    audit = page_manifest(page)["audit"]
    assert not audit["audited"] and {m["verdict"] for m in audit["methods"]} == {"no audit"}
    assert "(no audit of this run" in page


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
        verdicts = browser.find_elements(By.CSS_SELECTOR, "#audit-verdicts li.audit-verdict")
        assert [v.find_element(By.CLASS_NAME, "verdict-badge").text for v in verdicts] == ["FAIL", "no audit"]
        assert [v.text.split()[0] for v in verdicts] == ["ICL", "Fine-tuning"]
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
        comment_export_and_import(browser, tmp_path, downloads)
        browser.save_screenshot(str(tmp_path / "review.png"))
    finally:
        browser.quit()


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
