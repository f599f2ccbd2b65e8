"""RPSG, Aug-PE and the DP topic histogram through the real rules with the tiny model: their corpora,
guarantee records and benchmarks, the privacy metrics, Table 1 and the utility record on them, their
audit and the methods table beside the configured methods; results/tables/all builds them, rule all
does not."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from plainsight.generation.corpus import CORPUS_COLUMNS
from test_workflow import make_workdir, planned_rules, snakemake, tiny_overlay, write_overlay

pytestmark = pytest.mark.workflow

RUN = "results/tab/known/direct"
METHODS = ("rpsg", "aug_pe", "dp_topics")


@pytest.fixture(scope="module")
def selection_dir(tmp_path_factory, tiny_model_dir):
    workdir = make_workdir(tmp_path_factory.mktemp("private_selection"))
    write_overlay(workdir, "tiny.yaml", tiny_overlay(tiny_model_dir))
    targets = [f"{RUN}/metrics/{method}/seed1_summary.parquet" for method in METHODS]
    snakemake(workdir, *targets, f"{RUN}/utility/aug_pe/seed1.json", "--configfile", "tiny.yaml")
    return workdir


def test_both_corpora_have_the_corpus_columns_and_a_benchmark(selection_dir):
    docs = pd.read_parquet(selection_dir / "results/tab/docs.parquet")
    train = set(docs.loc[docs["split"] == "train", "doc_id"])
    for method in METHODS:
        corpus = pd.read_parquet(selection_dir / f"{RUN}/synthetic/{method}/seed1.parquet")
        assert list(corpus.columns) == list(CORPUS_COLUMNS)
        assert set(corpus["method"]) == {method} and set(corpus["segment"]) <= {0, 1}
        assert (
            selection_dir / f"results/benchmarks/generate_private_selection/tab_known_direct_{method}_1.tsv"
        ).is_file()
    rewrites = pd.read_parquet(selection_dir / f"{RUN}/synthetic/rpsg/seed1.parquet")
    # 2 seeds per range; the cosine filter keeps floor(0.8 x 4) = 3, the NLL filter fewer
    assert 1 <= len(rewrites) <= 3 and all(ids[0] in train for ids in rewrites["context_doc_ids"])
    evolved = pd.read_parquet(selection_dir / f"{RUN}/synthetic/aug_pe/seed1.parquet")
    assert sorted(evolved["segment"]) == [0, 0, 1, 1] and evolved["context_doc_ids"].map(len).eq(0).all()
    topics = pd.read_parquet(selection_dir / f"{RUN}/synthetic/dp_topics/seed1.parquet")
    assert sorted(topics["segment"]) == [0, 0, 1, 1] and topics["context_doc_ids"].map(len).eq(0).all()


def test_the_guarantee_records_state_what_they_cover(selection_dir):
    rpsg = json.loads(
        (selection_dir / f"{RUN}/synthetic/rpsg/seed1_privacy.json").read_text(encoding="utf-8")
    )
    assert rpsg["epsilon"] == 4.0 and rpsg["release_epsilon"] is None and rpsg["seeds"] == 4
    assert "one-to-one rewrite" in rpsg["not_covered"] and 1 <= rpsg["largest_unit_seeds"] <= rpsg["seeds"]
    aug_pe = json.loads(
        (selection_dir / f"{RUN}/synthetic/aug_pe/seed1_privacy.json").read_text(encoding="utf-8")
    )
    assert 4.0 * 0.99 <= aug_pe["release_epsilon"] == aug_pe["epsilon_spent"] <= 4.0
    assert aug_pe["rounds"] == 2 and aug_pe["privacy_unit"].startswith("one privacy unit")
    topics = json.loads(
        (selection_dir / f"{RUN}/synthetic/dp_topics/seed1_privacy.json").read_text(encoding="utf-8")
    )
    assert 4.0 * 0.99 <= topics["release_epsilon"] == topics["epsilon_spent"] <= 4.0 and topics["rounds"] == 1
    # two topics per range, the range's two texts shared out over them
    assert [(t["segment"], t["topic"]) for t in topics["topics"]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [sum(t["texts"] for t in topics["topics"] if t["segment"] == s) for s in (0, 1)] == [2, 2]


def test_leaks_are_counted_against_the_whole_training_split(selection_dir):
    for method in METHODS:
        generations = pd.read_parquet(selection_dir / f"{RUN}/metrics/{method}/seed1.parquet")
        assert generations["n_private_values"].nunique() == 1 and generations["n_private_values"].iloc[0] > 0
        control = json.loads(
            (selection_dir / f"{RUN}/metrics/{method}/seed1_control.json").read_text("utf-8")
        )
        assert control["design"] == "unpaired"


def test_the_utility_record_and_table1_read_them(selection_dir):
    utility = json.loads((selection_dir / f"{RUN}/utility/aug_pe/seed1.json").read_text(encoding="utf-8"))
    assert utility["mauve_p_samples"] == 4  # its four texts, two per range, for the demo's test segments
    write_overlay(selection_dir, "methods.yaml", {"methods": list(METHODS)})
    snakemake(selection_dir, "results/tables/tab/table1.csv", "--configfile", "tiny.yaml", "methods.yaml")
    table = pd.read_csv(selection_dir / "results/tables/tab/table1.csv")
    assert list(table["Method"]) == ["RPSG", "Aug-PE", "DP topics (CTCL-style)"]
    assert (table["Seeds"] == 2).all()


def test_results_tables_all_builds_them_and_rule_all_does_not(selection_dir):
    tables = planned_rules(selection_dir, "results/tables/all", "--configfile", "tiny.yaml")
    everything = planned_rules(selection_dir, "--configfile", "tiny.yaml")
    assert "generate_private_selection" not in everything
    assert tables.get("generate_private_selection", 0) == 0  # seed 1 of each is built already
    write_overlay(selection_dir, "seeds.yaml", {"private_selection": {"seeds": [1, 3]}})
    more = planned_rules(selection_dir, "results/tables/all", "--configfile", "tiny.yaml", "seeds.yaml")
    assert more["generate_private_selection"] == len(METHODS)


def test_a_method_setting_reruns_that_method_only(selection_dir):
    targets = [f"{RUN}/synthetic/{method}/seed1.parquet" for method in METHODS]
    write_overlay(selection_dir, "epsilon.yaml", {"rpsg": {"epsilon": 2.0}})
    planned = planned_rules(selection_dir, *targets, "--configfile", "tiny.yaml", "epsilon.yaml")
    assert planned == {"generate_private_selection": 1}
    write_overlay(selection_dir, "bad.yaml", {"aug_pe": {"rounds": 0}})
    failed = snakemake(selection_dir, *targets, "--configfile", "tiny.yaml", "bad.yaml", check=False)
    assert failed.returncode != 0 and "rounds" in failed.stderr


@pytest.fixture(scope="module")
def side_by_side(selection_dir) -> tuple[str, ...]:
    """Config arguments of a run with two configured methods beside RPSG and Aug-PE."""
    # the tiny random model is near uniform: its canary suffixes reach perplexity 600, not the shipped 1000
    design = (selection_dir / "resources/canaries.yaml").read_text(encoding="utf-8")
    (selection_dir / "canary_design.yaml").write_text(
        design.replace("target_perplexity: 1000", "target_perplexity: 600"), encoding="utf-8"
    )
    overlay = {"methods": ["icl", "dpsgd"], "audit": {"canaries": {"file": "canary_design.yaml"}}}
    write_overlay(selection_dir, "side_by_side.yaml", overlay)
    return ("--configfile", "tiny.yaml", "side_by_side.yaml")


def test_the_methods_table_sets_them_beside_the_configured_methods(selection_dir, side_by_side):
    configs = side_by_side
    snakemake(selection_dir, "results/tables/tab/methods.md", *configs)
    table = pd.read_csv(selection_dir / "results/tables/tab/methods.csv").set_index("method")
    assert list(table.index) == ["icl", "dpsgd", *METHODS]
    assert list(table["family"]) == ["in_context", "trained", *["private_selection"] * 3]
    assert list(table["leak_design"]) == ["paired", *["unpaired"] * 4]
    configured, selected = table.loc[["icl", "dpsgd"]], table.loc[list(METHODS)]
    # the privacy audit table gives the configured methods' verdicts; the gate, the others'
    assert set(configured["verdict_source"]) == {"privacy audit table"}
    assert set(selected["verdict_source"]) == {"audit record"}
    assert set(table["verdict"]) <= {"PASS", "FAIL", "INCONCLUSIVE", "NOT RELEASABLE BY POLICY"}
    # the all-methods utility table measures every corpus, the private-selection ones too
    assert table["macro_f1"].between(0, 1).all()
    assert configured["canary_epsilon"].notna().all() and selected["canary_epsilon"].isna().all()
    assert 0 < table.loc["dpsgd", "release_epsilon"] == table.loc["dpsgd", "formal_epsilon"] <= 8.0 * 1.01
    assert table.loc["rpsg", "formal_epsilon"] == 4.0 and pd.isna(table.loc["rpsg", "release_epsilon"])
    assert table.loc[["aug_pe", "dp_topics"], "release_epsilon"].between(4.0 * 0.99, 4.0).all() and pd.isna(
        table.loc["icl", "formal_epsilon"]
    )
    for column in ("mauve", "text_mia_auc_cosine", "dcr_synthetic_median"):
        assert table[column].notna().all() and table[column].between(0, 1).all(), column
    assert table["pipp"].between(0, 100).all()
    assert (table["cpu_seconds_per_1000_documents"] > 0).all() and set(table["device"]) == {"cpu"}
    markdown = (selection_dir / "results/tables/tab/methods.md").read_text(encoding="utf-8")
    assert "CPU s / 1,000 documents (on cpu)" in markdown and "RPSG: its epsilon 4.00 covers" in markdown
    rpsg_row = next(line for line in markdown.splitlines() if line.startswith("| RPSG |"))
    assert "none for the release (4.00 per selection" in rpsg_row
    # Aug-PE's, the topic histogram's and DP-SGD's claims bound their releases and are tested against
    # their leaks; RPSG's is not
    assert table.loc[["dpsgd", "aug_pe", "dp_topics"], "dp_null_p_value"].between(0, 1).all()
    assert table.loc[["icl", "rpsg"], "dp_epsilon"].isna().all()
    assert "Formal claims against the leaks" in markdown and "Aug-PE (epsilon" in markdown
    # the private-selection corpora have their own audit job, and no positive control of their own
    records = [selection_dir / f"{RUN}/audit/{method}/seed1_released.json" for method in METHODS]
    assert all(json.loads(path.read_text(encoding="utf-8"))["generations"] > 0 for path in records)
    assert planned_rules(selection_dir, "results/tables/tab/methods.md", *configs) == {}


def test_the_all_methods_page_and_bundle_show_them(selection_dir, side_by_side):
    configs = side_by_side
    page = "results/review/tab/known/direct/all_methods"
    bundle = "results/release/tab/known/direct/aug_pe/custodian/EVIDENCE.md"
    snakemake(selection_dir, f"{page}/index.html", f"{page}/comments.parquet", bundle, *configs)
    shown = sorted(path.name for path in (selection_dir / page / "data").glob("corpus_*.js"))
    methods = ("aug_pe", "dp_topics", "dpsgd", "icl", "rpsg")
    assert shown == [f"corpus_{method}_seed1.js" for method in methods]
    html = (selection_dir / page / "index.html").read_text(encoding="utf-8")
    manifest = json.loads(
        html.split('<script id="manifest" type="application/json">')[1].split("</script>")[0]
    )
    verdicts = {entry["method"]: entry["verdict"] for entry in manifest["audit"]["methods"]}
    # the audit table's verdicts for the configured methods, the methods table's for the others
    assert set(verdicts) == {"icl", "dpsgd", *METHODS} and set(verdicts.values()) <= {
        "PASS",
        "FAIL",
        "INCONCLUSIVE",
        "NOT RELEASABLE BY POLICY",
    }
    # rule all's page keeps the configured methods: the demo never waits for the training-free generators
    assert "review_page_all_methods" not in planned_rules(selection_dir, *configs)
    # the bundle holds the method's own seeds (`private_selection.seeds`), whatever `seeds` says
    write_overlay(selection_dir, "two_seeds.yaml", {"seeds": [1, 2]})
    assert "generate_private_selection" not in planned_rules(
        selection_dir, bundle, *configs, "two_seeds.yaml"
    )
    card = (selection_dir / bundle).read_text(encoding="utf-8")
    # its utility is the all-methods measures' row of its run (the card's short table, the full row in
    # custodian/utility.csv), its settings its own block's
    utility = pd.read_csv(selection_dir / "results/release/tab/known/direct/aug_pe/custodian/utility.csv")
    assert "## Utility" in card and "aug_pe" in set(utility["method"])
    assert "rounds 2" in card and "context_documents" not in card
    # its verdict is its own audit's, of the texts it ships; the methods table's, of the corpus as
    # written, beside it
    audit = "results/tab/known/direct/release/aug_pe/audit.json"
    assert f"this bundle ships (4 of seed 1), {audit})" in card
    assert "Before the filter, the run's audit gives " in card and "results/tables/tab/methods.csv" in card
