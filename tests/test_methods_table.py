"""Every method side by side: the table's cells from hand-made records, and the files it reads."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from plainsight.audit.criteria import Gate
from plainsight.audit.gate import POLICY
from plainsight.errors import InputError
from plainsight.report.audit_verdict import AuditVerdict
from plainsight.report.methods_table import (
    FROM_AUDIT_TABLE,
    FROM_RECORD,
    Cost,
    MethodRecords,
    MethodsTableFiles,
    RunTables,
    markdown,
    methods_table,
    pooled_leak,
    write_methods_table,
)

RUN = {"dataset": "tab", "setting": "known", "idset": "direct"}
DISPLAY = {"baseline": "Baseline", "dpsgd": "DP-SGD", "rpsg": "RPSG", "aug_pe": "Aug-PE"}
SEED = 1


def paired(member_hits, control_hits, member_only, control_only, n=24):
    counts = {"member_hits": member_hits, "members": n, "control_hits": control_hits, "controls": n}
    return {
        "design": "paired",
        "measures": {"any_identifier": {**counts, "member_only": member_only, "control_only": control_only}},
    }


def unpaired(member_hits, members, control_hits, controls):
    counts = {
        "member_hits": member_hits,
        "members": members,
        "control_hits": control_hits,
        "controls": controls,
    }
    return {"design": "unpaired", "measures": {"any_identifier": counts}}


def released(leak_low=-0.1, leak_high=0.04, auc=0.55):
    """A released-text record whose every gate criterion but the canaries' passes with the defaults,
    unless the any-identifier excess bounds say otherwise."""
    return {
        "method": "m",
        "seed": SEED,
        "text_mia_auc_cosine": auc,
        "text_mia_auc_cosine_low": auc - 0.1,
        "text_mia_auc_cosine_high": 0.59,
        "text_mia_auc_ngram_low": 0.4,
        "text_mia_auc_ngram_high": 0.58,
        "dcr_synthetic_median": 0.61,
        "dcr_held_out_median": 0.58,
        "verbatim_share": 0.125,
        "released_text_epsilon": 0.25,
        "leak_any_identifier_excess_low": leak_low,
        "leak_any_identifier_excess_high": leak_high,
        "leak_near_excess_low": -0.1,
        "leak_near_excess_high": 0.04,
        "leak_verbatim_excess_low": -0.1,
        "leak_verbatim_excess_high": 0.04,
        "leak_design": "paired",
    }


RPSG_GUARANTEE = {
    "epsilon": 4.0,
    "delta": 0.002,
    "privacy_unit": "one training segment, per selection (its seed)",
    "covers": "which of its m candidates a seed's selection keeps",
    "not_covered": "the candidates: every released text is a rewrite of one private seed",
    "release_epsilon": None,
}
AUG_PE_GUARANTEE = {
    "epsilon": 4.0,
    "delta": 0.002,
    "epsilon_spent": 3.98,
    "privacy_unit": "one privacy unit (the docs' `unit_id`, with all its documents)",
    "covers": "the released corpus",
    "not_covered": "what the model holds",
    "release_epsilon": 3.98,
}
DP_TRAINING = {"epsilon": 8.0, "delta": 1e-5, "privacy_unit": "document", "units": 100}


CPU_COST = Cost(120.0, 60.0, 24, ("cpu",))  # 120 CPU seconds, 60 wall seconds for 24 documents


def records(method, control, record, guarantees=(), cost=CPU_COST):
    return MethodRecords(method, (SEED,), [control], [record], [2.5], [0.5], list(guarantees), cost)


def hand_made():
    return [
        records("baseline", paired(6, 2, 5, 1), released()),
        records("dpsgd", unpaired(3, 100, 1, 50), released(), [DP_TRAINING]),
        records("rpsg", unpaired(10, 40, 2, 40), released(), [RPSG_GUARANTEE]),
        # a leak whose lower bound lies above the gate's 0.05: the gate fails it
        records("aug_pe", unpaired(1, 40, 0, 40), released(leak_low=0.2, leak_high=0.4), [AUG_PE_GUARANTEE]),
    ]


def run_tables():
    utility = pd.DataFrame(
        [
            {**RUN, "method": "baseline", "macro_f1": 0.412, "macro_f1_low": 0.301, "macro_f1_high": 0.523},
            {**RUN, "method": "dpsgd", "macro_f1": 0.25, "macro_f1_low": 0.125, "macro_f1_high": 0.375},
            {
                **RUN,
                "idset": "quasi",
                "method": "rpsg",
                "macro_f1": 0.9,
                "macro_f1_low": 0.8,
                "macro_f1_high": 1.0,
            },
        ]
    )
    canaries = pd.DataFrame(
        [
            {
                **RUN,
                "method": "dpsgd",
                "seed": SEED,
                "canary_epsilon": 0.1,
                "canary_max_certifiable_epsilon": 1.38,
            },
            {
                **RUN,
                "method": "dpsgd",
                "seed": 2,
                "canary_epsilon": 0.9,
                "canary_max_certifiable_epsilon": 1.38,
            },
        ]
    )
    verdicts = {
        name: AuditVerdict("INCONCLUSIVE", ("canaries: INCONCLUSIVE (none)",), "released text")
        for name in ("baseline", "dpsgd")
    }
    return RunTables(utility, canaries, verdicts)


@pytest.fixture
def table():
    return methods_table(hand_made(), RUN, run_tables(), Gate(), DISPLAY)


def test_the_leak_is_the_excess_over_its_control_with_bounds(table):
    baseline = table.set_index("method").loc["baseline"]
    # paired: (5 - 1) / 24 discordant generations; member 6 / 24, control 2 / 24
    assert baseline["leak_excess"] == pytest.approx(4 / 24)
    assert baseline["leak_member_rate"] == 0.25 and baseline["leak_control_rate"] == pytest.approx(2 / 24)
    assert baseline["leak_excess_low"] < 4 / 24 < baseline["leak_excess_high"]
    dpsgd = table.set_index("method").loc["dpsgd"]
    assert dpsgd["leak_design"] == "unpaired" and dpsgd["leak_excess"] == pytest.approx(0.03 - 0.02)


def test_every_method_has_a_row_with_its_family_and_verdict(table):
    assert list(table["method"]) == ["baseline", "dpsgd", "rpsg", "aug_pe"]
    assert list(table["family"]) == ["in_context", "trained", "private_selection", "private_selection"]
    assert list(table["verdict_source"]) == [FROM_AUDIT_TABLE, FROM_AUDIT_TABLE, FROM_RECORD, FROM_RECORD]
    # the gate on the private-selection records: RPSG states no guarantee for its release, Aug-PE's is above
    # the maximum, so no sample decides them; Aug-PE's leak fails it on empirical evidence
    assert list(table["verdict"]) == ["INCONCLUSIVE", "INCONCLUSIVE", POLICY, POLICY]
    assert table.set_index("method").loc["aug_pe", "verdict_kind"].endswith("empirical evidence: FAIL")


def test_utility_epsilons_and_cost_cells(table):
    rows = table.set_index("method")
    assert rows.loc["baseline", "macro_f1"] == 0.412 and math.isnan(rows.loc["rpsg", "macro_f1"])
    assert rows.loc["dpsgd", "release_epsilon"] == 8.0 and rows.loc["aug_pe", "release_epsilon"] == 3.98
    assert rows.loc["rpsg", "formal_epsilon"] == 4.0 and math.isnan(rows.loc["rpsg", "release_epsilon"])
    assert math.isnan(rows.loc["baseline", "formal_epsilon"])
    # the audit seed's canary bound only, not seed 2's
    assert rows.loc["dpsgd", "canary_epsilon"] == 0.1 and math.isnan(rows.loc["rpsg", "canary_epsilon"])
    assert rows.loc["baseline", "cpu_seconds_per_1000_documents"] == 5000.0  # 120 s for 24 documents
    assert rows.loc["baseline", "wall_seconds_per_1000_documents"] == 2500.0


def markdown_rows(text: str) -> dict[str, list[str]]:
    rows = [line.strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): [cell.strip() for cell in cells] for cells in rows}


def test_the_markdown_cells_and_notes(table):
    text = markdown(table)
    rows = markdown_rows(text)
    assert rows["Method"][-1] == "CPU s / 1,000 documents (on cpu)"
    # the paired leak counts generations, the unpaired one distinct values: each cell says which
    assert rows["Baseline"][2] == "25 vs 8 (% of generations): +17 [" + rows["Baseline"][2].split("[")[1]
    assert rows["DP-SGD"][2].startswith("3 vs 2 (% of distinct values): +1 [")
    assert rows["Baseline"][7] == "0.412 [0.301, 0.523]" and rows["RPSG"][7] == "-"
    assert rows["DP-SGD"][9] == "8.00 (delta 1e-05, per privacy unit)"
    assert rows["Aug-PE"][9] == "3.98 (delta 0.002, per privacy unit)"
    assert rows["RPSG"][9] == "none for the release (4.00 per selection; delta 0.002, per training segment)"
    assert rows["Baseline"][9] == "none"
    assert rows["DP-SGD"][10] == "text >= 0.25; canaries >= 0.10 (could show 1.38)"
    assert rows["RPSG"][10] == "text >= 0.25; canaries -"
    assert rows["Aug-PE"][11] == f"**{POLICY}** †" and rows["Baseline"][11] == "**INCONCLUSIVE**"
    assert rows["Baseline"][12] == "5000" and rows["Baseline"][6] == "12.5"
    assert "RPSG: its epsilon 4.00 covers which of its m candidates" in text
    assert "every released text is a rewrite of one private seed" in text
    assert "Aug-PE: its epsilon" not in text  # its epsilon bounds its release
    assert "per distinct value" in text and "per generation" in text
    assert "| PIPP (% of generations) |" in text and "| Verbatim (% of generations) |" in text
    # whom each guarantee protects, per person; those without one in one line
    assert "- DP-SGD: epsilon 8.00 at delta 1e-05 protects one privacy unit (the docs' `unit_id`" in text
    assert "- Baseline: no formal guarantee; nothing bounds what is revealed of a person" in text


def test_a_gpu_corpus_reports_wall_seconds():
    methods = [records("baseline", paired(6, 2, 5, 1), released(), cost=Cost(120.0, 60.0, 24, ("cuda:0",)))]
    text = markdown(methods_table(methods, RUN, run_tables(), Gate(), DISPLAY))
    assert markdown_rows(text)["Method"][-1] == "Wall s / 1,000 documents (on cuda:0)"
    assert markdown_rows(text)["Baseline"][-1] == "2500"


def test_seeds_pool_their_leak_counts():
    pooled = pooled_leak([unpaired(3, 100, 1, 50), unpaired(5, 100, 0, 50)])
    assert pooled["leak_member_rate"] == 8 / 200 and pooled["leak_control_rate"] == 1 / 100
    with pytest.raises(ValueError, match="mix designs"):
        pooled_leak([unpaired(3, 100, 1, 50), paired(1, 1, 0, 0)])


def write_files(tmp_path, methods=("baseline", "dpsgd", "rpsg")):
    """The files of one run at seed 1, with the hand-made records' numbers."""
    by_method = {r.method: r for r in hand_made()}
    paths = {kind: [] for kind in ("controls", "released", "summaries", "mauves", "corpora")}
    guarantees, benchmarks = [], []
    for method in methods:
        folder = tmp_path / method
        folder.mkdir()
        for kind, content in (
            ("controls", by_method[method].controls[0]),
            ("released", by_method[method].released[0]),
            ("mauves", {"mauve": 0.5}),
        ):
            (folder / f"{kind}.json").write_text(json.dumps(content), encoding="utf-8")
            paths[kind].append(str(folder / f"{kind}.json"))
        pd.DataFrame({"segment": [0, 1, -1], "pipp": [2.0, 3.0, 2.5]}).to_parquet(folder / "summary.parquet")
        pd.DataFrame({"text": ["a"] * 24, "device": "cpu"}).to_parquet(folder / "corpus.parquet")
        (folder / "bench.tsv").write_text(
            "s\th:m:s\tmax_rss\tcpu_time\n60.0\t0:01:00\t-\t120.0\n", encoding="utf-8"
        )
        paths["summaries"].append(str(folder / "summary.parquet"))
        paths["corpora"].append(str(folder / "corpus.parquet"))
        benchmarks.append((method, str(folder / "bench.tsv")))
        if by_method[method].guarantees:
            adapter = folder / "adapter"  # a DP-SGD adapter folder, or a guarantee record
            adapter.mkdir()
            (adapter / "training.json").write_text(
                json.dumps(by_method[method].guarantees[0]), encoding="utf-8"
            )
            guarantees.append((method, str(adapter)))
    tables = run_tables()
    tables.utility.to_csv(tmp_path / "utility.csv", index=False)
    canaries = tables.canaries.rename(
        columns={
            "canary_epsilon": "epsilon_lower_bound",
            "canary_max_certifiable_epsilon": "max_certifiable_epsilon",
        }
    ).assign(attack="ngram")
    canaries.to_csv(tmp_path / "canaries.csv", index=False)
    pd.DataFrame(
        [
            {**RUN, "method": m, "verdict": "PASS", "verdict_reasons": "a; b", "threat_model": "t"}
            for m in methods[:2]
        ]
    ).to_csv(tmp_path / "privacy_audit.csv", index=False)
    return MethodsTableFiles(
        [{"method": m, "seed": SEED} for m in methods],
        *paths.values(),
        guarantees,
        benchmarks,
        str(tmp_path / "utility.csv"),
        [str(tmp_path / "canaries.csv")],
        [str(tmp_path / "privacy_audit.csv")],
    )


def test_the_table_from_its_files(tmp_path):
    outputs = {"csv": str(tmp_path / "methods.csv"), "markdown": str(tmp_path / "methods.md")}
    write_methods_table(write_files(tmp_path), RUN, Gate(), DISPLAY, outputs)
    table = pd.read_csv(outputs["csv"]).set_index("method")
    assert list(table.index) == ["baseline", "dpsgd", "rpsg"]
    assert list(table["verdict"]) == ["PASS", "PASS", POLICY]
    assert table.loc["dpsgd", "formal_epsilon"] == 8.0 and table.loc["dpsgd", "canary_epsilon"] == 0.1
    assert table.loc["rpsg", "pipp"] == 2.5 and table.loc["rpsg", "cpu_seconds_per_1000_documents"] == 5000.0
    rows = markdown_rows((tmp_path / "methods.md").read_text(encoding="utf-8"))
    assert rows["RPSG"][7] == "-" and rows["DP-SGD"][9] == "8.00 (delta 1e-05, per privacy unit)"


def test_a_dataset_without_canaries_leaves_their_columns_empty(tmp_path):
    """The run's dataset is not audited, so there is no canary table: no canary bound, the rest as it was."""
    files = replace(write_files(tmp_path), canaries=())
    outputs = {"csv": str(tmp_path / "methods.csv"), "markdown": str(tmp_path / "methods.md")}
    write_methods_table(files, RUN, Gate(), DISPLAY, outputs)
    table = pd.read_csv(outputs["csv"]).set_index("method")
    assert table[["canary_epsilon", "canary_max_certifiable_epsilon"]].isna().all().all()
    assert list(table["verdict"]) == ["PASS", "PASS", POLICY]
    assert table.loc["dpsgd", "formal_epsilon"] == 8.0
    text = (tmp_path / "methods.md").read_text(encoding="utf-8")
    assert markdown_rows(text)["DP-SGD"][10].endswith("; canaries -")
    assert "(results/tables/tab/canaries.csv; - for methods it does not run" in text


def test_the_guarantees_are_stated_per_person_over_the_corpus_units(tmp_path):
    """A patient with three training notes, whose segments fed three RPSG seeds: the table says three, and
    RPSG's epsilon for that patient is three selections' (group privacy over separate selections)."""
    docs = pd.DataFrame(
        [
            {"doc_id": doc, "split": "train", "segment": segment, "unit_id": unit}
            for unit, notes in (("p1", ["n1", "n2", "n3"]), ("p2", ["n4"]))
            for doc in notes
            for segment in (0, 1)
        ]
    )
    docs.to_parquet(tmp_path / "docs.parquet")
    files = replace(write_files(tmp_path), docs=str(tmp_path / "docs.parquet"))
    (rpsg_record,) = [path for method, path in files.guarantees if method == "rpsg"]
    (Path(rpsg_record) / "training.json").write_text(
        json.dumps({**RPSG_GUARANTEE, "largest_unit_seeds": 3}), encoding="utf-8"
    )
    outputs = {"csv": str(tmp_path / "methods.csv"), "markdown": str(tmp_path / "methods.md")}
    table = write_methods_table(files, RUN, Gate(), DISPLAY, outputs).set_index("method")
    assert table.loc["rpsg", "records_per_unit"] == 3 and table.loc["rpsg", "unit_epsilon"] == 12.0
    assert table.loc["rpsg", "unit_delta"] == pytest.approx(0.006)
    assert table.loc["dpsgd", "records_per_unit"] == 1 and table.loc["dpsgd", "unit_epsilon"] == 8.0
    assert table.loc["dpsgd", "privacy_unit"].startswith("privacy unit")
    assert math.isnan(table.loc["baseline", "unit_epsilon"]) and table["units"].tolist() == [2, 2, 2]
    assert table["largest_unit_documents"].tolist() == [3, 3, 3]
    text = (tmp_path / "methods.md").read_text(encoding="utf-8")
    assert markdown_rows(text)["RPSG"][9] == (
        "none for the release (4.00 per selection; delta 0.002, per training segment; up to 3 per privacy "
        "unit: 12.00)"
    )
    assert "here one privacy unit fed up to 3 seeds: epsilon 12.00 at delta 0.006." in text
    assert (
        "Privacy units (the docs' `unit_id`) of the training split: 2, with more than one document: 1, "
        "largest: 3 documents (most training segments of one unit: 6)." in text
    )


def test_a_missing_record_stops_in_one_line_naming_it(tmp_path):
    files = write_files(tmp_path)
    (tmp_path / "rpsg" / "released.json").unlink()
    outputs = {"csv": str(tmp_path / "methods.csv"), "markdown": str(tmp_path / "methods.md")}
    with pytest.raises(InputError) as error:
        write_methods_table(files, RUN, Gate(), DISPLAY, outputs)
    assert str(error.value).startswith(str(tmp_path / "rpsg" / "released.json"))
    assert "\n" not in str(error.value) and not (tmp_path / "methods.csv").exists()
