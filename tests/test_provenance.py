"""Privacy provenance: every path from a private file to the corpus of a method with a formal guarantee
passes through a registered mechanism, on the workflow's own DAG (built by Snakemake, no job run)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from plainsight.accounting import gaussian_noise_multiplier
from plainsight.audit.guarantee import bundle_accounting, composed_guarantee, read_bundle_accounting
from plainsight.audit.provenance import (
    PROVENANCE,
    Job,
    Provenance,
    mechanism_records,
    mechanisms_behind,
    pattern_regex,
    unaccounted_paths,
    workflow_jobs,
)
from plainsight.report.release_card import accounting_notes

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "provenance_codes_from_real_segments.yaml"
CORPUS = "results/tab/known/direct/synthetic/dpsgd/seed1.parquet"
RELEASED = "results/tab/known/direct/released_codes/dpsgd"
DATA_FILE = "results/release/tab/known/direct/dpsgd/synthetic.jsonl"
CARD = "results/release/tab/known/direct/dpsgd/README.md"
# what leaves with a bundle: every file of its public part
PUBLIC_FILES = ("synthetic.jsonl", "README.md")


@pytest.fixture(scope="module")
def provenance() -> Provenance:
    return Provenance.from_yaml(ROOT / PROVENANCE)


def fixture_jobs() -> list[Job]:
    entries = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    return [Job(e["rule"], e["wildcards"], tuple(e["inputs"]), tuple(e["outputs"])) for e in entries]


def released_design(jobs: list[Job]) -> list[Job]:
    """The fixture with the corpus written from released codes: the pattern mechanism reads the real
    codes, the seed's codes are drawn from its output and the public pools."""
    wildcards = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "dpsgd"}
    mechanism = Job(
        "release_code_patterns",
        wildcards,
        ("results/tab/docs.parquet", "results/tab/known/direct/codes.parquet"),
        (f"{RELEASED}/patterns.parquet", f"{RELEASED}/patterns.json"),
    )
    draws = Job(
        "released_codes",
        {**wildcards, "seed": "1"},
        (f"{RELEASED}/patterns.parquet", f"{RELEASED}/patterns.json", "resources/fictional_pools.yaml"),
        (f"{RELEASED}/seed1.parquet",),
    )
    corpus = next(job for job in jobs if job.rule == "generate_trained")
    written = replace(corpus, inputs=(corpus.inputs[0], f"{RELEASED}/seed1.parquet"))
    return [job for job in jobs if job is not corpus] + [mechanism, draws, written]


def test_a_path_pattern_matches_one_path_segment_per_wildcard():
    regex = pattern_regex("results/{dataset}/{setting}/{idset}/codes.parquet")
    assert regex.fullmatch("results/tab/known/direct/codes.parquet")
    assert not regex.fullmatch("results/tab/known/direct/extra/codes.parquet")
    assert not regex.fullmatch("results/tab/known/direct/codes.parquet.bak")


def test_the_registry_declares_the_private_files_and_release_mechanisms(provenance):
    assert provenance.is_private("results/tab/spans.parquet")
    assert provenance.is_private("results/mimic/known/both/codes.parquet")
    assert not provenance.is_private("resources/fictional_pools.yaml")
    methods = ["baseline", "ft", "dpsgd", "rpsg", "aug_pe", "dp_topics"]
    assert provenance.guaranteed_methods(methods) == ["dpsgd", "aug_pe", "dp_topics"]


def test_codes_from_real_segments_leave_an_unaccounted_path(provenance):
    paths = unaccounted_paths(fixture_jobs(), provenance, [CORPUS, DATA_FILE, CARD])
    assert set(paths) == {CORPUS, DATA_FILE, CARD}
    path = paths[CORPUS]
    assert provenance.is_private(path[0]) and path[-1] == CORPUS
    assert "results/tab/known/direct/models/dpsgd/seed1" not in path  # the adapter is accounted
    for public in (DATA_FILE, CARD):
        assert provenance.is_private(paths[public][0]) and paths[public][-1] == public


def test_released_codes_alone_leave_the_data_file_and_card_written_from_private_inputs_unaccounted(
    provenance,
):
    jobs = released_design(fixture_jobs())
    # the fixture's bundle rule writes both from the spans and the documents, beside the corpus
    assert set(unaccounted_paths(jobs, provenance, [CORPUS, DATA_FILE, CARD])) == {DATA_FILE, CARD}
    assert unaccounted_paths(jobs, provenance, [CARD])[CARD][0] in {
        "results/tab/spans.parquet",
        "results/tab/docs.parquet",
    }


def test_released_codes_account_for_every_path_and_name_both_mechanisms(provenance):
    jobs = released_design(fixture_jobs())
    assert unaccounted_paths(jobs, provenance, [CORPUS]) == {}
    assert [name for name, _ in mechanisms_behind(jobs, provenance, CORPUS)] == ["code_patterns", "dp_sgd"]


def test_a_target_no_job_writes_is_an_error(provenance):
    with pytest.raises(ValueError, match="no job of the DAG writes"):
        unaccounted_paths(fixture_jobs(), provenance, ["results/tab/nowhere.parquet"])


def test_the_composed_guarantee_is_the_accountants_not_the_sum():
    from opacus.accountants.utils import get_noise_multiplier

    training_noise = get_noise_multiplier(
        target_epsilon=6.0, target_delta=1e-5, sample_rate=0.25, steps=40, accountant="prv"
    )
    training = {
        "epsilon": 6.0,
        "delta": 1e-5,
        "noise_multiplier": training_noise,
        "sample_rate": 0.25,
        "steps": 40,
    }
    codes = {"epsilon": 2.0, "delta": 1e-5, "noise_multiplier": gaussian_noise_multiplier(2.0, 1e-5)}
    total = composed_guarantee([training, codes])
    assert total["delta"] == 1e-5 and total["basic_composition_epsilon"] == 8.0
    assert 6.0 < total["epsilon"] < 8.0 * 0.95  # tighter than the sum by more than rounding
    assert composed_guarantee([training])["epsilon"] == pytest.approx(6.0, rel=0.01)
    with pytest.raises(ValueError, match="no mechanism record"):
        composed_guarantee([])


def profile_targets(configfiles: list[Path], provenance: Provenance) -> list[str]:
    """What ships of every guaranteed method of a profile's Table 1 run: each file of its bundle's public
    part, and its corpora (Table 1's methods over `seeds`, the private-selection methods over theirs)."""
    config: dict = {}
    for path in [ROOT / "config" / "config.yaml", *configfiles]:
        merge(config, yaml.safe_load(path.read_text(encoding="utf-8")))
    run = "results/tab/known/direct"
    trained = provenance.guaranteed_methods(config["methods"])
    selected = provenance.guaranteed_methods(config["private_selection"]["methods"])
    corpora = [f"{run}/synthetic/{m}/seed{s}.parquet" for m in trained for s in config["seeds"]] + [
        f"{run}/synthetic/{m}/seed{s}.parquet" for m in selected for s in config["private_selection"]["seeds"]
    ]
    return corpora + [
        f"results/release/tab/known/direct/{m}/{public}"
        for m in trained + selected
        for public in PUBLIC_FILES
    ]


def merge(base: dict, update: dict) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value


PROFILES = {
    "default": [],
    "decide": [ROOT / "config" / "decide.yaml"],
    "paper": [ROOT / "config" / "paper.yaml"],
}


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_path_to_what_a_guaranteed_bundle_ships_passes_a_mechanism(profile, provenance):
    targets = profile_targets(PROFILES[profile], provenance)
    assert {f"results/release/tab/known/direct/dpsgd/{public}" for public in PUBLIC_FILES} <= set(targets)
    jobs = workflow_jobs(ROOT, PROFILES[profile], targets)
    assert unaccounted_paths(jobs, provenance, targets) == {}
    dpsgd = next(target for target in targets if "/dpsgd/" in target)
    assert {name for name, _ in mechanisms_behind(jobs, provenance, dpsgd)} == {"dp_sgd", "code_patterns"}
    # the public card names the same mechanisms as the data file it describes
    card = next(target for target in targets if target.endswith("dpsgd/README.md"))
    assert {name for name, _ in mechanisms_behind(jobs, provenance, card)} == {"dp_sgd", "code_patterns"}
    # the topic generator's shipped texts: its one histogram is all that stands between them and the corpus
    topics = "results/release/tab/known/direct/dp_topics/synthetic.jsonl"
    assert {name for name, _ in mechanisms_behind(jobs, provenance, topics)} == {"topic_histogram"}


def test_the_custodians_part_is_read_from_the_private_corpus_and_the_public_card_is_not(provenance):
    verdict = "results/release/tab/known/direct/dpsgd/custodian/verdict.json"
    jobs = workflow_jobs(ROOT, PROFILES["default"], [CARD, verdict])
    paths = unaccounted_paths(jobs, provenance, [CARD, verdict])
    assert list(paths) == [verdict] and provenance.is_private(paths[verdict][0])
    writer = {path: job.rule for job in jobs for path in job.outputs}
    assert (writer[CARD], writer[verdict]) == ("release_card", "release_bundle")


def test_a_bundle_lists_each_seeds_mechanisms_and_the_shared_code_patterns_once(provenance):
    run = {"dataset": "tab", "setting": "known", "idset": "direct"}
    entries = mechanism_records(provenance, "dpsgd", run, [1, 2])
    assert [(m.name, path) for m, path in entries] == [
        ("dp_sgd", "results/tab/known/direct/models/dpsgd/seed1"),
        ("dp_sgd", "results/tab/known/direct/models/dpsgd/seed2"),
        ("code_patterns", f"{RELEASED}/patterns.json"),
    ]
    assert mechanism_records(provenance, "rpsg", run, [1]) == []  # its guarantee bounds no release
    assert mechanism_records(provenance, "ft", run, [1]) == []


def test_the_card_and_verdict_list_each_mechanism_and_the_composed_total(provenance):
    noise = gaussian_noise_multiplier(1.0, 1e-5)
    seed = {"epsilon": 1.0, "delta": 1e-5, "noise_multiplier": noise, "privacy_unit": "document"}
    prior = {"epsilon": 0.0, "source": "prior"}
    entries = [
        (provenance.named("dp_sgd"), "models/dpsgd/seed1", seed),
        (provenance.named("dp_sgd"), "models/dpsgd/seed2", seed),
        (provenance.named("code_patterns"), "patterns.json", prior),
    ]
    accounting = bundle_accounting(entries)
    assert [m["name"] for m in accounting["mechanisms"]] == ["dp_sgd", "dp_sgd", "code_patterns"]
    # two seeds of epsilon 1 compose to more than one and less than two; the prior spends nothing
    assert 1.2 < accounting["composed"]["epsilon"] < 1.9
    assert accounting["composed"]["basic_composition_epsilon"] == 2.0
    notes = "\n".join(accounting_notes(accounting))
    assert "- dp_sgd: DP-SGD training" in notes and "nothing spent" in notes
    assert f"epsilon {accounting['composed']['epsilon']:.3g} at delta 1e-05, against 2 by adding" in notes
    assert accounting_notes(None) == []
    assert bundle_accounting([entries[2]])["composed"] is None
    with pytest.raises(ValueError, match="no mechanism 'votes'"):
        provenance.named("votes")


def test_the_bundle_reads_its_mechanisms_records_an_adapter_folder_and_a_file(tmp_path):
    noise = gaussian_noise_multiplier(1.0, 1e-5)
    adapter = tmp_path / "seed1"
    adapter.mkdir()
    (adapter / "training.json").write_text(
        json.dumps({"epsilon": 1.0, "delta": 1e-5, "noise_multiplier": noise, "privacy_unit": "document"})
    )
    patterns = tmp_path / "patterns.json"
    patterns.write_text(json.dumps({"epsilon": 0.0, "source": "prior"}))
    accounting = read_bundle_accounting(ROOT / PROVENANCE, ["dp_sgd", "code_patterns"], [adapter, patterns])
    assert [m["record"] for m in accounting["mechanisms"]] == [str(adapter), str(patterns)]
    assert accounting["composed"]["epsilon"] == pytest.approx(1.0, rel=0.01)
    assert read_bundle_accounting(ROOT / PROVENANCE, [], []) is None
