"""config/paper.yaml against the paper, merged over config/config.yaml and validated by the schema
as Snakemake loads it: Table 5's model, the seeds of every table, MAUVE and perplexity settings."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
PAPER_TABLES = REPO / "resources/paper_tables.yaml"
SHEARED_LLAMA_CONTEXT = 4096  # max_position_embeddings of princeton-nlp/Sheared-LLaMA-1.3B


def load_yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def merged(base: Mapping, top: Mapping) -> dict:
    """`top` over `base`, nested blocks merged key by key, as Snakemake merges config files."""
    out = dict(base)
    for key, value in top.items():
        out[key] = (
            merged(base[key], value)
            if isinstance(value, Mapping) and isinstance(base.get(key), Mapping)
            else value
        )
    return out


@pytest.fixture(scope="module")
def paper():
    config = merged(load_yaml(REPO / "config/config.yaml"), load_yaml(REPO / "config/paper.yaml"))
    validate(config, str(SCHEMA))
    return config


@pytest.fixture(scope="module")
def tables():
    return load_yaml(PAPER_TABLES)["tables"]


def table_seeds(config: Mapping, table: str, spec: Mapping) -> list[int]:
    """A table's seeds as workflow/rules/functions/report.smk reads them."""
    if spec.get("source") == "utility":
        return config["utility"]["seeds"]
    return config["tables"]["seeds"].get(table, config["seeds"])


def is_mean_of_runs(spec: Mapping) -> bool:
    """Whether the paper's cells carry a confidence half-width, i.e. are means over several runs."""
    return any(cell[1] is not None for metrics in spec["paper"].values() for cell in metrics.values())


def test_the_models_are_the_papers(paper, tables):
    assert paper["model"]["name_or_path"] == "princeton-nlp/Sheared-LLaMA-1.3B"
    assert paper["model_large"]["name_or_path"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert tables["table5"]["paper_model"] == "Llama 3.1-8B Instruct"


def test_every_table_has_the_papers_runs(paper, tables):
    """Three seeds where the paper reports means over three runs (Tables 1, 2 and 6), else one."""
    seeds = {table: table_seeds(paper, table, spec) for table, spec in tables.items()}
    means = sorted(table for table, spec in tables.items() if is_mean_of_runs(spec))
    assert means == ["table1", "table2", "table6"]
    assert seeds == {table: [1, 2, 3] if table in means else [1] for table in tables}


def test_mauve_is_mauve_texts_default_on_every_test_segment(paper):
    import mauve

    defaults = inspect.signature(mauve.compute_mauve).parameters
    settings = paper["utility"]["mauve"]
    assert settings["featurizer"] == defaults["featurize_model_name"].default == "gpt2-large"
    assert settings["samples"] is None  # every real test segment
    assert settings["scaling_factor"] == defaults["mauve_scaling_factor"].default
    assert settings["max_tokens"] == defaults["max_text_length"].default


def test_perplexity_windows_are_the_longest_the_model_takes(paper):
    assert paper["utility"]["perplexity"]["max_length"] == SHEARED_LLAMA_CONTEXT


def test_icl_pe_blocks_whole_values_in_one_pass_as_the_paper_reports(paper):
    default = load_yaml(REPO / "config/config.yaml")["generation"]
    assert paper["generation"]["blocking"] == "values" and paper["generation"]["max_regenerations"] == 0
    assert (
        default["blocking"] == "values_and_parts" and default["max_regenerations"] == 3
    )  # the stronger default


def test_the_profile_runs_where_users_run_it(paper):
    assert paper["model"]["device"] == paper["model"]["dtype"] == "auto"
    assert paper["generation"]["batch_size"] == "auto"
    assert paper["resources"]["gpus_per_job"] == 1


def test_dp_sgd_passes_its_poisson_batch_in_physical_batches_of_8(paper):
    """Poisson batches of 8 documents expected bound at 14 (28 sequences of 2,048 + 20 positions); a
    physical batch of 8 sequences passes 4 documents at a time."""
    from plainsight.methods import registry
    from plainsight.scheduling import CostModel
    from plainsight.settings import Settings

    shapes = load_yaml(REPO / "resources/model_shapes.yaml")
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1", "method": "dpsgd"}
    split = CostModel(Settings.from_config(paper), shapes, lambda dataset, split: 2028, registry)
    assert split.adapter_batch(job) == (8, 2068)
    whole = Settings.from_config(merged(paper, {"prefix_tuning": {"physical_batch_size": None}}))
    assert CostModel(whole, shapes, lambda dataset, split: 2028, registry).adapter_batch(job) == (28, 2068)


def test_every_rule_of_the_paper_profiles_plan_fits_its_80_gb_gpu_within_30_gpu_hours(paper, tmp_path):
    """The plan of results/tables/all (Snakemake's dry run of it): no rule's GPU memory per job over the
    GPU's 80 GB, and the training and decoding rules planned (the largest near the GPU, not far below);
    its GPU-hours under 30 (docs/cluster-and-gpu.md: 25.8), with adapters and decoding the bulk."""
    import pandas as pd

    from plainsight.report.plan import write_plan

    tsv = tmp_path / "all.tsv"
    write_plan(
        paper, str(REPO / "workflow/Snakefile"), "results/tables/all", str(tmp_path / "all.md"), str(tsv)
    )
    plan = pd.read_csv(tsv, sep="\t").set_index("rule")
    assert 20 < plan["device_hours"].sum() < 30, plan["device_hours"].sort_values().tail(6)
    assert plan.loc["released_text_audit", "device_hours"] < 1  # the 22 M embedder, not at the 1.3B's rate
    planned = plan["gpu_memory_gib"].dropna()
    gpu_gib = paper["resources"]["gpu_memory_gb"] * 1e9 / 2**30
    assert {"train_adapter", "canary_adapter", "generate_private_selection", "generate_icl"} <= set(
        planned.index
    )
    assert planned.max() <= gpu_gib and planned.max() > 0.6 * gpu_gib, planned.sort_values().tail(4)
