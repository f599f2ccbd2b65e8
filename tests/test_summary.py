"""The one-page release summary: the verdict in one sentence, the gate's criteria and the samples that would
settle them, real values by entity type and class, utility against chance and the ceiling, the review
share, the stamp, and the same page as escaped HTML (hand-built verdicts, metrics and spans)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from plainsight.audit.criteria import Gate
from plainsight.audit.gate import seeds_verdict, verdict
from plainsight.audit.outcomes import join_reasons, split_reasons
from plainsight.evaluation.downstream import NOT_MEASURED, not_measured_scores
from plainsight.report.audit_verdict import AuditVerdict, row_verdict
from plainsight.report.release import bundle_summary
from plainsight.report.release_run import KNOWN_LIMITS, BundleSettings, ReleaseRun
from plainsight.report.sign_off import UNSIGNED, BundleSignOff, SignOff
from plainsight.report.summary import (
    NOT_FOR_RELEASE,
    ReleaseSummary,
    SummaryFrames,
    build_summary,
    criteria,
    leak_counts,
)
from plainsight.report.summary_page import overview
from plainsight.report.summary_render import summary_html, summary_markdown
from plainsight.report.utility_table import markdown_utility_table, utility_table

RUN = {"dataset": "tab", "setting": "known", "idset": "direct"}
THREAT = "the adversary holds the released text and knows the rest of the corpus"
# 24 generations, no leak seen: the near leak's upper bound 1 - 0.025^(1/24) = 0.142 straddles 0.05, and
# passing needs 1 - 0.025^(1/n) <= 0.05, n >= 72 (`evidence_plan`); the any-identifier leak passes
UNDECIDED_ROW = {
    "leak_design": "paired",
    "leak_near_excess": 0.0,
    "leak_near_excess_low": -0.10,
    "leak_near_excess_high": 0.14,
    "leak_near_control_rate": 0.0,
    "leak_near_members": 24,
    "leak_any_identifier_excess": 0.0,
    "leak_any_identifier_excess_low": -0.02,
    "leak_any_identifier_excess_high": 0.03,
    "leak_code_part_excess": 0.0,
    "leak_code_part_excess_low": -0.02,
    "leak_code_part_excess_high": 0.03,
}
FAILING_ROW = {**UNDECIDED_ROW, "leak_near_excess_low": 0.12, "leak_near_excess_high": 0.30}
GATE = Gate(criteria=("leak_excess", "epsilon"))
EMPIRICAL_POLICY = Gate(criteria=("leak_excess", "epsilon"), policy="empirical_evidence")

SPANS = pd.DataFrame(
    {
        "text": ["Anna  Berg", "Tromso", "Tromso", "Tromso", "SC-10442", "a public word"],
        # Tromso: two LOC spans against one ORG, so LOC; NO_MASK spans are not identifiers
        "entity_type": ["PERSON", "LOC", "LOC", "ORG", "CODE", "MISC"],
        "identifier_type": ["DIRECT", "QUASI", "QUASI", "QUASI", "DIRECT", "NO_MASK"],
    }
)
# seed 1: generation 0 holds Anna Berg (source-specific) and Tromso (common); 1 holds nothing; seed 2:
# generation 0 holds "anna berg" (the same value, common to its source) and the code (source-specific)
METRICS = pd.DataFrame(
    {
        "seed": [1, 1, 2],
        "generation_id": [0, 1, 0],
        "leaked_identifier_values": [["Anna Berg", "Tromso"], [], ["anna berg", "SC-10442"]],
        "leaked_value_classes": [["source_specific", "common"], [], ["common", "source_specific"]],
    }
)
UTILITY = pd.DataFrame(
    {
        **RUN,
        "method": ["real", "chance", "real_sample", "negative_control", "icl", "icl"],
        "macro_f1": [0.8, 0.2, 0.6, 0.35, 0.5, 0.1],
        "macro_f1_low": [0.7, None, 0.5, 0.3, 0.4, 0.0],
        "macro_f1_high": [0.9, None, 0.7, 0.4, 0.6, 0.2],
        "accuracy": [0.5, 0.1, 0.4, 0.4, 0.3, 0.0],
    }
).assign(setting=["known"] * 5 + ["unknown"])  # the last row is another run's
COMMENTS = pd.DataFrame(
    {
        "method": ["icl", "icl", "icl", "ft"],
        "seed": [1, 2, 3, 1],  # seed 3 is not in the summary's corpora
        "generation": [0, 0, 0, 0],
        "verdict": ["leaks", "fine", "leaks", "leaks"],
    }
)


def audit(row_of_seed: dict[int, dict], gate: Gate = GATE) -> AuditVerdict:
    """The verdict of rows as the audit table states it and the card reads it back."""
    judged = seeds_verdict(list(row_of_seed.items()), gate, trained=False) if len(row_of_seed) > 1 else None
    record = judged or verdict(next(iter(row_of_seed.values())), gate, trained=False)
    return row_verdict(record, "results/tables/tab/privacy_audit.csv")


def summary(
    verdict_: AuditVerdict | None,
    sign_off: SignOff | None = None,
    utility: pd.DataFrame | None = None,
    comments: pd.DataFrame | None = None,
    other_sign_offs: tuple[SignOff, ...] = (),
) -> ReleaseSummary:
    return build_summary(
        "tab, icl, known setting, direct identifiers",
        "icl",
        verdict_,
        BundleSignOff(sign_off, other_sign_offs),
        SummaryFrames(METRICS, SPANS, utility, comments),
        RUN,
        KNOWN_LIMITS[:1],
    )


def lines(text: str) -> list[str]:
    return text.splitlines()


def test_an_inconclusive_verdict_names_what_would_settle_it_from_the_gates_own_sample():
    page = summary_markdown(summary(audit({1: UNDECIDED_ROW}, EMPIRICAL_POLICY)))
    assert (
        lines(page)[0] == f"# {NOT_FOR_RELEASE}: release summary: tab, icl, known setting, direct identifiers"
    )
    assert (
        f"**INCONCLUSIVE** under the threat model that {THREAT}: no criterion fails, but the evidence leaves "
        "leak_excess undecided; a PASS here would rest on empirical evidence only, no formal guarantee."
        in lines(page)
    )
    assert "| leak_excess | INCONCLUSIVE | near leak excess in [-0.10, 0.14] straddles 0.05 |" in lines(page)
    settle = page.split("## What would settle it\n\n")[1].split("\n\n")[0]
    assert lines(settle) == [
        "- leak_excess (near leak excess in [-0.10, 0.14] straddles 0.05): needs >= 72 generations to PASS "
        "with probability 0.8 at excess 0.00 and control rate 0.00, this run has 24",
    ]
    assert "From `results/tables/tab/privacy_audit.csv`." in lines(page)


def test_a_method_without_a_formal_guarantee_is_not_releasable_by_policy_with_its_evidence_beside_it():
    page = summary_markdown(summary(audit({1: UNDECIDED_ROW})))
    assert (
        f"**NOT RELEASABLE BY POLICY** under the threat model that {THREAT}: the gate's policy requires a "
        "formal guarantee that covers the release, and no sample can stand in for one: no formal guarantee: "
        "only a differentially private release can pass (cannot be decided by a larger sample: needs a "
        "formal guarantee of epsilon <= 1 per 'unit' with delta x units <= 0.1, or a policy that accepts "
        "empirical evidence, release.gate.policy: empirical_evidence); empirical evidence: INCONCLUSIVE."
        in lines(page)
    )
    assert (
        f"**{NOT_FOR_RELEASE}.** The verdict is NOT RELEASABLE BY POLICY, not PASS, and nobody has signed it "
        "off (`release.sign_off`: who accepts it, and why)." in lines(page)
    )
    assert (
        "| epsilon | INCONCLUSIVE | no formal guarantee: only a differentially private release can pass |"
        in (lines(page))
    )
    assert "## What would settle it" not in page  # no sample: a formal guarantee or another policy


def test_a_failing_verdict_is_stamped_unless_signed_off_and_a_pass_is_not():
    failing = audit({1: FAILING_ROW}, Gate(criteria=("leak_excess",)))
    page = summary_markdown(summary(failing))
    assert (
        f"**FAIL** under the threat model that {THREAT}: it fails leak_excess; a PASS here would rest on "
        "empirical evidence only, no formal guarantee." in lines(page)
    )
    assert (
        f"**{NOT_FOR_RELEASE}.** The verdict is FAIL, not PASS, and nobody has signed it off "
        "(`release.sign_off`: who accepts it, and why)." in lines(page)
    )
    assert "## What would settle it" not in page  # a FAIL stands whatever more evidence says
    sign_off = SignOff("icl", "J. Doe, data custodian", "internal pilot only", "2026-11-20", "ab" * 32)
    signed = summary_markdown(summary(failing, sign_off))
    assert NOT_FOR_RELEASE not in signed
    assert lines(signed)[0] == "# Release summary: tab, icl, known setting, direct identifiers"
    assert (
        "**Signed off** by J. Doe, data custodian on 2026-11-20 for the texts of data SHA-256 "
        f"{'ab' * 32}, although the verdict is FAIL: internal pilot only" in lines(signed)
    )
    # the method's sign-off of other texts leaves the stamp, and says why
    regenerated = summary_markdown(summary(failing, other_sign_offs=(sign_off,)))
    assert (
        f"**{NOT_FOR_RELEASE}.** The verdict is FAIL, not PASS, and the sign-off of this method (by J. Doe, "
        f"data custodian on 2026-11-20 for data SHA-256 {'ab' * 32}) is for other texts: these were "
        "generated or filtered since, and need a sign-off of their own." in lines(regenerated)
    )
    passed = summary(replace(failing, verdict="PASS", kind="empirical evidence only"))
    assert not passed.stamped and passed.release == "releasable"
    assert NOT_FOR_RELEASE not in summary_markdown(passed) and "Signed off" not in summary_markdown(passed)
    # no audit of the run: no verdict, stamped all the same
    unaudited = summary_markdown(summary(None))
    assert f"**{NOT_FOR_RELEASE}.** There is no verdict, not PASS, and nobody has signed it off" in unaudited
    assert "No criterion was judged." in lines(unaudited)


def test_several_seeds_name_each_seeds_criteria():
    twice = audit({1: FAILING_ROW, 2: FAILING_ROW}, Gate(criteria=("leak_excess",)))
    assert [(c.seed, c.name, c.outcome) for c in criteria(twice)] == [
        (1, "leak_excess", "FAIL"),
        (2, "leak_excess", "FAIL"),
    ]
    page = lines(summary_markdown(summary(twice)))
    assert "| Seed | Criterion | Outcome | Evidence against its maximum |" in page
    assert "| 2 | leak_excess | FAIL | near leak excess >= 0.12 (max 0.05) |" in page
    assert "Per seed: 1: FAIL, 2: FAIL." in page


def test_real_values_are_counted_by_entity_type_and_class_in_generations_and_distinct_values():
    page = summary_markdown(summary(None))
    table = page.split("| Entity type |")[1].split("\n\n")[0]
    assert lines(table)[2:] == [
        "| PERSON | 1 | 1 | 1 | 1 |",  # Anna Berg, however written: source-specific once, common once
        "| CODE | 1 | 0 | 1 | 0 |",
        "| LOC | 0 | 1 | 0 | 1 |",
        "| All types | 2 | 2 | 2 | 2 |",
    ]
    assert lines(table)[0] == (
        " Generations holding a source-specific value | Generations holding a common value "
        "| Distinct source-specific values | Distinct common values |"
    )
    assert "over 3 generations (seeds 1, 2), before any is left out." in page
    clean = build_summary("t", "icl", None, UNSIGNED, SummaryFrames(METRICS.iloc[[1]], SPANS), RUN, ())
    assert "over 1 generation (seed 1), before any is left out." in summary_markdown(clean)
    assert "No generation holds one." in lines(summary_markdown(clean))
    # metrics without classes say so; a class the metrics do not know stops
    assert leak_counts(METRICS.drop(columns="leaked_value_classes"), SPANS) is None
    old = build_summary("t", "icl", None, UNSIGNED, SummaryFrames(METRICS[["seed"]], SPANS), RUN, ())
    assert "The per-generation metrics do not class the values they found." in lines(summary_markdown(old))
    with pytest.raises(ValueError, match="'rare'"):
        leak_counts(
            METRICS.assign(leaked_value_classes=[["rare", "common"], [], ["common", "common"]]), SPANS
        )


def test_utility_stands_beside_chance_zero_learning_and_the_ceiling_or_is_said_to_be_missing():
    page = summary_markdown(summary(None, utility=UTILITY))
    assert lines(page.split("## Utility")[1])[4] == (
        "| Measure (score, 0 to 1) | This corpus | Chance (the best rule that ignores the text) | "
        "Zero learning (the base model from fictional codes alone) | Real training data (ceiling) | "
        "Real training data, as many texts as a corpus |"
    )
    assert "| Downstream macro-F1 | 0.500 [0.400, 0.600] | 0.200 | 0.350 | 0.800 | 0.600 |" in lines(page)
    assert "| Accuracy | 0.300 | 0.100 | 0.400 | 0.500 | 0.400 |" in lines(page)
    # (0.5 - 0.2) / (0.8 - 0.2), 0.5 - 0.35; (0.3 - 0.1) / (0.5 - 0.1), 0.4 - 0.3
    assert (
        "Downstream macro-F1: 50% of the way from chance to the real-data ceiling, 0.150 above the "
        "zero-learning corpus (0.350); Accuracy: 50% of the way from chance to the real-data ceiling, 0.100 "
        "below the zero-learning corpus (0.400)." in lines(page)
    )
    below = summary_markdown(summary(None, utility=UTILITY.assign(macro_f1=[0.8, 0.2, 0.6, 0.35, 0.1, 0.1])))
    assert (
        "Downstream macro-F1: at or below chance, the corpus taught the classifier nothing about the labels, "
        "0.250 below the zero-learning corpus (0.350)" in below
    )
    # a run whose utility measures lack the zero-learning corpus says so
    without = summary_markdown(summary(None, utility=UTILITY[UTILITY["method"] != "negative_control"]))
    assert "| Downstream macro-F1 | 0.500 [0.400, 0.600] | 0.200 | not measured | 0.800 | 0.600 |" in lines(
        without
    )
    assert (
        "Downstream macro-F1: 50% of the way from chance to the real-data ceiling, the zero-learning corpus "
        "not measured;" in without
    )
    missing = "Not measured: the run's utility table has no row for this method (`utility.runs`)."
    assert missing in lines(summary_markdown(summary(None)))
    assert missing in lines(summary_markdown(summary(None, utility=UTILITY[UTILITY["method"] != "icl"])))


def test_the_review_share_counts_the_summarys_corpora_only():
    page = summary_markdown(summary(None, comments=COMMENTS))
    assert (
        "2 of 3 generations (66.7%) reviewed on the review page; their verdicts: fine 1, leaks 1."
        in lines(page)
    )
    unreviewed = lines(summary_markdown(summary(None)))
    assert "None of the 3 generations reviewed on the review page yet." in unreviewed


def test_the_html_escapes_every_text_and_the_markdown_keeps_its_tables():
    hostile = AuditVerdict(
        "FAIL",
        ("leak_excess: FAIL (<script>alert(1)</script>|excess >= 0.12 (max 0.05))",),
        THREAT,
        "results/tables/tab/privacy_audit.csv",
    )
    signed = summary(
        hostile, SignOff("icl", "<b>J. Doe</b>", "a <script>x</script> pilot", "2026-11-20", "0" * 64)
    )
    html = summary_html(signed, top_level=3)
    assert "<script>" not in html and "<b>" not in html
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;|excess &gt;= 0.12 (max 0.05)</td>" in html
    assert (
        f"by &lt;b&gt;J. Doe&lt;/b&gt; on 2026-11-20 for the texts of data SHA-256 {'0' * 64}, although the "
        "verdict is FAIL: a &lt;script&gt;x&lt;/script&gt; pilot" in html
    )
    assert html.startswith("<h3>Release summary: tab, icl")
    stamped = summary_html(summary(hostile))
    assert '<p class="stamp"><strong>NOT FOR RELEASE.</strong> The verdict is FAIL, not PASS' in stamped
    assert (
        "| leak_excess | FAIL | <script>alert(1)</script>\\|excess >= 0.12 (max 0.05) |"
        in summary_markdown(signed)
    )


def test_a_bundles_summary_reads_the_cards_verdict_and_says_what_it_ships():
    run = ReleaseRun("tab", "known", "direct", "icl", "smollm2-135m", {}, BundleSettings("any_identifier"))
    run = replace(run, verdict=audit({1: FAILING_ROW}, Gate(criteria=("leak_excess",))))
    frames = {"metrics": METRICS, "spans": SPANS, "kept": METRICS.iloc[[1]], "comments": COMMENTS}
    paths = {"card": "out/custodian/EVIDENCE.md", "verdict": "out/custodian/verdict.json"}
    page = summary_markdown(bundle_summary(run, frames, [], paths))
    assert (
        lines(page)[0] == f"# {NOT_FOR_RELEASE}: release summary: tab, icl, known setting, direct identifiers"
    )
    assert (
        "The bundle ships 1 of these 3 (`release.drop: any_identifier`): 0 of them hold a source-specific "
        "value, 0 a common one." in lines(page)
    )
    assert (
        "Details: [the evidence card, with all the evidence](EVIDENCE.md); "
        "[the verdict for machines](verdict.json)." in lines(page)
    )
    assert "Not measured: the run's utility table has no row for this method (`utility.runs`)." in lines(page)
    assert f"- {KNOWN_LIMITS[0]}" in lines(page)


def test_a_run_without_a_downstream_task_says_why_in_the_summary_and_the_utility_table():
    reason = "no labels: no document has a `label`"
    measures = not_measured_scores({("icl", 1): METRICS, ("icl", 2): METRICS}, reason).assign(**RUN)
    table = utility_table(measures, {"icl": "ICL"})
    assert table["method"].tolist() == ["real", "icl"] and set(table[NOT_MEASURED]) == {reason}
    assert "Downstream task not measured: no labels: no document has a `label`." in lines(
        markdown_utility_table(table, [])
    )
    unmeasured = summary(None, utility=table)
    assert "Downstream task not measured: no labels: no document has a `label`." in lines(
        summary_markdown(unmeasured)
    )
    assert overview(unmeasured)["utility"] == f"not measured: {reason}"
    # a measured run's table has no such column, and its summary its scores
    assert summary(None, utility=UTILITY).downstream_not_measured == ""


def test_reasons_that_hold_a_semicolon_split_where_the_gate_joined_them():
    """An INCONCLUSIVE reason names what would decide it, and that may hold "; " itself: each criterion
    stays one row of the summary, with its outcome."""
    reasons = [
        "leak_excess: FAIL (any-identifier leak excess >= 0.24 (max 0.05))",
        "text_membership: INCONCLUSIVE (text membership AUC (cosine) in [0.53, 0.64] straddles 0.60 (cannot "
        "be decided on this corpus: needs >= 7,440 members, it has 213; a larger corpus can decide it, or a "
        "formal guarantee))",
        "unit_linkage: BY CONSTRUCTION (the release filter dropped what its detectors find)",
        "epsilon: PASS (formal epsilon 0.79 per unit (max 1.00))",
    ]
    assert split_reasons(join_reasons(reasons)) == reasons
    verdict = row_verdict({"verdict": "FAIL", "verdict_reasons": join_reasons(reasons)})
    assert verdict.reasons == tuple(reasons)
    assert [(c.name, c.outcome) for c in criteria(verdict)] == [
        ("leak_excess", "FAIL"),
        ("text_membership", "INCONCLUSIVE"),
        ("unit_linkage", "BY CONSTRUCTION"),
        ("epsilon", "PASS"),
    ]
