"""config/decide.yaml, merged over config/config.yaml as Snakemake merges them: its gate is the default's,
untouched, and its samples are those the evidence plan says decide each criterion; rule all on it builds
the generated corpus, the canary audit and a release bundle per method."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from plainsight.audit.criteria import Gate
from plainsight.audit.evidence_plan import formal_epsilons
from plainsight.audit.sample_sizes import documents_to_pass, leak_effect, sample_to_decide, texts_to_decide
from plainsight.data.ingest import coin_split
from plainsight.methods import registry
from plainsight.settings import Settings
from test_workflow import merged, planned_rules

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
DECIDE = "config/decide.yaml"


def load_yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def default():
    config = load_yaml(REPO / "config/config.yaml")
    validate(config, str(SCHEMA))
    return config


def overlaid(config: dict, overlay: str) -> dict:
    """`overlay` merged over `config` as Snakemake merges config files, checked against the schema."""
    merged_config = merged(config, load_yaml(REPO / overlay))
    validate(merged_config, str(SCHEMA))
    return merged_config


@pytest.fixture(scope="module")
def decide(default):
    return overlaid(default, DECIDE)


def test_the_gate_is_the_defaults(default, decide):
    """The profile changes samples, never a threshold, a criterion or the threat model."""
    assert decide["release"]["gate"] == default["release"]["gate"]
    assert decide["metrics"] == default["metrics"]


def test_the_methods_hold_a_failing_baseline_and_one_guarantee_the_gate_can_accept(decide):
    methods = decide["methods"]
    assert {"baseline", "icl_pe"} <= set(methods)
    assert any(registry.method(name).family == "trained" for name in methods)
    gate = Gate.from_config(decide["release"]["gate"])
    # only a formal epsilon at or under the gate's maximum can PASS `epsilon`: one method has it
    assert [
        name
        for name, epsilon in formal_epsilons(Settings.from_config(decide)).items()
        if epsilon <= gate.epsilon_max
    ] == ["dpsgd"]


def test_in_context_generations_decide_the_leak_criteria(decide):
    """Per method and seed: enough for the gate to PASS with no leak and to FAIL at three times the
    threshold, each with probability 0.8, for the strictest threshold of the leak criteria."""
    gate = decide["release"]["gate"]
    threshold = min(gate["leak_excess_max"], gate["unit_linkage_excess_max"], gate["verbatim_excess_max"])
    generations = decide["generation"]["generations_per_segment"] * len(decide["datasets"]["tab"]["segments"])
    assert generations >= sample_to_decide(0.0, threshold) == 72
    assert generations >= sample_to_decide(leak_effect(threshold), threshold) == 141
    assert decide["prefix_tuning"]["generations"] >= generations


def test_the_corpus_gives_the_trained_and_text_criteria_their_samples(decide, tmp_path):
    """The documents the coin draws into each split of the generated corpus (one privacy unit each): the
    trained methods' bounds count documents on each side, the re-identification attack documents, the
    other text attacks segments; each side holds what the gate needs to decide with probability 0.8."""
    pytest.importorskip("faker")
    gate = decide["release"]["gate"]
    dataset = decide["datasets"]["tab"]
    sys.path.insert(0, str(REPO / "tools/demo_corpora"))
    try:
        from make_demo_corpora import write_tab_of_size
    finally:
        sys.path.remove(str(REPO / "tools/demo_corpora"))
    write_tab_of_size(dataset["documents"], tmp_path)
    drawn = coin_split(dataset)
    splits = Counter(
        drawn(doc["doc_id"])
        for split in dataset["documents"]
        for doc in json.loads((tmp_path / f"echr_{split}.json").read_text(encoding="utf-8"))
    )
    assert splits == {"train": 143, "dev": 90, "test": 67}
    members, held_out = splits["train"], splits["dev"] + splits["test"]
    assert min(members, held_out) >= documents_to_pass(gate["leak_excess_max"]) == 72
    assert min(members, held_out) >= texts_to_decide(0.5, gate["text_membership_auc_max"]) == 134
    ranges = len(dataset["segments"])
    assert decide["resources"]["planned_segments"]["tab"] == {s: ranges * n for s, n in splits.items()}


def test_the_decisive_target_builds_the_corpus_canaries_and_a_bundle_per_method(tmp_path, decide):
    # the folder `make decide` runs in: the workflow, config and resources linked, its results its own
    workdir = tmp_path / "runs/decide"
    subprocess.run(["make", "--silent", "-C", str(REPO), "decide-dir", f"DECIDE_DIR={workdir}"], check=True)
    assert {p.name: p.resolve() for p in workdir.iterdir()} == {
        name: REPO / name for name in ("workflow", "config", "resources")
    }
    planned = planned_rules(workdir, "--configfile", DECIDE)
    methods = len(decide["methods"])
    assert planned["generate_tab"] == planned["ingest"] == 1
    assert planned["canary_table"] == 1 and planned["canary_attacks"] == methods
    assert planned["release_bundle"] == planned["release_audit"] == methods
    assert planned["generate_icl"] == 2 and planned["train_adapter"] == 1


FULL_BLOCKING = "config/decide-full-blocking.yaml"


@pytest.fixture(scope="module")
def full_blocking(decide):
    return overlaid(decide, FULL_BLOCKING)


def test_full_blocking_changes_the_identifiers_blocked_and_the_policy_only(decide, full_blocking):
    """ICL-PE's codes, hence what it blocks, hold direct and quasi identifiers; the corpus, the samples
    and every threshold stay the decisive profile's, and the policy lets empirical evidence alone PASS."""
    gate = dict(full_blocking["release"]["gate"])
    assert gate.pop("policy") == "empirical_evidence" != decide["release"]["gate"]["policy"]
    assert gate == {key: value for key, value in decide["release"]["gate"].items() if key != "policy"}
    assert full_blocking["methods"] == ["icl_pe"]
    assert full_blocking["identifier_sets"] == full_blocking["audit"]["identifier_sets"] == ["both"]
    assert [run["idset"] for run in full_blocking["utility"]["runs"]] == ["both"]
    for key in ("datasets", "generation", "metrics", "seeds", "settings"):
        assert full_blocking[key] == decide[key], key


def test_the_full_blocking_target_audits_and_bundles_icl_pe_alone(tmp_path):
    workdir = tmp_path / "runs/decide-full-blocking"
    subprocess.run(["make", "--silent", "-C", str(REPO), "decide-dir", f"DECIDE_DIR={workdir}"], check=True)
    bundle = "results/release/tab/known/both/icl_pe"
    targets = (
        "results/tables/tab/privacy_audit.csv",
        f"{bundle}/README.md",
        f"{bundle}/custodian/SUMMARY.md",
    )
    planned = planned_rules(workdir, *targets, "--configfile", DECIDE, FULL_BLOCKING)
    assert planned["generate_icl"] == planned["release_bundle"] == planned["canary_table"] == 1
    assert "train_adapter" not in planned and "generate_trained" not in planned
