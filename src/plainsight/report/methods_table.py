"""Every method side by side (results/tables/{dataset}/methods.{csv,md}): which method to use on a corpus.

One row per method of the config's `methods` and `private_selection.methods`, on the Table 1 run at the
audit seeds: the any-identifier leak against its held-out control (`plainsight.audit.evidence`, the
counts pooled over the seeds), PIPP, the released-text audit (text membership AUC, nearest-document
cosines, verbatim copying), downstream macro-F1 (`utility_all_methods.csv` beside it, where it has
the method), MAUVE, the formal guarantee and what it covers, the empirical epsilon bounds, the release
verdict, and what writing 1,000 documents cost. The pure functions build the table from records
already read; `write_methods_table` reads the files.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.audit.canary_table import CANARY_KEYS, canary_evidence
from plainsight.audit.criteria import Gate
from plainsight.audit.evidence import excess_of, rate_unit
from plainsight.audit.gate import seeds_verdict
from plainsight.audit.guarantee import read_guarantee_record, record_guarantee
from plainsight.audit.privacy_audit_table import run_pipp
from plainsight.audit.protection import (
    UNIT_COLUMNS,
    PersonClaim,
    UnitSizes,
    person_claim,
    person_statement,
    short_name,
    unit_sizes,
    units_line,
)
from plainsight.errors import InputError
from plainsight.evaluation.measures import leak_measure
from plainsight.io import atomic_path, read_benchmark, read_json, write_text
from plainsight.methods import registry
from plainsight.methods.registry import PROTECTED
from plainsight.report.audit_verdict import RUN_COLUMNS, audit_verdicts, run_rows
from plainsight.report.privacy_audit_markdown import claim_checks, excess_cell, row_interval

LEAK = "any_identifier"
MISSING = "-"
# the canary table's bounds that its evidence reads
CANARY_BOUNDS = ("epsilon_lower_bound", "max_certifiable_epsilon")
# How each verdict was reached: the privacy audit table's row, or the gate on this table's audit record.
FROM_AUDIT_TABLE, FROM_RECORD = "privacy audit table", "audit record"
# The released-text record's columns the table shows (means over the audit seeds).
RELEASED_COLUMNS = (
    "text_mia_auc_cosine",
    "text_mia_auc_cosine_low",
    "text_mia_auc_cosine_high",
    "dcr_synthetic_median",
    "dcr_held_out_median",
    "verbatim_share",
    "released_text_epsilon",
    "dp_epsilon",
    "dp_null_p_value",
    "dp_claim_rejected",
)


@dataclass(frozen=True)
class Cost:
    """What the jobs that wrote a method's corpora (over its seeds) took, from their benchmark files."""

    cpu_seconds: float
    wall_seconds: float
    documents: int
    devices: tuple[str, ...]  # where the corpora were decoded (the corpus's `device` column)


@dataclass(frozen=True)
class MethodRecords:
    """What one method's row reads, one entry per audit seed; `guarantees`: its formal claims (a DP-SGD
    adapter's training.json, a private-selection corpus's guarantee record), none for the others."""

    method: str
    seeds: tuple[int, ...]
    controls: Sequence[Mapping[str, Any]]
    released: Sequence[Mapping[str, Any]]
    pipps: Sequence[float]
    mauves: Sequence[float]
    guarantees: Sequence[Mapping[str, Any]]
    cost: Cost


@dataclass(frozen=True)
class RunTables:
    """The tables a row looks its method up in: the utility table, the canary evidence
    (`canary_table.canary_evidence`), the privacy audit's verdicts (None: the run is not audited), and
    how the corpus's training documents fall into privacy units (`protection.unit_sizes`; None: not
    read, and the guarantees are stated without the corpus's units)."""

    utility: pd.DataFrame
    canaries: pd.DataFrame
    verdicts: Mapping[str, Any] | None
    units: UnitSizes | None = None


def _pooled(total: Any, seed: Any) -> Any:
    """A count summed over seeds; per-document [held, total] lists summed document by document, as every
    seed's control draws on the same real documents (one cluster each), else joined."""
    if isinstance(seed, list):
        if len(seed) == len(total):
            return [[a + b for a, b in zip(mine, theirs)] for mine, theirs in zip(total, seed)]
        return [*total, *seed]
    return int(total) + int(seed)


def pooled_leak(controls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The any-identifier leak's member and control rates and excess with its one-sided 95% bounds, from
    the held-out control counts of every seed summed (each seed's generations or values are new trials)."""
    designs = {record["design"] for record in controls}
    if len(designs) != 1:
        raise ValueError(f"the seeds' leak controls mix designs: {sorted(designs)}")
    counts: dict[str, Any] = {}
    for record in controls:
        for key, value in record["measures"][LEAK].items():
            counts[key] = _pooled(counts[key], value) if key in counts else value
    excess = excess_of(counts, designs.pop())
    return {
        "leak_unit": rate_unit(leak_measure(LEAK), excess.design),
        "leak_member_rate": excess.member_rate,
        "leak_control_rate": excess.control_rate,
        "leak_excess": excess.excess,
        "leak_excess_low": excess.excess_low,
        "leak_excess_high": excess.excess_high,
        "leak_design": excess.design,
    }


def mean_record(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The numeric fields of the seeds' released-text records, averaged (as the privacy audit table does)."""
    return pd.DataFrame(list(records)).mean(numeric_only=True).to_dict()


def _finite_mean(values: Sequence[float]) -> float:
    finite = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(finite) / len(finite) if finite else math.nan


def formal_guarantee(guarantees: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The weakest claim over the seeds (largest epsilon and delta) and the epsilon that bounds the
    released corpus: a private-selection record states it (`release_epsilon`, null for RPSG); DP-SGD's
    claim covers all its adapter writes, so its epsilon does."""
    if not guarantees:
        return {
            "formal_epsilon": math.nan,
            "formal_delta": math.nan,
            "release_epsilon": math.nan,
            "guarantee_covers": None,
            "guarantee_not_covered": None,
        }
    releases = [g.get("release_epsilon", g["epsilon"]) for g in guarantees]
    return {
        "formal_epsilon": max(float(g["epsilon"]) for g in guarantees),
        "formal_delta": max(float(g["delta"]) for g in guarantees),
        "release_epsilon": math.nan if None in releases else max(float(e) for e in releases),
        "guarantee_covers": guarantees[0].get("covers"),
        "guarantee_not_covered": guarantees[0].get("not_covered"),
    }


def protection_columns(
    method: str, name: str, guarantees: Sequence[Mapping[str, Any]], units: UnitSizes | None
) -> dict[str, Any]:
    """Whom the method's guarantee protects (`plainsight.audit.protection`): the protected record, the most
    of them one privacy unit makes and that unit's claim (RPSG: a unit that fed k seeds has k times a
    selection's epsilon), the statement per person, and the corpus's units."""
    person = person_claim(method, guarantees, units)
    unit_claim = person.unit_claim
    return {
        "privacy_unit": PROTECTED[person.protects] if person.protects else None,
        "records_per_unit": math.nan if person.per_unit is None else person.per_unit,
        "unit_epsilon": math.nan if unit_claim is None else unit_claim.epsilon,
        "unit_delta": math.nan if unit_claim is None else unit_claim.delta,
        "person_guarantee": person_statement(name, person),
        **(
            {}
            if units is None
            else {
                "units": units.units,
                "units_with_several_documents": units.several,
                "largest_unit_documents": units.largest,
                "most_unit_segments": units.most_segments,
                "each_document_own_unit": units.own,
            }
        ),
    }


def utility_columns(utility: pd.DataFrame, run: Mapping[str, str], method: str) -> dict[str, float]:
    """The method's downstream macro-F1 with its interval from the utility table; NaN where it has none."""
    rows = run_rows(utility, run)
    rows = rows[rows["method"] == registry.base_method(method)]
    columns = ("macro_f1", "macro_f1_low", "macro_f1_high")
    if rows.empty:
        return dict.fromkeys(columns, math.nan)
    return {column: float(rows.iloc[0][column]) for column in columns}


def canary_columns(
    canaries: pd.DataFrame, run: Mapping[str, str], method: str, seeds: Sequence[int]
) -> dict[str, float]:
    """The canary attacks' epsilon bound and the most their canaries could certify, means over the seeds;
    NaN where the canary table has no such run."""
    rows = run_rows(canaries, run)
    rows = rows[(rows["method"] == method) & rows["seed"].astype(int).isin(seeds)]
    return {
        "canary_epsilon": _finite_mean(rows["canary_epsilon"].tolist()),
        "canary_max_certifiable_epsilon": _finite_mean(rows["canary_max_certifiable_epsilon"].tolist()),
    }


def verdict_columns(records: MethodRecords, verdicts: Mapping[str, Any] | None, gate: Gate) -> dict[str, str]:
    """The privacy audit table's verdict where it has the method; else the gate's on each seed's audit
    record with its formal claim (no adapter attack or canaries behind it), the worst seed winning."""
    if verdicts is not None and records.method in verdicts:
        found = verdicts[records.method]
        return {
            "verdict": found.verdict,
            "verdict_reasons": "; ".join(found.reasons),
            "threat_model": found.threat_model,
            "verdict_kind": found.kind,
            "seed_verdicts": found.seed_verdicts,
            "verdict_source": FROM_AUDIT_TABLE,
        }
    claims = [release_claim(guarantee) for guarantee in records.guarantees] or [{}] * len(records.seeds)
    judged = seeds_verdict(
        [(seed, {**record, **claim}) for seed, record, claim in zip(records.seeds, records.released, claims)],
        gate,
        registry.method(records.method).trained,
    )
    return {**judged, "verdict_source": FROM_RECORD}


def release_claim(guarantee: Mapping[str, Any]) -> dict[str, Any]:
    """The claim that bounds one seed's released corpus, as the gate reads it; none where the guarantee
    bounds only a step of the method (RPSG's per-seed selection)."""
    claim = record_guarantee(guarantee)
    return {} if claim is None else claim.claim_columns()


def cost_columns(cost: Cost) -> dict[str, Any]:
    per_thousand = 1000 / cost.documents if cost.documents else math.nan
    return {
        "documents": cost.documents,
        "cpu_seconds_per_1000_documents": cost.cpu_seconds * per_thousand,
        "wall_seconds_per_1000_documents": cost.wall_seconds * per_thousand,
        "device": ", ".join(cost.devices),
    }


def method_row(
    records: MethodRecords,
    run: Mapping[str, str],
    tables: RunTables,
    gate: Gate,
    display: Mapping[str, str],
) -> dict[str, Any]:
    """One method's row: numbers for the CSV, which `markdown` formats."""
    spec = registry.method(records.method)
    released = mean_record(records.released)
    name = display.get(registry.base_method(records.method), records.method)
    return {
        **{key: run[key] for key in RUN_COLUMNS},
        "method": records.method,
        "Method": name,
        "family": spec.family,
        "seeds": ",".join(map(str, records.seeds)),
        **pooled_leak(records.controls),
        "pipp": _finite_mean(records.pipps),
        **{column: released.get(column, math.nan) for column in RELEASED_COLUMNS},
        **utility_columns(tables.utility, run, records.method),
        "mauve": _finite_mean(records.mauves),
        **formal_guarantee(records.guarantees),
        **protection_columns(records.method, name, records.guarantees, tables.units),
        **canary_columns(tables.canaries, run, records.method, records.seeds),
        **verdict_columns(records, tables.verdicts, gate),
        **cost_columns(records.cost),
    }


def methods_table(
    methods: Sequence[MethodRecords],
    run: Mapping[str, str],
    tables: RunTables,
    gate: Gate,
    display: Mapping[str, str],
) -> pd.DataFrame:
    """One row per method, in the order given."""
    return pd.DataFrame([method_row(records, run, tables, gate, display) for records in methods])


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _number_cell(value: Any, decimals: int, scale: float = 1.0) -> str:
    return MISSING if _missing(value) else f"{scale * value:.{decimals}f}"


def leak_cell(row: Mapping[str, Any]) -> str:
    """The any-identifier leak's rates, shares of what `leak_unit` names, and their excess."""
    return excess_cell(row, "leak", row["leak_unit"])


def formal_cell(row: Mapping[str, Any]) -> str:
    """The epsilon that bounds the released corpus, with its delta and protected record, and the epsilon of
    a privacy unit that makes several such records; a claim that bounds only a step of the method (RPSG's
    per-selection epsilon) is shown as such."""
    if _missing(row.get("formal_epsilon")):
        return "none"
    claim = f"delta {row['formal_delta']:.2g}, per {short_name(row['privacy_unit'])}"
    if not _missing(row.get("records_per_unit")) and row["records_per_unit"] > 1:
        claim += f"; up to {int(row['records_per_unit'])} per privacy unit: {row['unit_epsilon']:.2f}"
    if _missing(row.get("release_epsilon")):
        return f"none for the release ({row['formal_epsilon']:.2f} per selection; {claim})"
    return f"{row['release_epsilon']:.2f} ({claim})"


def empirical_cell(row: Mapping[str, Any]) -> str:
    text = f"text >= {_number_cell(row.get('released_text_epsilon'), 2)}"
    if _missing(row.get("canary_epsilon")):
        return f"{text}; canaries {MISSING}"
    return (
        f"{text}; canaries >= {row['canary_epsilon']:.2f} "
        f"(could show {row['canary_max_certifiable_epsilon']:.2f})"
    )


def nearest_cell(row: Mapping[str, Any]) -> str:
    if _missing(row.get("dcr_synthetic_median")):
        return MISSING
    return f"{row['dcr_synthetic_median']:.2f} / {row['dcr_held_out_median']:.2f}"


def cost_measure(table: pd.DataFrame) -> tuple[str, str]:
    """(column, header) of the cost: CPU seconds where every corpus was decoded on the CPU, else wall
    seconds (a GPU job's CPU time says little of its cost), labelled with the devices."""
    devices = sorted({d for cell in table["device"] for d in str(cell).split(", ") if d})
    where = ", ".join(devices) or "unknown device"
    if devices == ["cpu"]:
        return "cpu_seconds_per_1000_documents", f"CPU s / 1,000 documents (on {where})"
    return "wall_seconds_per_1000_documents", f"Wall s / 1,000 documents (on {where})"


def markdown_cells(row: Mapping[str, Any], cost_column: str) -> list[str]:
    mark = "" if row["verdict_source"] == FROM_AUDIT_TABLE else " †"
    return [
        row["Method"],
        str(row["family"]).replace("_", " "),
        leak_cell(row),
        _number_cell(row.get("pipp"), 2),
        row_interval(row, "text_mia_auc_cosine", 2),
        nearest_cell(row),
        _number_cell(row.get("verbatim_share"), 1, 100),
        row_interval(row, "macro_f1", 3),
        _number_cell(row.get("mauve"), 3),
        formal_cell(row),
        empirical_cell(row),
        f"**{row['verdict']}**{mark}",
        _number_cell(row.get(cost_column), 0),
    ]


def guarantee_notes(table: pd.DataFrame) -> list[str]:
    """For each method whose epsilon bounds no property of its release: what it covers and what not."""
    return [
        f"{row['Method']}: its epsilon {row['formal_epsilon']:.2f} covers {row['guarantee_covers']}; it does "
        f"not cover {row['guarantee_not_covered']}. No epsilon bounds its released corpus: read its privacy "
        "from the leak, membership, nearest-document and verbatim columns."
        for row in table.to_dict("records")
        if not _missing(row.get("formal_epsilon")) and _missing(row.get("release_epsilon"))
    ]


def protection_notes(table: pd.DataFrame) -> list[str]:
    """Whom each guarantee protects, per person (`plainsight.audit.protection`): one line per method with a
    formal guarantee, one for all those without, and the corpus's privacy units where they were read."""
    rows = table.to_dict("records")
    unguarded = [row["Method"] for row in rows if _missing(row.get("privacy_unit"))]
    first = rows[0]
    units = (
        []
        if _missing(first.get("units"))
        else [
            units_line(
                UnitSizes(
                    int(first["units"]),
                    int(first["units_with_several_documents"]),
                    int(first["largest_unit_documents"]),
                    int(first["most_unit_segments"]),
                    bool(first["each_document_own_unit"]),
                )
            )
        ]
    )
    return [
        *(row["person_guarantee"] for row in rows if not _missing(row.get("privacy_unit"))),
        *([person_statement(", ".join(unguarded), PersonClaim(None))] if unguarded else []),
        *units,
    ]


def notes(table: pd.DataFrame, cost_header: str) -> list[str]:
    first = table.iloc[0]
    tables = f"results/tables/{first['dataset']}"  # where the tables this one reads lie, beside it
    return [
        f"Run: {first['dataset']} {first['setting']} {first['idset']} (Table 1's), seeds {first['seeds']} "
        "(`audit.seeds`); numbers are means over those seeds, the leak counts are pooled over them.",
        "Any-identifier leak: the share that holds a direct or quasi identifier of what the method saw "
        "(member) beside the same matcher on what it did not see (control), and their difference with "
        "one-sided 95% Clopper-Pearson bounds (docs/methods-and-metrics.md#held-out-control). In-context "
        "methods are counted per generation, each against as many unshown training segments of the same "
        "entity types (% of generations); trained and private-selection methods per distinct value: values "
        "found only in the training split against values found only in held-out (dev, test) segments (% of "
        "distinct values). A share of distinct values is not a share of generations: many generations may "
        "hold the same few values, as the privacy audit's any-identifier column (% of generations) shows.",
        "PIPP: the share of generations that leak a private value of the run's identifier set (Table 1). "
        "Text membership AUC: how well the nearest synthetic document's cosine tells the "
        "documents a method used from held-out ones, from the released text alone (0.5: chance). Nearest "
        "cosine: median cosine of a generation to its nearest real training segment beside that of a "
        "held-out real segment; a synthetic median above the held-out one means the corpus sits closer to "
        "its sources than unseen text. Verbatim: the share of generations that share a run of "
        "`audit.verbatim_ngram` words with a training segment (for trained and private-selection methods, "
        "the verdict's verbatim criterion compares shares of training and held-out segments copied "
        "instead).",
        "Downstream macro-F1: a classifier trained on the corpus and tested on real text, from "
        f"{tables}/utility_all_methods.csv (the configured methods at `utility.seeds`, the "
        f"private-selection ones at `private_selection.seeds`); {MISSING} where that table has no row "
        "for the method. MAUVE: against the real test "
        "segments (a private-selection method's texts are its corpus's).",
        "Formal epsilon: the epsilon that bounds the released corpus, with its delta and the record it "
        "protects, a privacy unit or a training segment (DP-SGD's accountant; a private-selection method's "
        "guarantee record), and the epsilon of a privacy unit that makes several such records; none for "
        "the other methods. "
        "Empirical epsilon: lower bounds from attacks; text: the any-identifier leak read as a membership "
        "attack; canaries: the released-text canary attacks' largest bound and the most their canaries "
        f"could show ({tables}/canaries.csv; {MISSING} for methods it does not run, and for every "
        "method where the run's dataset is not audited).",
        f"Verdict: the release verdict under `release.gate` from {tables}/privacy_audit.csv; † "
        "computed here by the same gate from the method's audit record, where that table has no row "
        "(criteria without evidence there, such as the canaries, stay INCONCLUSIVE).",
        f"{cost_header}: the benchmark seconds of the jobs that wrote the method's corpora (trained methods: "
        "their adapter's training too) per 1,000 documents in them.",
        *guarantee_notes(table),
        *protection_notes(table),
        *(
            [f"Formal claims against the leaks (`plainsight.audit.guarantee`): {'; '.join(claims)}."]
            if (claims := claim_checks(table))
            else []
        ),
    ]


def markdown(table: pd.DataFrame) -> str:
    cost_column, cost_header = cost_measure(table)
    header = [
        "Method",
        "Family",
        "Any-identifier leak: member vs control (% of what the cell names), excess [95% bounds]",
        "PIPP (% of generations)",
        "Text membership AUC (cosine)",
        "Nearest cosine: synthetic / held-out",
        "Verbatim (% of generations)",
        "Downstream macro-F1",
        "MAUVE",
        "Formal epsilon",
        "Empirical epsilon",
        "Verdict",
        cost_header,
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_cells(row, cost_column)) + " |" for row in table.to_dict("records")]
    bullets = [f"- {note}" for note in notes(table, cost_header)]
    return "\n".join(["# Methods side by side", "", *lines, "", *bullets]) + "\n"


@dataclass(frozen=True)
class MethodsTableFiles:
    """The files of rule `methods_table`. `runs`: the (method, seed) of each entry of the per-run lists,
    in order; `guarantees` and `benchmarks`: (method, path) pairs (an adapter folder holds its claim in
    training.json); `canaries`: the canary table of the run's dataset, or nothing where that dataset is not
    audited; `audit`: the privacy audit table, or nothing where the run is not audited; `docs`: the run's
    docs table, whose privacy units the guarantees are stated over (None: stated without them)."""

    runs: Sequence[Mapping[str, Any]]
    controls: Sequence[str]
    released: Sequence[str]
    summaries: Sequence[str]
    mauves: Sequence[str]
    corpora: Sequence[str]
    guarantees: Sequence[tuple[str, str]]
    benchmarks: Sequence[tuple[str, str]]
    utility: str
    canaries: Sequence[str] = ()
    audit: Sequence[str] = ()
    docs: str | None = None

    def paths(self) -> list[str]:
        per_run = [*self.controls, *self.released, *self.summaries, *self.mauves, *self.corpora]
        pairs = [path for _, path in (*self.guarantees, *self.benchmarks)]
        docs = [self.docs] if self.docs else []
        return [*per_run, *pairs, self.utility, *self.canaries, *self.audit, *docs]


def check_present(paths: Sequence[str]) -> None:
    """Every input exists: else one line naming the first that does not."""
    for path in paths:
        if not Path(path).exists():
            raise InputError(path, None, "no such file: the methods table reads it")


def benchmark_seconds(path: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one Snakemake benchmark file."""
    frame = read_benchmark(path, ("s", "cpu_time"))
    cpu, wall = (
        pd.to_numeric(frame[column], errors="coerce").fillna(0.0).sum() for column in ("cpu_time", "s")
    )
    return float(cpu), float(wall)


def read_cost(benchmarks: Sequence[str], corpora: Sequence[str]) -> Cost:
    seconds = [benchmark_seconds(path) for path in benchmarks]
    devices = [pd.read_parquet(path, columns=["device"])["device"] for path in corpora]
    return Cost(
        sum(cpu for cpu, _ in seconds),
        sum(wall for _, wall in seconds),
        sum(len(column) for column in devices),
        tuple(sorted({str(d) for column in devices for d in column})),
    )


def _of(method: str, pairs: Sequence[tuple[str, str]]) -> list[str]:
    return [path for name, path in pairs if name == method]


def read_method(files: MethodsTableFiles, method: str) -> MethodRecords:
    """One method's records over its seeds."""
    rows = [n for n, run in enumerate(files.runs) if run["method"] == method]
    mauves = [read_json(files.mauves[n]) for n in rows]
    return MethodRecords(
        method,
        tuple(int(files.runs[n]["seed"]) for n in rows),
        [read_json(files.controls[n]) for n in rows],
        [read_json(files.released[n]) for n in rows],
        [run_pipp(files.summaries[n]) for n in rows],
        [float(record["mauve"]) for record in mauves],
        [read_guarantee_record(path) for path in _of(method, files.guarantees)],
        read_cost(_of(method, files.benchmarks), [files.corpora[n] for n in rows]),
    )


def read_canary_evidence(paths: Sequence[str]) -> pd.DataFrame:
    """The evidence of the run's canary table (`canary_table.canary_evidence`); no rows where there is none
    (the run's dataset is not audited)."""
    if not paths:
        return canary_evidence(pd.DataFrame(columns=[*CANARY_KEYS, "repeats", "attack", *CANARY_BOUNDS]))
    (path,) = paths
    return canary_evidence(pd.read_csv(path))


def write_methods_table(
    files: MethodsTableFiles,
    run: Mapping[str, str],
    gate: Gate,
    display: Mapping[str, str],
    outputs: Mapping[str, str],
) -> pd.DataFrame:
    """Rule `methods_table`: read every method's records and the run's tables, write the table as CSV
    (`outputs["csv"]`) and as Markdown with its notes (`outputs["markdown"]`)."""
    check_present(files.paths())
    tables = RunTables(
        pd.read_csv(files.utility),
        read_canary_evidence(files.canaries),
        audit_verdicts(list(files.audit), run),
        unit_sizes(pd.read_parquet(files.docs, columns=list(UNIT_COLUMNS))) if files.docs else None,
    )
    methods = [read_method(files, method) for method in dict.fromkeys(r["method"] for r in files.runs)]
    table = methods_table(methods, run, tables, gate, display)
    with atomic_path(outputs["csv"]) as staged:
        table.to_csv(staged, index=False)
    write_text(markdown(table), outputs["markdown"])
    return table
