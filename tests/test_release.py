"""Release bundles: leaking generations left out by `release.drop` and counted by the class of what they
hold, no real text, the dataset card's front matter, verdict and evidence, a layout `datasets` reads."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, fields, replace

import pandas as pd
import pytest
import yaml

from plainsight.audit.criteria import Gate
from plainsight.audit.gate import FORMAL
from plainsight.audit.protection import UnitSizes
from plainsight.report.audit_verdict import AuditVerdict
from plainsight.report.bundle_files import CUSTODIAN_FOLDER, EVIDENCE_FILE
from plainsight.report.public_card import public_card
from plainsight.report.release import (
    build_release,
    data_sha256,
    evidence_tables,
    method_verdict,
    verdict_record,
    write_data_file,
    write_release,
)
from plainsight.report.release_card import person_notes, size_category
from plainsight.report.release_filter import kept_rows, release_filter
from plainsight.report.release_run import BundleSettings, EvidenceTable, PublicBundle, ReleaseRun, bundle_drop
from plainsight.report.sign_off import (
    BundleSignOff,
    SignOff,
    bundle_sign_off,
    read_sign_offs,
)
from plainsight.report.sign_off import main as sign_off_main
from plainsight.report.summary import NOT_FOR_RELEASE, utility_rows

SPANS = pd.DataFrame(
    {
        "text": ["Anna Berg", "Tromso", "SC-10442", "a public word"],
        "entity_type": ["PERSON", "LOC", "CODE", "MISC"],
        "identifier_type": ["DIRECT", "QUASI", "DIRECT", "NO_MASK"],
    }
)
CODES = pd.DataFrame({"entities": [[{"type": "ORG", "value": "Elmbury Homes Trust"}]]})
TEXTS = [
    "A clean note about a visit.",  # kept
    "Anna Berg was seen at home.",  # exact leak of a source-specific value
    "Ms Berg said little.",  # partial leak: a name word alone, unclassed
    "The visit was in Tromso.",  # a quasi value of its source that other segments hold too (common)
    "Referred by Elmbury Homes Trust.",  # a detected value of the codes (any identifier), of no source
    "Another clean note, a public word.",
]  # NO_MASK values are not identifiers: kept


def frames(drop: str = "any_identifier"):
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
    # rows in another order than the corpus: (seed 1: 2, 1, 0; seed 2: 0, 1, 2)
    metrics = pd.DataFrame(
        {
            "generation_id": [2, 1, 0, 0, 1, 2],
            "seed": [1, 1, 1, 2, 2, 2],
            "leaked": [False, True, False, False, False, False],
            "leaked_values": [[], ["Anna Berg"], [], [], [], []],
            "partial_leak": [True, False, False, False, False, False],
            "near_leak": [True, True, False, False, False, False],
            "near_leaked_values": [["Berg"], ["Anna Berg", "Berg"], [], [], [], []],
            "unit_linked": [False, True, False, False, False, False],  # Anna Berg is one client's
            "code_part_leak": [False] * 6,
            "leaked_identifier_values": [[], ["Anna Berg"], [], ["Tromso"], [], []],
            "leaked_value_classes": [[], ["source_specific"], [], ["common"], [], []],
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
        BundleSettings(drop),
        evidence=(EvidenceTable("Audit", pd.DataFrame({"nearest cosine": [0.41]})),),
    )
    return run, corpora, metrics, summaries


# the bundle's data file, and its custodian's part (rule release_bundle's outputs)
FILES = {
    "bundle": "synthetic.jsonl",
    "card": f"{CUSTODIAN_FOLDER}/{EVIDENCE_FILE}",
    "verdict": f"{CUSTODIAN_FOLDER}/verdict.json",
    "summary": f"{CUSTODIAN_FOLDER}/SUMMARY.md",
    "utility": f"{CUSTODIAN_FOLDER}/utility.csv",
}


def shipped(run, corpora, metrics, dp_records=()):
    """The filter's record of every generation and the kept rows, as rule release_filter writes them."""
    filtered = release_filter(corpora, metrics, SPANS, CODES, bundle_drop(run.settings, dp_records))
    return filtered, kept_rows(corpora, filtered)


def released(run, corpora, metrics, summaries, dp_records=()):
    """(synthetic.jsonl, README.md) of the corpora, through the release filter."""
    return build_release(run, corpora, *shipped(run, corpora, metrics, dp_records), summaries, dp_records)


def bundle_frames(run, corpora, metrics, summaries, dp_records=()):
    filtered, kept = shipped(run, corpora, metrics, dp_records)
    return {
        **{"corpora": corpora, "filtered": filtered, "kept": kept, "summaries": summaries},
        **{"metrics": metrics, "spans": SPANS},  # the summary's
    }


def released_texts(bundle: str) -> list[str]:
    return [json.loads(line)["text"] for line in bundle.splitlines()]


def test_any_identifier_leaves_out_every_leak_and_counts_what_they_hold():
    run, corpora, metrics, summaries = frames()
    bundle, card = released(run, corpora, metrics, summaries)
    rows = [json.loads(line) for line in bundle.splitlines()]
    assert [row["text"] for row in rows] == [TEXTS[0], TEXTS[5]]
    assert set(rows[0]) == {"text", "fictional_code", "method", "seed"} and rows[1]["seed"] == 2
    assert "2 of 6 generations; 4 left out (`release.drop: any_identifier`" in card
    # left out: 1 (exact) and 2 (a name word of no known class) hold source-specific values, 3 (a common
    # town) and 4 (a value of no document's source) only common ones
    assert "- Left out: 2 hold a source-specific value, 2 only common values." in card
    assert "- Released: 0 hold a source-specific value, 0 only common values." in card
    assert "- exact leak of a value of its code's identifier set: 1" in card
    assert "- partial leak (a word of a real name): 1" in card
    assert "- a real direct or quasi identifier of any document of the corpus: 3" in card


def test_source_specific_keeps_generations_holding_only_common_values():
    run, corpora, metrics, summaries = frames("source_specific")
    bundle, card = released(run, corpora, metrics, summaries)
    assert released_texts(bundle) == [TEXTS[0], TEXTS[3], TEXTS[4], TEXTS[5]]
    assert "4 of 6 generations; 2 left out (`release.drop: source_specific`" in card
    assert "- Left out: 2 hold a source-specific value, 0 only common values." in card
    assert "- Released: 0 hold a source-specific value, 2 only common values." in card


def test_a_name_word_of_a_common_value_is_common_and_a_source_specific_value_drops():
    run, corpora, metrics, summaries = frames("source_specific")
    # generation 1 of seed 1: "Anna Berg" is common now, so its name word "Berg" is too
    metrics.loc[1, "leaked_value_classes"] = ["common"]
    assert released_texts(released(run, corpora, metrics, summaries)[0]) == [
        TEXTS[0],
        TEXTS[1],
        TEXTS[3],
        TEXTS[4],
        TEXTS[5],
    ]
    # the town classed source-specific now: the generation goes
    metrics.loc[3, "leaked_value_classes"] = ["source_specific"]
    assert TEXTS[3] not in released_texts(released(run, corpora, metrics, summaries)[0])


def test_without_dropping_everything_is_released_and_counted():
    run, corpora, metrics, summaries = frames("none")
    bundle, card = released(run, corpora, metrics, summaries)
    assert len(bundle.splitlines()) == 6 and "6 of 6 generations; 0 left out" in card
    assert "- Released: 2 hold a source-specific value, 2 only common values." in card
    assert "by reason" not in card


def test_an_unknown_drop_rule_and_old_metrics_stop():
    with pytest.raises(ValueError, match="release.drop 'leaking' is not one of"):
        BundleSettings("leaking")
    run, corpora, metrics, summaries = frames()
    with pytest.raises(ValueError, match=r"lack \['leaked_identifier_values', 'leaked_value_classes'\]"):
        released(
            run,
            corpora,
            metrics.drop(columns=["leaked_identifier_values", "leaked_value_classes"]),
            summaries,
        )
    with pytest.raises(ValueError, match="no row in its corpus's per-generation metrics"):
        released(run, corpora, metrics.iloc[:5], summaries)


@pytest.mark.parametrize(
    "count, category",
    [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (9999, "1K<n<10K"), (10_000, "10K<n<100K"),
     (250_000, "100K<n<1M"), (1_000_000, "1M<n<10M"), (10**12, "n>1T")],
)  # fmt: skip
def test_size_categories_follow_the_hub(count, category):
    assert size_category(count) == category


def card_header(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


def public_bundle(run: ReleaseRun) -> PublicBundle:
    """What the public card of `run`'s bundle is about: the config's settings, nothing of its evidence."""
    return PublicBundle(**{field.name: getattr(run, field.name) for field in fields(PublicBundle)})


def write_bundle(run, frames_, folder) -> None:
    """The bundle in `folder` as its rules write it: the data file, its public card beside it, then the
    custodian's part."""
    paths = {name: folder / file for name, file in FILES.items()}
    write_data_file(frames_["kept"], paths["bundle"])
    card = public_card(public_bundle(run), paths["bundle"].read_bytes(), [], None, FILES["bundle"])
    (folder / "README.md").write_text(card, encoding="utf-8")
    write_release(run, frames_, [], paths)


def test_the_card_has_the_hub_front_matter_and_the_bundle_loads_as_json_lines(tmp_path):
    run, corpora, metrics, summaries = frames()
    run = replace(run, settings=BundleSettings("any_identifier", "cc-by-4.0", ("en", "nb")))
    folder = tmp_path / "icl_pe"
    write_bundle(run, bundle_frames(run, corpora, metrics, summaries), folder)
    header = card_header((folder / "README.md").read_text(encoding="utf-8"))
    assert header == {
        "license": "cc-by-4.0",
        "language": ["en", "nb"],
        "size_categories": ["n<1K"],
        "task_categories": ["text-generation"],
        "pretty_name": "Synthetic corpus: casenotes, icl_pe, known setting, direct identifiers",
        "tags": ["synthetic", "privacy", "anonymization", "not-for-release"],
        "configs": [
            {"config_name": "default", "data_files": [{"split": "train", "path": "synthetic.jsonl"}]}
        ],
    }
    # the data file the card names, JSON Lines with a text field; the custodian's part in its own folder
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", CUSTODIAN_FOLDER, "synthetic.jsonl"]
    custodian = sorted(p.name for p in (folder / CUSTODIAN_FOLDER).iterdir())
    assert custodian == [EVIDENCE_FILE, "SUMMARY.md", "utility.csv", "verdict.json"]
    # the evidence card names the same data file, from its folder
    evidence = card_header((folder / FILES["card"]).read_text(encoding="utf-8"))
    assert evidence["configs"][0]["data_files"] == [{"split": "train", "path": "../synthetic.jsonl"}]
    texts = pd.read_json(folder / "synthetic.jsonl", lines=True)
    assert texts["text"].tolist() == [TEXTS[0], TEXTS[5]] and texts["seed"].tolist() == [1, 2]


def test_the_card_states_the_verdict_or_that_no_audit_ran():
    run, corpora, metrics, summaries = frames()
    _, card = released(run, corpora, metrics, summaries)
    assert "No audit of the texts this bundle ships was given for `icl_pe`" in card
    verdict = AuditVerdict(
        "FAIL",
        ("leak_excess: FAIL (any identifier >= 0.12 (max 0.05))", "verbatim: PASS (x <= 0.01 (max 0.05))"),
        "the adversary holds the released text and knows the rest of the corpus",
        "results/tables/tab/privacy_audit.csv",
    )
    _, card = released(replace(run, verdict=verdict), corpora, metrics, summaries)
    body = card.split("---\n", 2)[2]
    assert body.index("## Release verdict") < body.index("## Method and settings")
    assert (
        "**FAIL** (the privacy audit, results/tables/tab/privacy_audit.csv). The threat model: the adversary"
        in card
    )
    assert "- leak_excess: FAIL (any identifier >= 0.12 (max 0.05))\n- verbatim: PASS" in card


def test_datasheet_evidence():
    run, corpora, metrics, summaries = frames()
    _, card = released(run, corpora, metrics, summaries)
    header = "| PIPP (% of generations) | ELP (% of private values) | ROUGE-2 |"
    assert f"{header}\n|---|---|---|\n| 15 | 2 | 0.2 |" in card  # means over the seeds
    assert "icl_pe: no formal guarantee; nothing bounds what is revealed of a person" in card
    assert "## Audit" in card and "| 0.41 |" in card
    dp = {"epsilon": 7.99, "delta": 1e-5, "noise_multiplier": 1.1, "privacy_unit": "document", "units": 30}
    dp_run = replace(run, method="dpsgd", units=UnitSizes(30, 1, 3, 6, False))
    _, card = released(dp_run, corpora, metrics, summaries, [dp])
    assert "DP-SGD: epsilon 7.99 at delta 1e-05 per privacy unit (30 privacy units)" in card
    assert "dpsgd: epsilon 7.99 at delta 1e-05 protects one privacy unit (the docs' `unit_id`" in card
    assert "with more than one document: 1, largest: 3 documents" in card


def test_evidence_and_verdict_take_the_methods_row_of_its_run_and_its_review_status(tmp_path):
    run, corpora, metrics, summaries = frames()
    run = replace(run, evidence=())
    audit = pd.DataFrame(
        {
            "dataset": [run.dataset, run.dataset, "other"],
            "setting": [run.setting] * 3,
            "idset": [run.idset] * 3,
            "method": [run.method, "base", run.method],
            "auc_loss": [0.61, 0.5, 0.9],
            "verdict": ["INCONCLUSIVE", None, "PASS"],
            "verdict_reasons": [
                "leak_excess: PASS (a); canaries: INCONCLUSIVE (no evidence)",
                None,
                "x: PASS",
            ],
            "threat_model": ["the adversary holds the released text", None, "t"],
        }
    )
    audit.to_csv(tmp_path / "privacy_audit.csv", index=False)
    comments = pd.DataFrame(
        {"method": [run.method, run.method, "icl"], "verdict": ["leaks", "fine", "leaks"]}
    )
    comments.to_parquet(tmp_path / "comments.parquet")
    tables = evidence_tables(run, [str(tmp_path / "privacy_audit.csv")], [str(tmp_path / "comments.parquet")])
    assert [t.title for t in tables] == [
        "Privacy audit of the run, before the filter (privacy_audit.csv)",
        "Review status (review page verdicts)",
    ]
    assert tables[0].frame["auc_loss"].tolist() == [0.61]  # its method and run only
    assert "verdict" not in tables[0].frame  # the card states it above
    assert dict(zip(tables[1].frame["verdict"], tables[1].frame["generations"])) == {"leaks": 1, "fine": 1}
    assert method_verdict(run, [str(tmp_path / "privacy_audit.csv")]) == AuditVerdict(
        "INCONCLUSIVE",
        ("leak_excess: PASS (a)", "canaries: INCONCLUSIVE (no evidence)"),
        "the adversary holds the released text",
        str(tmp_path / "privacy_audit.csv"),
    )
    assert method_verdict(run, []) is None
    assert method_verdict(replace(run, method="icl"), [str(tmp_path / "privacy_audit.csv")]) is None
    _, card = released(replace(run, evidence=tuple(tables)), corpora, metrics, summaries)
    assert "## Privacy audit of the run, before the filter (privacy_audit.csv)" in card and "| 0.61 |" in card
    [unreviewed] = evidence_tables(run, [], [])
    assert unreviewed.frame["verdict"].tolist() == ["none yet"]


def test_a_private_selection_card_states_what_its_guarantee_covers_and_what_not(tmp_path):
    from plainsight.audit.guarantee import read_guarantee_record
    from plainsight.io import write_json
    from plainsight.report.release_card import selection_notes

    record = {
        "method": "rpsg",
        "epsilon": 4.0,
        "delta": 1.6e-3,
        "privacy_unit": "one training segment, per selection (its seed)",
        "mechanism": "Gaussian noise on each seed's candidate utilities",
        "covers": "which of its m candidates a seed's selection keeps",
        "not_covered": "the candidates: every released text is a rewrite of one private seed",
    }
    write_json(record, tmp_path / "seed1_privacy.json")
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    write_json({"epsilon": 8.0, "delta": 1e-5}, adapter / "training.json")
    assert read_guarantee_record(adapter)["epsilon"] == 8.0
    notes = selection_notes([read_guarantee_record(tmp_path / "seed1_privacy.json")])
    assert notes[0].startswith("rpsg: epsilon 4.00 at delta 0.0016 per one training segment, per selection")
    assert (
        notes[2] == "It does not cover the candidates: every released text is a rewrite of one private seed."
    )
    # a patient of three training notes whose segments fed three seeds: three selections' epsilon
    run = replace(frames()[0], method="rpsg", units=UnitSizes(12, 1, 3, 6, False))
    person, units = person_notes(run, [{**record, "release_epsilon": None, "largest_unit_seeds": 3}])
    assert person.startswith("rpsg: epsilon 4.00 at delta 0.0016 protects one training segment, per")
    assert person.endswith("here one privacy unit fed up to 3 seeds: epsilon 12.00 at delta 0.0048.")
    assert units == (
        "Privacy units (the docs' `unit_id`) of the training split: 12, with more than one document: 1, "
        "largest: 3 documents (most training segments of one unit: 6)."
    )


def test_a_guaranteed_release_is_not_filtered_with_private_data_unless_asked():
    run, corpora, metrics, summaries = frames()
    claim = [
        {
            **{"epsilon": 4.0, "delta": 1e-5, "release_epsilon": 3.97, "mechanism": "votes"},
            **{"method": "aug_pe", "privacy_unit": "document", "covers": "votes", "not_covered": "the rest"},
        }
    ]
    bundle, card = released(run, corpora, metrics, summaries, claim)
    assert len(released_texts(bundle)) == 6 and "`release.drop: none`" in card
    assert "does not cover this bundle" not in card
    filtered = replace(run, settings=BundleSettings("any_identifier", drop_guaranteed="any_identifier"))
    bundle, card = released(filtered, corpora, metrics, summaries, claim)
    assert len(released_texts(bundle)) == 2 and "The formal guarantee does not cover this bundle" in card
    # a claim that bounds only a step of the method (RPSG's selection) leaves the usual filter on
    step_only = [{**claim[0], "release_epsilon": None}]
    assert len(released_texts(released(run, corpora, metrics, summaries, step_only)[0])) == 2


FAILED = AuditVerdict(
    "FAIL",
    ("leak_excess: FAIL (any-identifier leak excess >= 0.12 (max 0.05))",),
    "the adversary holds the released text and knows the rest of the corpus",
    "results/tables/tab/privacy_audit.csv",
    "",
    "1: FAIL",
)


def test_a_card_beside_a_data_file_of_other_rows_stops(tmp_path):
    run, corpora, metrics, summaries = frames()
    frames_ = bundle_frames(run, corpora, metrics, summaries)
    paths = {name: tmp_path / file for name, file in FILES.items()}
    write_data_file(frames_["corpora"], paths["bundle"])  # every generation, the leaking ones too
    assert len(frames_["kept"]) < len(frames_["corpora"])
    with pytest.raises(ValueError, match="rebuild rule release_data"):
        write_release(run, frames_, [], paths)
    assert not paths["card"].exists()


def audited(run: ReleaseRun, frames_: dict) -> ReleaseRun:
    """`run` failing, as its audit judged the rows the bundle ships (their data file's SHA-256)."""
    return replace(
        run, verdict=FAILED, config_fingerprint="abc123", audit={"data_sha256": data_sha256(frames_["kept"])}
    )


def written(run: ReleaseRun, frames_: dict, folder) -> tuple[str, dict]:
    """The evidence card and verdict.json of the bundle written to `folder`, beside its data file."""
    write_bundle(run, frames_, folder)
    card = (folder / FILES["card"]).read_text(encoding="utf-8")
    return card, json.loads((folder / FILES["verdict"]).read_text(encoding="utf-8"))


def test_a_bundle_that_did_not_pass_says_not_for_release_unless_its_texts_are_signed_off(tmp_path):
    run, corpora, metrics, summaries = frames()
    frames_ = bundle_frames(run, corpora, metrics, summaries)
    failing = audited(run, frames_)
    card, record = written(failing, frames_, tmp_path / "f")
    body = card.split("---\n", 2)[2].lstrip()
    assert body.startswith(f"# {NOT_FOR_RELEASE}: synthetic corpus: casenotes, icl_pe")
    assert "The privacy audit's verdict on the texts it ships is FAIL, not PASS, and nobody has" in body
    assert record["verdict"] == "FAIL" and record["release"] == NOT_FOR_RELEASE
    assert record["criteria"] == list(FAILED.reasons) and record["config_fingerprint"] == "abc123"
    assert record["sign_off"] is None and record["seed_verdicts"] == "1: FAIL"
    assert record["sign_offs_for_other_texts"] == []

    sha = data_sha256(frames_["kept"])
    accepted = SignOff("icl_pe", "J. Doe, data custodian", "only for the internal pilot", "2026-11-20", sha)
    # a sign-off of another method leaves this one stamped, and is not this bundle's to mention
    other_method = replace(accepted, method="icl")
    card, record = written(replace(failing, sign_offs=(other_method,)), frames_, tmp_path / "o")
    assert record["release"] == NOT_FOR_RELEASE and record["sign_off"] is None
    assert "nobody has signed this bundle off" in card and record["sign_offs_for_other_texts"] == []

    card, record = written(replace(failing, sign_offs=(other_method, accepted)), frames_, tmp_path / "s")
    assert NOT_FOR_RELEASE not in card
    assert (
        "**Signed off** by J. Doe, data custodian on 2026-11-20 for the texts of data SHA-256 "
        f"{sha}, although the verdict is FAIL: only for the internal pilot" in card
    )
    assert record["release"] == "releasable" and record["data_sha256"] == sha
    assert record["sign_off"] == {
        "method": "icl_pe",
        "by": "J. Doe, data custodian",
        "reason": "only for the internal pilot",
        "date": "2026-11-20",
        "data_sha256": sha,
    }
    summary = (tmp_path / "s" / FILES["summary"]).read_text(encoding="utf-8")
    assert NOT_FOR_RELEASE not in summary and f"on 2026-11-20 for the texts of data SHA-256 {sha}" in summary

    # the texts regenerated (another generation written): the sign-off is for other texts, stamped again
    regenerated = corpora.assign(text=corpora["text"].replace({TEXTS[0]: "A new clean note."}))
    frames_ = bundle_frames(run, regenerated, metrics, summaries)
    assert data_sha256(frames_["kept"]) != sha
    card, record = written(replace(audited(run, frames_), sign_offs=(accepted,)), frames_, tmp_path / "r")
    assert record["release"] == NOT_FOR_RELEASE and record["sign_off"] is None
    assert record["sign_offs_for_other_texts"] == [accepted.record()]
    assert (
        "The privacy audit's verdict on the texts it ships is FAIL, not PASS, and the sign-off of this "
        f"method (by J. Doe, data custodian on 2026-11-20 for data SHA-256 {sha}) is for other texts" in card
    )
    summary = (tmp_path / "r" / FILES["summary"]).read_text(encoding="utf-8")
    assert summary.startswith(f"# {NOT_FOR_RELEASE}") and "is for other texts" in summary

    passed = replace(run, verdict=replace(FAILED, verdict="PASS", kind="empirical evidence only"))
    _, card = released(passed, corpora, metrics, summaries)
    assert NOT_FOR_RELEASE not in card and "**PASS** (empirical evidence only)" in card


GOOD_SIGN_OFF = {
    "method": "icl_pe",
    "by": "J. Doe",
    "reason": "pilot",
    "date": "2026-11-20",
    "data_sha256": "a" * 64,
}


@pytest.mark.parametrize(
    "entries, message",
    [
        ({"by": "J. Doe"}, "release.sign_off: a list of sign-offs, one per method and bundle"),
        ([GOOD_SIGN_OFF, "J. Doe"], "release.sign_off[1]: a sign-off is a mapping of method, by, reason"),
        ([{**GOOD_SIGN_OFF, "method": None}], "release.sign_off[0].method: missing"),
        ([{k: v for k, v in GOOD_SIGN_OFF.items() if k != "by"}], "release.sign_off[0].by: missing"),
        ([{**GOOD_SIGN_OFF, "date": " "}], "release.sign_off[0].date: missing"),
        ([{**GOOD_SIGN_OFF, "date": "20.11.2026"}], "release.sign_off[0].date: '20.11.2026' is not a date"),
        ([{**GOOD_SIGN_OFF, "data_sha256": "a" * 63}], "release.sign_off[0].data_sha256: 'aaaa"),
        ([{**GOOD_SIGN_OFF, "data_sha256": "A" * 64}], "release.sign_off[0].data_sha256: 'AAAA"),
        ([{**GOOD_SIGN_OFF, "signed": True}], "release.sign_off[0]: unknown key(s) signed"),
    ],
)
def test_a_malformed_sign_off_stops_with_one_line_naming_its_entry_and_key(entries, message):
    with pytest.raises(ValueError) as error:
        read_sign_offs(entries)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_sign_offs_read_a_yaml_date_and_pick_the_latest_of_a_bundles_texts():
    entries = yaml.safe_load(
        f"- {{method: icl_pe, by: A, reason: r, date: 2026-11-20, data_sha256: {'a' * 64}}}\n"
        f"- {{method: icl_pe, by: B, reason: r, date: '2026-11-21', data_sha256: {'a' * 64}}}\n"
        f"- {{method: icl_pe, by: C, reason: r, date: 2026-11-22, data_sha256: {'b' * 64}}}\n"
    )
    sign_offs = read_sign_offs(entries)
    assert [s.date for s in sign_offs] == ["2026-11-20", "2026-11-21", "2026-11-22"]
    chosen = bundle_sign_off(sign_offs, "icl_pe", "a" * 64)
    assert chosen.accepted.by == "B" and [s.by for s in chosen.other_texts] == ["C"]
    assert bundle_sign_off(sign_offs, "icl", "a" * 64) == BundleSignOff(None, ())
    assert bundle_sign_off(sign_offs, "icl_pe", None).accepted is None  # no audit: nothing to accept
    assert read_sign_offs(None) == ()


def test_the_sign_off_command_prints_the_entry_for_the_bundles_texts(tmp_path, capsys):
    custodian = tmp_path / CUSTODIAN_FOLDER
    custodian.mkdir()
    (custodian / "verdict.json").write_text(
        json.dumps({"method": "icl_pe", "data_sha256": "c" * 64, "verdict": "FAIL"}), encoding="utf-8"
    )
    sign_off_main([str(tmp_path), "--by", "J. Doe, custodian", "--reason", "pilot", "--date", "2026-11-20"])
    printed = capsys.readouterr().out
    assert printed.startswith("# add under release.sign_off in your config overlay")
    assert read_sign_offs(yaml.safe_load(printed)) == (
        SignOff("icl_pe", "J. Doe, custodian", "pilot", "2026-11-20", "c" * 64),
    )
    (custodian / "verdict.json").write_text(json.dumps({"method": "icl_pe"}), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{custodian / 'verdict.json'}.data_sha256: missing")):
        sign_off_main([str(tmp_path), "--by", "J. Doe", "--reason", "pilot"])


UTILITY = pd.DataFrame(
    {
        "dataset": ["casenotes"] * 5 + ["other"],
        "setting": "known",
        "idset": "direct",
        "method": ["real", "chance", "real_sample", "negative_control", "icl_pe", "icl_pe"],
        "macro_f1": [0.8, 0.2, 0.6, 0.3, 0.5, 0.9],
        "macro_f1_low": [None, None, None, 0.2, 0.4, 0.8],
        "macro_f1_high": [None, None, None, 0.4, 0.6, 1.0],
        "distinct1": [None, None, None, 0.6, 0.7, 0.7],
    }
)


def test_the_card_gives_macro_f1_beside_chance_zero_learning_and_the_real_rows_and_the_full_table(tmp_path):
    run, corpora, metrics, summaries = frames()
    summaries = summaries.assign(documents=[90.0, 80.0, 1.0])  # the averaged rows' mean: 85%
    run = replace(run, utility=utility_rows(UTILITY, run.keys, "icl_pe"))
    frames_ = bundle_frames(run, corpora, metrics, summaries) | {"utility": UTILITY}
    card, _ = written(run, frames_, tmp_path)
    utility = card.split("## Utility\n\n")[1].split("\n## ")[0]
    assert utility.splitlines() == [
        "Documents: 85.0% of the generations read as documents (mean over seeds).",
        "",
        "Train on the synthetic corpus, test on the real test split (means over seeds, 95% interval).",
        "",
        "| Corpus | Downstream macro-F1 |",
        "|---|---|",
        "| This corpus | 0.500 [0.400, 0.600] |",
        "| Chance (the best rule that ignores the text) | 0.200 |",
        "| Zero learning (the base model from fictional codes alone) | 0.300 |",
        "| Real training data (ceiling) | 0.800 |",
        "| Real training data, as many texts as a corpus | 0.600 |",
        "",
        "Downstream macro-F1: 50% of the way from chance to the real-data ceiling, 0.200 above the "
        "zero-learning corpus (0.300).",
        "",
        "Every utility measure of the run's corpora: `utility.csv`, beside this card.",
    ]
    assert "distinct1" not in card and "nan" not in card
    full = pd.read_csv(tmp_path / FILES["utility"])
    # its run's rows only
    assert full["method"].tolist() == ["real", "chance", "real_sample", "negative_control", "icl_pe"]
    assert full.loc[4, ["macro_f1", "distinct1"]].tolist() == [0.5, 0.7]
    # a run whose utility measures lack the zero-learning corpus says so
    lacking = UTILITY[UTILITY["method"] != "negative_control"]
    without = replace(run, utility=utility_rows(lacking, run.keys, "icl_pe"))
    card, _ = written(without, frames_, tmp_path / "without")
    assert "| Zero learning (the base model from fictional codes alone) | not measured |" in card.splitlines()
    # a trained method without a utility row: said
    trained = replace(frames()[0], method="ft")
    _, card = released(trained, corpora.assign(method="ft"), metrics, frames()[3])
    utility = card.split("## Utility\n\n")[1].split("\n## ")[0]
    assert utility.splitlines() == ["Not measured: the run's utility measures have no row for this method."]


def test_verdict_json_states_the_policy_the_guarantee_and_a_kind_only_for_a_pass():
    run = replace(frames()[0], verdict=FAILED)
    empirical = {"thresholds": {**asdict(Gate(criteria=("leak_excess",))), "criteria": ["leak_excess"]}}
    record = verdict_record(replace(run, audit=empirical))
    assert record["verdict_kind"] is None and record["guarantee"] is None
    assert record["policy"] == {
        "requires_formal_guarantee": False,
        "pass_rests_on": "empirical evidence only, no formal guarantee",
        "statement": "empirical evidence accepted: release.gate.criteria ask for no formal guarantee",
    }
    # the guarantee is the claim the bundle's audit judged: every mechanism behind it, every seed's,
    # composed (its row's dp_ columns), not one seed's record
    formal = {"thresholds": {**asdict(Gate()), "criteria": list(Gate().criteria)}}
    claim = {"dp_epsilon": 0.786, "dp_delta": 1e-5, "dp_unit": "unit", "dp_units": 143.0}
    passed = replace(
        run, audit={**formal, "row": claim}, verdict=replace(FAILED, verdict="PASS", kind=FORMAL)
    )
    record = verdict_record(passed)
    assert record["verdict_kind"] == FORMAL and record["policy"]["requires_formal_guarantee"] is True
    assert record["guarantee"] == {"epsilon": 0.786, "delta": 1e-5, "privacy_unit": "unit", "units": 143}
    assert isinstance(record["guarantee"]["units"], int)
    # none judged (no claim, or a filter that read private data after the mechanism): none stated
    without = replace(passed, audit={**formal, "row": {**claim, "dp_epsilon": None}})
    assert verdict_record(without)["guarantee"] is None
    assert verdict_record(run)["policy"] is None and verdict_record(run)["guarantee"] is None


def test_the_public_card_says_not_for_release_until_a_sign_off_accepts_its_data_files_texts(tmp_path):
    run, corpora, metrics, summaries = frames()
    frames_ = bundle_frames(run, corpora, metrics, summaries)
    failing = audited(run, frames_)
    write_bundle(failing, frames_, tmp_path / "f")
    data = (tmp_path / "f" / "synthetic.jsonl").read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    assert sha == data_sha256(frames_["kept"])  # the file's own hash is the one its audit records
    card = (tmp_path / "f" / "README.md").read_text(encoding="utf-8")
    body = card.split("---\n", 2)[2].lstrip()
    assert body.startswith(f"# {NOT_FOR_RELEASE}: synthetic corpus: casenotes, icl_pe")
    assert "not-for-release" in card_header(card)["tags"]
    assert f"no custodian has signed these texts off (`release.sign_off`, data SHA-256 {sha})" in body
    assert "- Seeds: 1, 2; 2 generations shipped." in body and "No formal guarantee" in body
    # nothing of the evidence: not the verdict, not a count read from the private corpus
    assert not [word for word in ("FAIL", "PASS", "source-specific", "left out", "PIPP") if word in body]

    accepted = SignOff("icl_pe", "J. Doe, data custodian", "the audit passed", "2026-11-20", sha)
    other = replace(accepted, data_sha256="d" * 64)
    stamped = public_card(
        public_bundle(replace(failing, sign_offs=(other,))), data, [], None, "synthetic.jsonl"
    )
    assert NOT_FOR_RELEASE in stamped and "is for other texts" in stamped
    released_card = public_card(
        public_bundle(replace(failing, sign_offs=(other, accepted))), data, [], None, "synthetic.jsonl"
    )
    assert NOT_FOR_RELEASE not in released_card and "not-for-release" not in released_card
    assert (
        f"**Released** by J. Doe, data custodian on 2026-11-20 for the texts of data SHA-256 {sha}: "
        "the audit passed" in released_card
    )
    # the same inputs, the same card
    assert released_card == public_card(
        public_bundle(replace(failing, sign_offs=(other, accepted))), data, [], None, "synthetic.jsonl"
    )


def test_the_public_card_states_the_guarantee_from_the_mechanisms_records():
    run, *_ = frames()
    run = replace(run, method="dpsgd", generation={"max_new_tokens": 128, "temperature": 0.7, "top_p": 0.9})
    record = {"epsilon": 1.0, "delta": 1e-5, "noise_multiplier": 1.2, "privacy_unit": "document", "units": 64}
    accounting = {
        "mechanisms": [
            {
                "name": "dp_sgd",
                "description": "DP-SGD training",
                "record": "models/dpsgd/seed1",
                "epsilon": 1.0,
                "delta": 1e-5,
                "privacy_unit": "document",
            }
        ],
        "composed": None,
    }
    line = b'{"text": "A note.", "fictional_code": "PERSON: 1", "method": "dpsgd", "seed": 1}\n'
    card = public_card(public_bundle(run), line, [record], accounting, "synthetic.jsonl")
    assert "- Generation: max_new_tokens 128, temperature 0.7, top_p 0.9." in card
    assert "DP-SGD: epsilon 1.00 at delta 1e-05 per" in card and "- dp_sgd: DP-SGD training;" in card
    assert "No formal guarantee" not in card and "- Seeds: 1; 1 generations shipped." in card
