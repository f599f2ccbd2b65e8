"""A run's cost plan against Snakemake's records of the run: hand-written records with known times."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pandas as pd
import pytest

from plainsight.errors import InputError
from plainsight.report.plan_check import (
    FAMILIES,
    compare,
    growth,
    main,
    measured_jobs,
    read_benchmarks,
    read_metadata,
    read_plan,
    rule_family,
    throughput_of,
)
from plainsight.scheduling.model_rules import MODEL_RULES

HOUR = 3600.0

PLAN = """\
rule\tjobs\tdevice_hours\tlongest_hours\thost_memory_gb\tgpu_memory_gib\tgpus_per_job
train_adapter\t2\t2.0000\t1.0000\t7.2000\t38.9000\t1
generate_icl\t2\t1.0000\t0.5000\t4.0000\t60.0000\t2
mauve\t1\t0.2000\t0.2000\t\t1.5000\t1
perplexity\t1\t0.5000\t0.5000\t26.4000\t50.4000\t1
ingest\t1\t\t\t\t\t
table\t1\t\t\t\t\t
"""


def record_path(metadata: Path, output: str) -> Path:
    """Where Snakemake keeps an output's record: the path's urlsafe base64 (short names: one file)."""
    return metadata / base64.urlsafe_b64encode(output.encode()).decode()


def write_record(metadata: Path, output: str, **fields) -> Path:
    path = record_path(metadata, output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"incomplete": False, "record_format_version": 6, **fields}), encoding="utf-8")
    return path


def write_run(run: Path) -> Path:
    """A finished run's records (8 outputs of 7 jobs) and benchmark files, with known times."""
    metadata = run / ".snakemake" / "metadata"
    jobs = [
        # two train_adapter jobs: 0.5 h and 1 h
        ("results/tab/known/direct/models/ft/seed1", "train_adapter", 11, 1000.0, 1000.0 + 0.5 * HOUR),
        ("results/tab/known/direct/models/ft/seed2", "train_adapter", 12, 5000.0, 5000.0 + HOUR),
        # one generate_icl job with two outputs, marked started 2 ms apart, its last written at 100 + 900 s
        ("results/tab/known/direct/synthetic/icl/seed1.parquet", "generate_icl", 21, 100.0, 820.0),
        ("results/tab/known/direct/synthetic/icl/seed1_blocked.parquet", "generate_icl", 21, 100.002, 1000.0),
        # a later Snakemake process gave another generate_icl job the same job_hash: 0.5 h of its own
        (
            "results/tab/known/direct/synthetic/icl/seed2.parquet",
            "generate_icl",
            21,
            20000.0,
            20000.0 + 0.5 * HOUR,
        ),
        ("results/tab/docs.parquet", "ingest", 31, 0.0, 120.0),
        ("results/tab/known/direct/utility/icl/seed1.json", "mauve", 41, 0.0, 30.0),
        ("results/plan/all.md", "plan", 51, 0.0, 6.0),
    ]
    for output, rule, job_hash, start, end in jobs:
        write_record(metadata, output, rule=rule, job_hash=job_hash, starttime=start, endtime=end)
    benchmarks = run / "results" / "benchmarks"
    (benchmarks / "generate_icl").mkdir(parents=True)
    (benchmarks / "train_adapter").mkdir(parents=True)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (benchmarks / "generate_icl/tab_known_direct_icl_1.tsv").write_text(
        header + "800.0000\t0:13:20\t5000.00\t1\t1\t1\t0\t0\t90\t700\n", encoding="utf-8"
    )
    # a job that ended before Snakemake could sample its memory
    (benchmarks / "generate_icl/tab_known_direct_icl_2.tsv").write_text(
        header + "1700.5000\t0:28:20\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\n", encoding="utf-8"
    )
    (benchmarks / "train_adapter/tab_known_direct_ft_1.tsv").write_text(
        header + "1700.0000\t0:28:20\t3000.00\t1\t1\t1\t0\t0\t90\t1600\n", encoding="utf-8"
    )
    (benchmarks / "evidence_coverage.json").write_text("{}", encoding="utf-8")  # not a rule's benchmark
    (run / "plan.tsv").write_text(PLAN, encoding="utf-8")
    return run


@pytest.fixture
def run(tmp_path) -> Path:
    return write_run(tmp_path / "run")


def test_a_job_with_two_outputs_counts_once_and_a_recurring_job_hash_twice(run):
    records = read_metadata(run / ".snakemake/metadata")
    assert len(records) == 8
    assert "results/tab/docs.parquet" in set(records["output"])  # the record's name decoded
    jobs = measured_jobs(records)
    assert jobs["rule"].value_counts().to_dict() == {
        "train_adapter": 2,
        "generate_icl": 2,
        "ingest": 1,
        "mauve": 1,
        "plan": 1,
    }
    icl = jobs[jobs["rule"] == "generate_icl"].sort_values("start")
    # from the first output's start (100 s) to the last output's end (1,000 s), then the later job
    assert list(icl["hours"]) == pytest.approx([900 / HOUR, 0.5])
    assert list(icl["outputs"]) == [2, 1]


def test_the_comparison_sums_hours_per_rule_and_flags_what_misses_by_more_than_30_percent(run):
    jobs = measured_jobs(read_metadata(run / ".snakemake/metadata"))
    table = compare(read_plan(run / "plan.tsv"), jobs, read_benchmarks(run / "results/benchmarks"))
    rows = table.set_index("rule")
    # 1.5 measured of 2 planned: 0.75, inside [0.7, 1.3]
    assert rows.loc["train_adapter", ["jobs_planned", "jobs_measured"]].tolist() == [2, 2]
    assert rows.loc["train_adapter", "planned_hours"] == pytest.approx(2.0)
    assert rows.loc["train_adapter", "measured_hours"] == pytest.approx(1.5)
    assert rows.loc["train_adapter", "ratio"] == pytest.approx(0.75)
    assert not rows.loc["train_adapter", "outside"]
    # 2 device-hours on 2 GPUs per job: 1 job hour planned, 0.25 + 0.5 measured: 0.75, outside
    assert rows.loc["generate_icl", "planned_hours"] == pytest.approx(0.5)
    assert rows.loc["generate_icl", "measured_hours"] == pytest.approx(0.75)
    assert rows.loc["generate_icl", "ratio"] == pytest.approx(1.5)
    assert rows.loc["generate_icl", "outside"]
    # benchmarks: 800 + 1,700.5 s; peak 5,000 MB (the unsampled job adds none) over the 4.0 GB request
    assert rows.loc["generate_icl", "benchmark_hours"] == pytest.approx(2500.5 / HOUR)
    assert rows.loc["generate_icl", "peak_rss_gb"] == pytest.approx(5.0)
    assert rows.loc["generate_icl", "over_request"]
    assert rows.loc["train_adapter", "peak_rss_gb"] == pytest.approx(3.0)
    assert not rows.loc["train_adapter", "over_request"]
    # 30 s against 0.2 h is far off, but less than a minute of work is not judged
    assert rows.loc["mauve", "ratio"] == pytest.approx(30 / HOUR / 0.2)
    assert not rows.loc["mauve", "outside"] and not rows.loc["mauve", "over_request"]
    # rules the plan lists without hours, and a rule it does not list
    assert rows.loc["ingest", "in_plan"] and not rows.loc["ingest", "estimated"]
    assert rows.loc["ingest", "measured_hours"] == pytest.approx(120 / HOUR)
    assert pd.isna(rows.loc["ingest", "ratio"]) and not rows.loc["ingest", "outside"]
    assert rows.loc["table", ["jobs_planned", "jobs_measured"]].tolist() == [1, 0]
    # a planned model rule that did not run has no ratio, rather than 0
    assert rows.loc["perplexity", "jobs_measured"] == 0 and pd.isna(rows.loc["perplexity", "ratio"])
    assert not rows.loc["plan", "in_plan"] and rows.loc["plan", "jobs_measured"] == 1
    # estimated rules first, the costliest planned first
    assert list(table["rule"][:4]) == ["train_adapter", "generate_icl", "perplexity", "mauve"]


def test_growth_between_two_runs_per_rule_family(run):
    jobs = measured_jobs(read_metadata(run / ".snakemake/metadata"))
    half = pd.DataFrame(
        {
            "rule": ["train_adapter", "generate_icl", "canary_adapter", "ingest"],
            "hours": [0.5, 0.25, 0.1, 120 / HOUR],
        }
    )
    plan = read_plan(run / "plan.tsv")
    half_plan = plan.assign(hours=plan["hours"] / 2)
    table = growth(jobs, half, plan, half_plan).set_index("family")
    assert list(table.index) == ["training", "generation", "scoring", "audit", "other", "total"]
    assert table.loc["training", "measured_run"] == pytest.approx(1.5)
    assert table.loc["training", "measured_ratio"] == pytest.approx(3.0)
    assert table.loc["generation", "measured_ratio"] == pytest.approx(0.75 / 0.25)
    # the canary adapter is the audit's; the full run has none: no ratio over nothing, 0 over 0.1
    assert table.loc["audit", "measured_ratio"] == pytest.approx(0.0)
    assert pd.isna(table.loc["scoring", "measured_ratio"])  # mauve ran only in the full run
    # other: ingest (120 s) and plan (6 s) against ingest alone
    assert table.loc["other", "measured_ratio"] == pytest.approx(126 / 120)
    assert table.loc["total", "measured_run"] == pytest.approx(1.5 + 0.75 + 30 / HOUR + 126 / HOUR)
    # planned: every estimated family halves; rules that load no model have no planned hours
    assert table.loc["training", "planned_ratio"] == pytest.approx(2.0)
    assert table.loc["total", "planned_run"] == pytest.approx(2.0 + 0.5 + 0.2 + 0.5)
    assert pd.isna(table.loc["other", "planned_run"])


def test_every_model_rule_has_one_family():
    listed = [rule for rules in FAMILIES.values() for rule in rules]
    assert sorted(listed) == sorted(MODEL_RULES)
    assert rule_family("canary_generations") == "audit" and rule_family("generate_zero_learning") == "audit"
    assert rule_family("utility_measures_all_methods") == "scoring"
    assert rule_family("privacy_metrics") == "other"


def test_the_command_writes_the_check_and_the_growth(run, tmp_path, capsys):
    half = write_run(tmp_path / "half")
    out = tmp_path / "check.md"
    args = ["--plan", str(run / "plan.tsv"), "--run", str(run), "--out", str(out)]
    assert main([*args, "--compare", str(half), "--compare-plan", str(half / "plan.tsv")]) == 0
    text = out.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert "| train_adapter | 2 | 2 | 2.000 | 1.500 | 0.75 | 0.472 (1 of 2 jobs) | 7.2 | 3.0 |  |" in lines
    assert (
        "| generate_icl | 2 | 2 | 0.500 | 0.750 | 1.50 | 0.695 | 4.0 | 5.0 | outside 30%, peak over request |"
        in lines
    )
    assert "| ingest | 1 | 1 | not estimated | 0.033 | - | - | - | - |  |" in lines
    assert "| plan | 0 | 1 | not in the plan | 0.002 | - | - | - | - |  |" in lines
    assert "| perplexity | 1 | 0 | 0.500 | 0.000 | - | - | 26.4 | - |  |" in lines
    # 2.258 h measured of 3.2 planned (perplexity's 0.5 h included though it did not run)
    assert "| **estimated rules** | **6** | **5** | **3.200** | **2.258** | **0.71** | | | | |" in lines
    assert (
        "Outside 30% (measured / planned, and the throughput the plan's hours rest on): generate_icl 1.50 "
        "(`resources.rule_tokens_per_second.generate_icl` or `generation_tokens_per_second`)." in lines
    )
    assert f"## Growth: `{run}` over `{half}`" in lines
    assert "| training | 1.500 | 1.500 | 1.00 | 2.500 | 2.500 | 1.00 |" in lines  # perplexity planned too


def test_a_record_without_endtime_is_one_line_naming_its_file(run, capsys):
    bad = write_record(
        run / ".snakemake/metadata", "results/tab/spans.parquet", rule="ingest", job_hash=31, starttime=0.0
    )
    with pytest.raises(InputError, match="endtime") as raised:
        read_metadata(run / ".snakemake/metadata")
    assert str(raised.value).startswith(f"{bad}: record of results/tab/spans.parquet: no endtime")
    assert main(["--plan", str(run / "plan.tsv"), "--run", str(run), "--out", str(run / "x.md")]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and str(bad) in error
    assert not (run / "x.md").exists()


def test_malformed_records_plans_and_benchmarks_name_their_file(run, tmp_path, capsys):
    missing = tmp_path / "results/plan/all.tsv"
    with pytest.raises(InputError, match="rule plan writes it") as raised:
        read_plan(missing)
    assert str(raised.value).startswith(str(missing))
    assert main(["--plan", str(missing), "--run", str(run), "--out", str(tmp_path / "x.md")]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and str(missing) in error

    not_a_plan = tmp_path / "table.tsv"
    not_a_plan.write_text("rule\tjobs\ntrain_adapter\t2\n", encoding="utf-8")
    with pytest.raises(InputError, match="no device_hours, host_memory_gb, gpus_per_job column"):
        read_plan(not_a_plan)

    broken = record_path(run / ".snakemake/metadata", "results/tab/broken.parquet")
    broken.write_text('{"rule": "ingest", ', encoding="utf-8")
    with pytest.raises(InputError, match="malformed JSON") as raised:
        read_metadata(run / ".snakemake/metadata")
    assert str(raised.value).startswith(str(broken))

    with pytest.raises(InputError, match="no such folder"):
        read_metadata(tmp_path / "elsewhere/.snakemake/metadata")

    benchmark = run / "results/benchmarks/mauve/tab.tsv"
    benchmark.parent.mkdir()
    benchmark.write_text("h:m:s\n0:00:01\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a Snakemake benchmark file") as raised:
        read_benchmarks(run / "results/benchmarks")
    assert str(raised.value).startswith(str(benchmark))


def test_a_run_without_benchmarks_compares_its_hours_alone(run):
    jobs = measured_jobs(read_metadata(run / ".snakemake/metadata"))
    benchmarks = read_benchmarks(run / "no-benchmarks")
    rows = compare(read_plan(run / "plan.tsv"), jobs, benchmarks).set_index("rule")
    assert rows["benchmark_hours"].isna().all() and not rows["over_request"].any()
    assert rows.loc["generate_icl", "ratio"] == pytest.approx(1.5)


def test_the_throughput_named_for_a_rule_is_the_one_its_plan_reads():
    assert (
        throughput_of("generate_icl")
        == "rule_tokens_per_second.generate_icl` or `generation_tokens_per_second"
    )
    # an adapter job (and its canary twin) plans at its method's rate before the family's
    assert throughput_of("canary_adapter") == (
        "rule_tokens_per_second.canary_adapter` or `method_tokens_per_second` or `training_tokens_per_second"
    )
    assert throughput_of("perplexity") == "rule_tokens_per_second.perplexity` or `training_tokens_per_second"
