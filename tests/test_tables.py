"""Result tables: confidence half-widths, paper-ordered rows, Markdown, and the side-by-side with the
paper."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from conftest import RESOURCES
from plainsight.entities import IDENTIFIER_SETS
from plainsight.errors import InputError
from plainsight.report.table_format import (
    build_table,
    confidence_half_width,
    leak_definitions_note,
    markdown_table,
    regeneration_notes,
    versus_paper,
    write_table,
)
from plainsight.report.table_specs import load_table_specs

PAPER_TABLES = RESOURCES / "paper_tables.yaml"
# t_{0.975, 2} in closed form: with 2 degrees of freedom t_p = a * sqrt(2 / (1 - a^2)), a = 2p - 1,
# = 0.95 * sqrt(2 / 0.0975) = 4.30265272974946 (tables often print 4.303).
T_3_SEEDS = 0.95 * math.sqrt(2 / (1 - 0.95**2))
HW_SD1 = T_3_SEEDS * 1.0 / math.sqrt(3)  # half-width for three values with sample sd 1


@pytest.fixture(scope="module")
def specs() -> dict:
    return load_table_specs(PAPER_TABLES)


def test_confidence_half_width():
    assert confidence_half_width([1, 2, 3]) == pytest.approx(HW_SD1, rel=1e-12)
    assert confidence_half_width([5, 5, 5]) == 0.0
    assert confidence_half_width([1, math.nan, 2, 3]) == pytest.approx(HW_SD1, rel=1e-12)
    assert math.isnan(confidence_half_width([1.0]))
    assert math.isnan(confidence_half_width([]))


def summaries() -> pd.DataFrame:
    """Fine-tuning before ICL, to check rows follow the paper's order; segment 0 rows are noise."""
    rows = []
    for seed, (ft_pipp, icl_pipp, rouge2) in zip([1, 2, 3], [(1, 4, 0.1), (2, 5, 0.2), (3, 6, 0.3)]):
        for method, pipp in (("ft", ft_pipp), ("icl", icl_pipp)):
            averaged = {
                "method": method,
                "seed": seed,
                "segment": -1,
                "n_generations": 10,
                "pipp": pipp,
                "elp": 2.0,
                "partial_leak": 10.0 * pipp,
                "rouge2": rouge2,
                "rougeL": 0.5,
            }
            rows += [averaged, {**averaged, "segment": 0, "pipp": 99.0}]
    return pd.DataFrame(rows)


def test_build_table(specs):
    table = build_table(specs["tables"]["table1"], summaries(), specs["methods"])
    assert list(table.columns) == [
        "Method",
        "PIPP (% of generations)",
        "PIPP (% of generations) ±",
        "Partial leak (% of generations)",
        "Partial leak (% of generations) ±",
        "ELP (% of private values)",
        "ELP (% of private values) ±",
        "ROUGE-2",
        "ROUGE-2 ±",
        "ROUGE-L",
        "ROUGE-L ±",
        "Seeds",
    ]
    assert table["Method"].tolist() == ["ICL", "Fine-tuning"]
    icl, ft = table.to_dict("records")
    # ICL PIPP 4, 5, 6: mean 5, sd 1; ELP constant: half-width 0.
    assert icl["PIPP (% of generations)"] == pytest.approx(5.0)
    assert icl["PIPP (% of generations) ±"] == pytest.approx(HW_SD1)
    assert icl["Partial leak (% of generations)"] == pytest.approx(50.0)
    assert icl["Partial leak (% of generations) ±"] == pytest.approx(10 * HW_SD1)
    assert icl["ELP (% of private values)"] == pytest.approx(2.0)
    assert icl["ELP (% of private values) ±"] == 0.0
    assert icl["ROUGE-2"] == pytest.approx(0.2) and icl["ROUGE-2 ±"] == pytest.approx(0.1 * HW_SD1)
    assert ft["PIPP (% of generations)"] == pytest.approx(2.0)
    assert ft["PIPP (% of generations) ±"] == pytest.approx(HW_SD1)
    assert (icl["Seeds"], ft["Seeds"]) == (3, 3)


def test_build_table_without_partial_leak_and_with_one_seed(specs):
    one_seed = summaries().drop(columns="partial_leak").query("seed == 1")
    table = build_table(specs["tables"]["table1"], one_seed, specs["methods"])
    assert "Partial leak (% of generations)" not in table.columns
    assert table["Seeds"].tolist() == [1, 1]
    assert math.isnan(table["PIPP (% of generations) ±"][0])


def test_near_leaks_follow_partial_leaks_with_their_definition(specs):
    spec = specs["tables"]["table1"]
    frame = summaries().assign(near_leak=lambda f: 20.0 * f["pipp"])
    table = build_table(spec, frame, specs["methods"])
    assert list(table.columns[1:7]) == [
        "PIPP (% of generations)",
        "PIPP (% of generations) ±",
        "Partial leak (% of generations)",
        "Partial leak (% of generations) ±",
        "Near leak (% of generations)",
        "Near leak (% of generations) ±",
    ]
    assert table["Near leak (% of generations)"].tolist() == pytest.approx([100.0, 40.0])
    markdown = markdown_table(table, spec, leak_definitions_note(table))
    assert "| ICL | 5.00 ± 2.48 | 50.00 ± 24.84 | 100.00 ± 49.68 |" in markdown
    assert (
        "Partial leak (% of generations) and Near leak (% of generations): this project's additions"
        in markdown
    )
    with_documents = markdown_table(
        table.assign(**{"Documents (% of generations)": 90.0, "Documents (% of generations) ±": 1.0}), spec
    )
    assert (
        "Partial leak (% of generations), Near leak (% of generations) and Documents (% of generations): "
        "this project's additions" in with_documents
    )
    assert "- Near leak: a generation holds a private value or a name word, or a variant" in markdown


def test_regeneration_notes_count_documents_at_the_limit(specs):
    generations = pd.DataFrame(
        {
            "method": ["icl_pe"] * 4 + ["icl"] * 2,
            "regenerations": [0, 1, 3, 3, 0, 0],
            "hit_max_regenerations": [False, False, True, False, False, False],
        }
    )
    notes = regeneration_notes(generations, {"icl": "ICL", "icl_pe": "ICL w/ privacy enhancement"}, 3)
    assert notes == [
        "ICL w/ privacy enhancement: 1.75 regenerations per document on average; 1 of 4 still held "
        "a blocked value or a near variant after 3 regeneration(s)."
    ]


def test_build_table_rejects_methods_without_a_display_name(specs):
    with pytest.raises(ValueError, match="mystery"):
        build_table(specs["tables"]["table1"], summaries().assign(method="mystery"), specs["methods"])


def test_markdown_table(specs):
    spec = specs["tables"]["table1"]
    table = build_table(spec, summaries(), specs["methods"])
    markdown = markdown_table(table, spec)
    assert spec["title"] in markdown
    row = "| ICL | 5.00 ± 2.48 | 50.00 ± 24.84 | 2.00 ± 0.00 | 0.2000 ± 0.2484 | 0.5000 ± 0.0000 | 3 |"
    assert row in markdown
    assert "3 seeds" in markdown
    assert "Partial leak (% of generations): this project's additions" in markdown


def test_markdown_single_run_and_missing_cells(specs):
    spec = specs["tables"]["table1"]
    table = build_table(spec, summaries().query("seed == 1").drop(columns="partial_leak"), specs["methods"])
    table.loc[0, "ELP (% of private values)"] = math.nan
    markdown = markdown_table(table, spec)
    assert "| ICL | 4.00 | — | 0.1000 | 0.5000 | 1 |" in markdown
    assert "1 seed " in markdown and "Partial leak" not in markdown


def test_versus_paper(specs):
    spec = specs["tables"]["table1"]
    versus = versus_paper(build_table(spec, summaries(), specs["methods"]), spec, specs["methods"])
    assert versus.columns[:5].tolist() == [
        "Method",
        "PIPP (% of generations) ours",
        "PIPP (% of generations) ours ±",
        "PIPP (% of generations) paper",
        "PIPP (% of generations) paper ±",
    ]
    assert not any("Partial leak" in c for c in versus.columns)
    # every paper row is listed, in the paper's order, even those we did not run.
    assert versus["Method"].tolist() == [
        "Baseline",
        "DP-SGD",
        "ICL",
        "ICL w/ privacy enhancement",
        "Fine-tuning",
        "Fine-tuning w/ masking",
    ]
    rows = versus.set_index("Method")
    assert rows.loc["Baseline", "PIPP (% of generations) paper"] == 50.0
    assert rows.loc["Baseline", "PIPP (% of generations) paper ±"] == 2.20
    assert math.isnan(rows.loc["Baseline", "PIPP (% of generations) ours"])
    assert rows.loc["ICL", "PIPP (% of generations) ours"] == pytest.approx(5.0)
    assert rows.loc["ICL", "PIPP (% of generations) paper"] == 3.25
    assert rows.loc["Fine-tuning", "ROUGE-L paper"] == 0.133


def test_versus_paper_leaves_paper_cells_empty_where_the_paper_has_none(specs):
    spec = specs["tables"]["table14"]  # single runs, and no Baseline row
    ours = summaries().assign(method=lambda f: f["method"].replace({"ft": "baseline"}))
    versus = versus_paper(build_table(spec, ours, specs["methods"]), spec, specs["methods"]).set_index(
        "Method"
    )
    assert math.isnan(versus.loc["Baseline", "PIPP (% of generations) paper"])
    assert versus.loc["Baseline", "PIPP (% of generations) ours"] == pytest.approx(2.0)
    assert versus.loc["ICL", "PIPP (% of generations) paper"] == 31.36
    assert math.isnan(versus.loc["ICL", "PIPP (% of generations) paper ±"])


def test_paper_tables_yaml(specs):
    assert list(specs["methods"]) == [
        "baseline",
        "dpsgd",
        "icl",
        "icl_pe",
        "ft",
        "ft_mask",
        "rpsg",
        "aug_pe",
        "dp_topics",
        "base_model",
    ]
    assert list(specs["tables"]) == [
        "table1",
        "table2",
        "table3",
        "table4",
        "table5",
        "table6",
        "table14",
        "table15",
    ]
    for name, spec in specs["tables"].items():
        assert set(spec["paper"]) <= set(specs["methods"]), name
        assert spec["dataset"] in {"tab", "mimic"} and spec["idset"] in IDENTIFIER_SETS, name
        for cells in spec["paper"].values():
            assert set(cells) == set(spec["columns"]), name
        if spec.get("source") == "utility":
            assert spec["setting"] == ["known", "unknown"], name
            continue
        assert list(spec["columns"]) == ["pipp", "elp", "rouge2", "rougeL"], name
        assert spec["setting"] in {"known", "unknown"}, name
    assert specs["tables"]["table3"]["dataset"] == "mimic"
    assert specs["tables"]["table1"]["paper"]["baseline"]["pipp"] == [50.0, 2.20]
    assert specs["tables"]["table3"]["paper"]["ft"]["rougeL"] == [0.1526, None]
    assert specs["tables"]["table4"]["paper"]["icl_pe"]["perplexity_unknown"] == [14.2, None]
    assert specs["tables"]["table5"]["paper"]["icl_pe"]["elp"] == [0.82, None]
    assert specs["tables"]["table5"]["methods"] == ["icl", "icl_pe"]


def test_a_column_of_another_setting_is_rejected(tmp_path):
    path = tmp_path / "tables.yaml"
    path.write_text(
        "methods: {icl: ICL}\n"
        "tables:\n"
        "  t:\n"
        "    {title: T, dataset: tab, setting: [known], idset: direct, source: utility,\n"
        "     columns: {mauve_x: {label: M, metric: mauve, setting: unknown, decimals: 2}}, paper: {}}\n"
    )
    with pytest.raises(InputError, match="tables.t.columns.mauve_x"):
        load_table_specs(path)


def test_load_table_specs_names_the_bad_record(tmp_path):
    path = tmp_path / "tables.yaml"
    path.write_text(
        "methods: {icl: ICL}\n"
        "tables:\n"
        "  t:\n"
        "    {title: T, dataset: tab, setting: known, idset: direct,\n"
        "     columns: {pipp: {label: P, decimals: 2}}, paper: {ft: {pipp: [1, null]}}}\n"
    )
    with pytest.raises(InputError, match="tables.t.paper.ft"):
        load_table_specs(path)


def test_write_table(specs, tmp_path):
    spec = specs["tables"]["table1"]
    table = build_table(spec, summaries(), specs["methods"])
    versus = versus_paper(table, spec, specs["methods"])
    paths = tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "t_vs_paper.csv"
    write_table(table, markdown_table(table, spec), versus, *paths)
    assert pd.read_csv(paths[0])["Method"].tolist() == ["ICL", "Fine-tuning"]
    assert paths[1].read_text(encoding="utf-8").startswith("### ")
    assert pd.read_csv(paths[2])["PIPP (% of generations) paper"][0] == 50.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.md", "t_vs_paper.csv"]


def per_generation(method: str, leaks_by_seed: dict[int, list[bool]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "method": method,
                "seed": seed,
                "generation_id": i,
                "leaked": leaked,
                "elp": float(leaked),
                "n_private_values": 4,
                "leaked_values": [f"v{i}"] if leaked else [],
                "partial_leak": leaked,
                "rouge2": 0.1,
                "rougeL": 0.5,
                "is_document": True,
                "words": 50,
                "distinct2": 0.9,
            }
            for seed, leaks in leaks_by_seed.items()
            for i, leaked in enumerate(leaks)
        ]
    )


def test_pooled_intervals_and_documents_column(specs):
    from plainsight.evaluation.intervals import wilson_interval

    rows = summaries().assign(documents=100.0)
    generations = pd.concat(
        [
            per_generation("icl", {1: [True, False, False, False], 2: [False] * 4, 3: [False] * 4}),
            per_generation("ft", {1: [False] * 4, 2: [False] * 4, 3: [False] * 4}),
        ]
    )
    table = build_table(specs["tables"]["table1"], rows, specs["methods"], generations)
    icl = table.set_index("Method").loc["ICL"]
    # 1 leak in 12 generations pooled over the three seeds
    assert (
        icl["PIPP (% of generations) pooled low"],
        icl["PIPP (% of generations) pooled high"],
    ) == pytest.approx(tuple(100 * v for v in wilson_interval(1, 12)))
    assert icl["ROUGE-L pooled low"] == pytest.approx(0.5) and icl["Documents (% of generations)"] == 100.0
    markdown = markdown_table(table, specs["tables"]["table1"], ["a note"])
    low, high = (100 * v for v in wilson_interval(1, 12))
    assert f"| ICL | 5.00 ± 2.48 [{low:.2f}, {high:.2f}] |" in markdown
    assert "Wilson score" in markdown and "- a note" in markdown


def test_notes_with_known_answers(specs):
    from plainsight.report.table_format import (
        document_warnings,
        dp_notes,
        paired_notes,
        presidio_note,
        protocol_notes,
    )

    table = pd.DataFrame({"Method": ["ICL", "DP-SGD"], "Documents (% of generations)": [95.0, 37.5]})
    assert document_warnings(table, 80) == [
        "Warning: DP-SGD: 37.5% of the generations are documents (under 80%); its leak rates and ROUGE are "
        "over text that is often not a document."
    ]
    notes = protocol_notes({"icl", "ft_mask", "base_model"})
    assert len(notes) == 2 and "Appendix B" in notes[0] and "whole fine-tuning set" in notes[1]
    [selection] = protocol_notes({"rpsg", "aug_pe.large"})
    assert "training split" in selection and "rewrites one private seed" in selection
    generations = pd.concat(
        [per_generation("icl", {1: [True, True, False]}), per_generation("icl_pe", {1: [False, True, False]})]
    )
    [paired] = paired_notes(generations, [["icl", "icl_pe"], ["baseline", "icl"]], specs["methods"])
    assert "paired over 3 generations" in paired and "1 leak only under ICL," in paired
    assert "0 only under ICL w/ privacy enhancement (exact McNemar p = 1)" in paired
    record = {
        "epsilon": 7.996,
        "delta": 1e-5,
        "privacy_unit": "document",
        "units": 60,
        "noise_multiplier": 1.2345,
    }
    assert dp_notes([record, {**record, "epsilon": 7.999}]) == [
        "DP-SGD: epsilon 8.00 at delta 1e-05 per privacy unit (60 privacy units), noise multiplier 1.234, "
        "over 2 run(s)."
    ]
    # `dpsgd.privacy_unit: sequence` makes every training segment its own unit
    assert dp_notes([{**record, "privacy_unit": "sequence", "units": 90}])[0].startswith(
        "DP-SGD: epsilon 8.00 at delta 1e-05 per training segment (90 training segments)"
    )
    assert presidio_note("known", []) == []
    assert "only, as in the paper" in presidio_note("unknown", [])[0]
    assert "application_number" in presidio_note(["known", "unknown"], ["application_number"])[0]


def test_paired_methods_must_be_listed(tmp_path, specs):
    import yaml

    broken = {
        "methods": specs["methods"],
        "tables": {"table1": {**specs["tables"]["table1"], "paired": [["icl", "x"]]}},
    }
    path = tmp_path / "tables.yaml"
    path.write_text(yaml.safe_dump(broken), encoding="utf-8")
    with pytest.raises(InputError, match="paired"):
        load_table_specs(path)


def test_make_table_from_the_runs_files(specs, tmp_path):
    """Rule `table`'s function: one summary file per run (a model variant shows as its method), their
    generations, and the outputs as the parts build them."""
    from plainsight.report.paper_table import TableOutputs, TableRuns, TableSettings, make_table

    rows = summaries().assign(documents=100.0)
    rows.loc[rows["method"] == "icl", "method"] = "icl.large"
    generations = pd.concat(
        [
            per_generation("icl.large", {1: [True, False], 2: [False] * 2, 3: [False] * 2}),
            per_generation("ft", {1: [False] * 2, 2: [False] * 2, 3: [False] * 2}),
        ]
    )
    runs = []
    for (method, seed), frame in rows.groupby(["method", "seed"]):
        runs.append(str(tmp_path / f"{method}_{seed}_summary.parquet"))
        frame.to_parquet(runs[-1])
    generation_files = []
    for (method, seed), frame in generations.groupby(["method", "seed"]):
        generation_files.append(str(tmp_path / f"{method}_{seed}.parquet"))
        frame.to_parquet(generation_files[-1])
    outputs = TableOutputs(*(str(tmp_path / name) for name in ("t.csv", "t.md", "t_vs_paper.csv")))
    make_table(
        PAPER_TABLES,
        "table1",
        TableRuns(runs, generation_files),
        TableSettings(["icl.large", "ft"], 3, 80.0),
        outputs,
    )
    expected = build_table(
        specs["tables"]["table1"],
        rows.assign(method=rows["method"].str.replace(".large", "")),
        specs["methods"],
        generations.assign(method=generations["method"].str.replace(".large", "")),
    )
    written = pd.read_csv(outputs.csv)
    assert written["Method"].tolist() == ["ICL", "Fine-tuning"]
    assert written["PIPP (% of generations)"].tolist() == pytest.approx(
        expected["PIPP (% of generations)"].tolist()
    )
    markdown = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert markdown.startswith("### ") and "Wilson score" in markdown


def test_adherence_note_per_method(specs):
    from plainsight.report.table_format import adherence_notes

    generations = pd.DataFrame(
        {
            "method": ["icl", "icl", "baseline"],
            "adherence_exact": [1.0, 0.5, math.nan],
            "adherence_near": [1.0, 0.75, math.nan],
            "adherence_types": [1.0, 1.0, math.nan],
        }
    )
    [note] = adherence_notes(generations, {"baseline": "Baseline", "icl": "ICL"})
    assert note.endswith("ICL 75% / 88% / 100%.")
    assert "Baseline" not in note
    assert adherence_notes(generations.drop(columns=["adherence_exact"]), {"icl": "ICL"}) == []


def test_phantom_notes_give_the_control_rate_beside_each_leak_column():
    from plainsight.report.table_format import phantom_notes, phantom_shares

    def record(method, exact_hits, control_hits, design="paired"):
        counts = {"member_hits": exact_hits, "members": 10, "control_hits": control_hits, "controls": 10}
        empty = {"member_hits": 0, "members": 0, "control_hits": 0, "controls": 0}
        measures = {"exact": counts, "partial": empty, "near": counts}
        return {"method": method, "design": design, "measures": measures}

    records = [record("icl", 4, 1), record("icl", 2, 2)]  # pooled: 6 of 20 against 3 of 20
    assert phantom_shares(records, "icl") == {"exact": (0.3, 0.15), "near": (0.3, 0.15)}
    (note,) = phantom_notes(records, {"icl": "ICL", "ft": "Fine-tuning"})
    assert (
        "ICL: PIPP 30% vs 15% of generations (phantom 50%), near leak 30% vs 15% of generations "
        "(phantom 50%)." in note
    )
    assert "Fine-tuning" not in note
    # a fine-tuned row counts distinct values, not the generations its columns count: the note says so
    (trained,) = phantom_notes([record("ft", 1, 0, "unpaired")], {"ft": "FT"})
    assert (
        "FT: PIPP 10% vs 0% of distinct values (phantom 0%), near leak 10% vs 0% of distinct values "
        in trained
    )
    assert "not of generations as in its columns above" in trained
    assert phantom_notes([record("ft", 0, 3, "unpaired")], {"ft": "FT"})[0].count("phantom -") == 2
