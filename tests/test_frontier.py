"""The privacy-utility frontier read back from a sweep's run folders: one row per DP method and epsilon,
reference lines from the decisive run, a one-line error naming a missing table."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from plainsight.report.frontier import dp_methods, main, write_frontier

REPO = Path(__file__).resolve().parents[1]
TABLES = REPO / "resources/paper_tables.yaml"
RUN = {"dataset": "tab", "setting": "known", "idset": "direct"}


def audit_row(method: str, epsilon: float, verdict: str, f1: float, share: float) -> dict:
    return {
        **RUN,
        "method": method,
        "dp_epsilon": epsilon,
        "dp_delta": 1e-5 if epsilon == epsilon else float("nan"),
        "verdict": verdict,
        "fit_as_text": "fit as text" if share >= 0.8 else "not fit as text",
        "documents_share": share,
        "documents_share_low": share - 0.05,
        "documents_share_high": share + 0.05,
        "macro_f1": f1,
        "macro_f1_low": f1 - 0.1,
        "macro_f1_high": f1 + 0.1,
    }


def write_run(folder: Path, audit: list[dict], mauve: dict[str, dict] | None = None) -> Path:
    tables = folder / "results/tables/tab"
    tables.mkdir(parents=True)
    pd.DataFrame(audit).to_csv(tables / "privacy_audit.csv", index=False)
    utility = [
        {**RUN, "method": method, "macro_f1": f1}
        for method, f1 in (("real", 0.74), ("chance", 0.26), ("negative_control", 0.30))
    ]
    # another run's rows are not Table 1's and must be left out
    utility.append({**RUN, "idset": "quasi", "method": "real", "macro_f1": 0.99})
    pd.DataFrame(utility).to_csv(tables / "utility.csv", index=False)
    for method, record in (mauve or {}).items():
        path = folder / "results/tab/known/direct/utility" / method / "seed1_mauve.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(record))
    return folder


@pytest.fixture
def sweep(tmp_path):
    nan = float("nan")
    runs = [
        write_run(
            tmp_path / "epsilon-4",
            [audit_row("dpsgd", 4.0, "FAIL", 0.40, 0.9), audit_row("icl_pe", nan, "FAIL", 0.5, 0.9)],
            {"dpsgd": {"mauve": 0.6, "mauve_low": 0.5, "mauve_high": 0.7}},
        ),
        write_run(tmp_path / "epsilon-1", [audit_row("dpsgd", 1.0, "PASS", 0.15, 0.17)]),
    ]
    reference = write_run(tmp_path / "decide", [audit_row("icl_pe", nan, "INCONCLUSIVE", 0.39, 0.85)])
    return runs, reference, tmp_path / "frontier"


def test_one_row_per_dp_method_and_epsilon_in_epsilon_order(sweep):
    runs, reference, out = sweep
    rows = write_frontier(runs, reference, out, TABLES, 0.8)
    assert rows["method"].tolist() == ["dpsgd", "dpsgd"]  # ICL-PE has no guarantee: a reference only
    assert rows["dp_epsilon"].tolist() == [1.0, 4.0]
    assert rows["verdict"].tolist() == ["PASS", "FAIL"]
    assert rows["macro_f1_low"].tolist() == pytest.approx([0.05, 0.30])
    # MAUVE where the run measured it, with its bootstrap interval; not measured elsewhere
    assert rows["mauve"].isna().tolist() == [True, False]
    assert rows.iloc[1][["mauve_low", "mauve_high"]].tolist() == pytest.approx([0.5, 0.7])
    assert pd.read_csv(out / "frontier.csv")["dp_epsilon"].tolist() == [1.0, 4.0]
    assert (out / "frontier.png").stat().st_size > 10_000


def test_the_table_reads_beside_its_reference_lines(sweep):
    runs, reference, out = sweep
    write_frontier(runs, reference, out, TABLES, 0.8)
    table = (out / "frontier.md").read_text()
    assert (
        "| DP-SGD | 1 | 1.0e-05 | PASS | not fit as text | 17 [12, 22] "
        "| 0.150 [0.050, 0.250] | not measured |" in table
    )
    assert "0.600 [0.500, 0.700]" in table
    # the reference run's Table 1 rows only: its ceiling is 0.74, not the quasi run's 0.99
    assert "- real-data ceiling: macro-F1 0.740" in table
    assert "- chance: macro-F1 0.260" in table
    assert "- zero learning: macro-F1 0.300" in table
    assert "(no guarantee): macro-F1 0.390, documents 85%, verdict INCONCLUSIVE" in table


def test_the_sweep_holds_the_methods_with_a_formal_guarantee():
    assert {"dpsgd", "aug_pe"} <= set(dp_methods())
    assert not {"baseline", "icl", "icl_pe", "ft", "ft_mask"} & set(dp_methods())


def test_a_run_without_its_tables_is_a_one_line_error_and_writes_nothing(sweep, capsys):
    runs, reference, out = sweep
    unfinished = runs[0].parent / "epsilon-8"
    unfinished.mkdir()
    code = main(
        ["--runs", str(unfinished), "--reference", str(reference), "--out", str(out), "--tables", str(TABLES)]
    )
    error = capsys.readouterr().err.strip()
    assert code == 1 and "\n" not in error
    assert error.startswith(str(unfinished / "results/tables/tab/privacy_audit.csv"))
    assert not out.exists()


def test_a_sweep_run_plans_the_dp_method_alone_with_its_epsilon(tmp_path):
    """One run of `make frontier`: config/frontier.yaml and an epsilon over the decisive profile plan
    DP-SGD's adapter, corpus, MAUVE, canaries and audit, and no in-context method."""
    from test_workflow import planned_rules

    workdir = tmp_path / "epsilon-4"
    subprocess.run(["make", "--silent", "-C", str(REPO), "decide-dir", f"DECIDE_DIR={workdir}"], check=True)
    (workdir / "epsilon.yaml").write_text("dpsgd: {epsilon: 4}\n")
    targets = (
        "results/tab/known/direct/utility/dpsgd/seed1_mauve.json",
        "results/tables/tab/privacy_audit.csv",
    )
    overlays = ("config/decide.yaml", "config/frontier.yaml", str(workdir / "epsilon.yaml"))
    planned = planned_rules(workdir, *targets, "--configfile", *overlays)
    assert planned["train_adapter"] == planned["canary_adapter"] == planned["mauve"] == 1
    assert "generate_icl" not in planned
