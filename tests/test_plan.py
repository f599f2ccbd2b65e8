"""The cost plan: the dry run's jobs, model shapes, and GPU memory and hours with known answers."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest
import yaml

from plainsight.methods import registry
from plainsight.report.plan import (
    DryRunJob,
    parse_dry_run,
    plan_markdown,
    plan_table,
    plan_target,
    plan_tsv,
    segment_counter,
)
from plainsight.report.plan_check import read_plan
from plainsight.scheduling import CostModel
from plainsight.scheduling.memory import (
    GIB,
    TrainingStep,
    gpu_generation_bytes,
    prefix_parameters,
    training_step_bytes,
)
from plainsight.scheduling.model_shape import ModelShape, model_shape
from plainsight.settings import Settings


def cost_model(config, shapes, segments) -> CostModel:
    """The cost model as the plan builds it: the config's settings, with the method registry."""
    return CostModel(Settings.from_config(config), shapes, segments, registry)


REPO = Path(__file__).resolve().parents[1]
SHAPES = yaml.safe_load((REPO / "resources/model_shapes.yaml").read_text(encoding="utf-8"))

DRY_RUN = """\
Building DAG of jobs...
Job stats:
job             count
generate_icl        1

[Wed Nov 25 04:26:44 2026]
localrule ingest:
    input: resources/demo/tab/echr_train.json
    output: results/tab/docs.parquet, results/tab/spans.parquet
    jobid: 3
    wildcards: dataset=tab
    resources: tmpdir=/tmp
[Wed Nov 25 04:26:44 2026]
rule generate_icl:
    output: results/tab/known/direct/synthetic/icl_pe/seed2.parquet
    jobid: 2
    wildcards: dataset=tab, setting=known, idset=direct, method=icl_pe, seed=2
    resources: tmpdir=/tmp, mem_mb=2900, mem=3 GB, runtime=40
"""


def test_the_dry_run_gives_each_job_with_its_rule_wildcards_and_resources():
    assert parse_dry_run(DRY_RUN) == [
        DryRunJob("ingest", {"dataset": "tab"}, {"tmpdir": "/tmp"}),
        DryRunJob(
            "generate_icl",
            {"dataset": "tab", "setting": "known", "idset": "direct", "method": "icl_pe", "seed": "2"},
            {"tmpdir": "/tmp", "mem_mb": "2900", "mem": "3 GB", "runtime": "40"},
        ),
    ]


@pytest.mark.parametrize(
    "name, published",
    [
        ("princeton-nlp/Sheared-LLaMA-1.3B", 1.3e9),
        ("meta-llama/Llama-3.1-8B-Instruct", 8.0e9),
        ("gpt2-large", 774e6),
        ("smollm2-135m", 135e6),
        ("gemma3-270m", 270e6),
        ("FacebookAI/roberta-base", 125e6),
    ],
)
def test_shapes_give_the_published_parameter_counts(name, published):
    assert model_shape(name, SHAPES).parameters == pytest.approx(published, rel=0.04)


def test_a_model_folder_config_wins_over_the_shapes(tiny_model_dir):
    shape = model_shape(str(tiny_model_dir), {str(tiny_model_dir): SHAPES["gpt2-large"]})
    assert (shape.layers, shape.hidden, shape.kv_heads, shape.head_dim) == (2, 32, 1, 16)
    assert model_shape("unknown/model", SHAPES) is None


@pytest.mark.parametrize("projection_hidden", [None, 24])
def test_prefix_parameters_count_what_trains(tiny_model_dir, projection_hidden):
    from plainsight.models import load_model
    from plainsight.training.prefix import prefix_model

    model, tokenizer = load_model(tiny_model_dir)
    adapter = prefix_model(model, tokenizer, 5, "A public sentence to start from.", projection_hidden)
    trainable = sum(p.numel() for p in adapter.parameters() if p.requires_grad)
    shape = model_shape(str(tiny_model_dir))
    assert prefix_parameters(shape, 5, projection_hidden) == trainable


SMALL = ModelShape(parameters=1000, layers=2, hidden=8, kv_heads=2, head_dim=4, vocab=10)


def test_training_memory_by_hand():
    # 16-bit weights 2,000; trainable 5 x 4 bytes x (4 copies + 3 per-sample gradients) = 140;
    # activations 3 x 4 positions x 8 x 2 layers x 34 = 6,528; logits 2 passes x 12 x 10 x (2 + 8) = 2,400
    assert (
        training_step_bytes(SMALL, 2, TrainingStep(3, 4, 5, logits_passes=2, per_sample_gradients=True))
        == 2_000 + 140 + 6_528 + 2_400
    )
    # the masked objective's KL rows: 8 bytes per vocabulary entry of each of the 12 positions
    assert training_step_bytes(SMALL, 2, TrainingStep(3, 4, 5, logits_passes=2, masked_objective=True)) == (
        2_000 + 5 * 4 * 4 + 6_528 + 2_400 + 12 * 10 * 8
    )
    # trained float32 weights hold 16 bytes each; float32 activations are twice the 16-bit ones
    assert (
        training_step_bytes(SMALL, 4, TrainingStep(1, 1, frozen_weights=False))
        == 16_000 + 8 * 2 * 34 * 2 + 10 * 12
    )


def test_the_gpu_memory_of_prefix_training_covers_the_measured_h100_peaks():
    """docs/cluster-and-gpu.md: benchmarks/training.py at the 1.3B shape with the embedded vocabulary, in
    bfloat16, batch 8, examples of up to 412 tokens with the prefix, prefix rows without the MLP."""
    shapes = {"bench-1.3b": {**SHAPES["princeton-nlp/Sheared-LLaMA-1.3B"], "vocab_size": 49_152}}
    cfg = config(gpus_per_job=1, gpu_memory_gb=80)
    cfg["model"]["name_or_path"] = "bench-1.3b"
    cfg["prefix_tuning"].update(batch_size=8, max_length=392, num_virtual_tokens=20, projection_hidden=None)
    costs = cost_model(cfg, shapes, lambda dataset, split: 128)
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    measured = {"ft": 9.52e9, "ft_mask": 12.43e9, "dpsgd": 21.82e9}
    for method, peak in measured.items():
        assert peak <= costs.gpu_bytes("train_adapter", {**job, "method": method}) <= 1.3 * peak, method
    # DP-SGD: a Poisson batch of 14 documents (8 expected), two sequences each
    assert costs.adapter_batch({**job, "method": "dpsgd"}) == (28, 412)


def test_a_physical_batch_bounds_the_sequences_a_training_pass_holds():
    """The same 1.3B bench shape: with `physical_batch_size` 8 DP-SGD's Poisson bound of 28 sequences
    passes 8 at a time (4 documents of 2), so its step is ft's plus the per-sample prefix gradients of 8
    sequences; ft's batch of 8 is one pass as before."""
    shapes = {"bench-1.3b": {**SHAPES["princeton-nlp/Sheared-LLaMA-1.3B"], "vocab_size": 49_152}}
    cfg = config(gpus_per_job=1, gpu_memory_gb=80)
    cfg["model"]["name_or_path"] = "bench-1.3b"
    cfg["prefix_tuning"].update(batch_size=8, max_length=392, num_virtual_tokens=20, projection_hidden=None)
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    whole = cost_model(copy.deepcopy(cfg), shapes, lambda dataset, split: 128)
    cfg["prefix_tuning"]["physical_batch_size"] = 8
    split = cost_model(copy.deepcopy(cfg), shapes, lambda dataset, split: 128)
    dpsgd, ft = {**job, "method": "dpsgd"}, {**job, "method": "ft"}
    assert split.adapter_batch(dpsgd) == (8, 412) and split.adapter_batch(ft) == (8, 412)
    per_sample = prefix_parameters(split.shape("bench-1.3b"), 20, None) * 4 * 8
    assert split.gpu_bytes("train_adapter", dpsgd) == split.gpu_bytes("train_adapter", ft) + per_sample
    assert split.gpu_bytes("train_adapter", ft) == whole.gpu_bytes("train_adapter", ft)
    assert split.gpu_bytes("train_adapter", dpsgd) < 0.4 * whole.gpu_bytes("train_adapter", dpsgd)
    cfg["prefix_tuning"]["physical_batch_size"] = 1  # a document's two sequences pass together
    assert cost_model(cfg, shapes, lambda dataset, split: 128).adapter_batch(dpsgd) == (2, 412)


def test_rpsgs_surrogate_trains_beside_the_writing_model_not_its_decoding_slots():
    """The surrogate is fine-tuned after the last text is written: the job holds the larger of the
    decoding (weights and slots) and the writing model's weights with the surrogate's step."""
    cfg = config(gpus_per_job=1, gpu_memory_gb=80)
    cfg["model"]["name_or_path"] = "princeton-nlp/Sheared-LLaMA-1.3B"
    cfg["rpsg"]["surrogate"].update(finetune="full", batch_size=8, max_length=512)
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    rpsg, aug_pe = {**job, "method": "rpsg"}, {**job, "method": "aug_pe"}
    for batch_size, decoding_larger in (("auto", True), (1, False)):
        cfg["generation"]["batch_size"] = batch_size
        planner = cost_model(cfg, SHAPES, lambda dataset, split: 2000)
        shape = planner.shape("princeton-nlp/Sheared-LLaMA-1.3B")
        surrogate = shape.parameters * 2 + planner.surrogate_gpu_bytes("generate_private_selection", rpsg)
        decoding = planner.gpu_bytes("generate_private_selection", aug_pe)  # no surrogate
        assert planner.gpu_bytes("generate_private_selection", rpsg) == max(decoding, surrogate)
        assert (decoding > surrogate) == decoding_larger, batch_size


def test_generation_memory_by_hand():
    # weights 2,000; KV cache 3 slots x 2 layers x 2 heads x 4 x 2 (k, v) x 2 bytes x 5 positions = 960;
    # prefill 7 tokens x 8 x 16 x 2 = 1,792 and 3 x 10 x 8 bytes of float32 logits = 240
    assert gpu_generation_bytes(SMALL, 2, slots=3, positions=5, prefill_tokens=7) == 2_000 + 960 + 1_792 + 240


def config(**resources) -> dict:
    """The default config at the family rates alone (no rule measured apart), with `resources` changed."""
    base = yaml.safe_load((REPO / "config/config.yaml").read_text(encoding="utf-8"))
    base["resources"].update({"rule_tokens_per_second": None, **resources})
    return base


def test_icl_generation_hours_and_slots_on_a_gpu():
    cfg = config(gpus_per_job=1, gpu_memory_gb=80, generation_tokens_per_second=1000)
    cfg["model"]["name_or_path"] = "princeton-nlp/Sheared-LLaMA-1.3B"
    cfg["generation"].update(
        batch_size="auto", generations_per_segment=500, max_new_tokens=400, group_size=32
    )
    planner = cost_model(cfg, SHAPES, lambda dataset, split: 100)
    plain = planner.hours("generate_icl", {"dataset": "tab", "method": "icl"})
    blocking = planner.hours("generate_icl", {"dataset": "tab", "method": "icl_pe"})
    # 2 paragraph ranges x 500 generations x 400 tokens at 1,000 tokens/s: 400 s after the start-up;
    # icl_pe is planned at one decoding a generation (its runtime request bounds every regeneration)
    startup = cfg["resources"]["startup_seconds"]
    assert plain == blocking == pytest.approx((startup + 400) / 3600)
    gpu_bytes = planner.gpu_bytes("generate_icl", {"dataset": "tab", "method": "icl"})
    # 1,000 prompts: the GPU's memory, not the group (a freed slot takes any group's next prompt), limits
    assert "55 slots" in planner.notes["slots princeton-nlp/Sheared-LLaMA-1.3B"]
    assert 55 * GIB < gpu_bytes < 80 * GIB
    cfg["generation"]["generations_per_segment"] = 10  # 20 prompts: as many slots as prompts
    few = cost_model(cfg, SHAPES, lambda dataset, split: 100)
    few.gpu_bytes("generate_icl", {"dataset": "tab", "method": "icl"})
    assert "20 slots" in few.notes["slots princeton-nlp/Sheared-LLaMA-1.3B"]


def test_auto_slots_are_limited_by_the_gpu_memory():
    cfg = config(gpus_per_job=1, gpu_memory_gb=24)
    cfg["generation"].update(batch_size="auto", group_size=512, max_prompt_tokens=3600, max_new_tokens=400)
    cfg["model"]["name_or_path"] = "meta-llama/Llama-3.1-8B-Instruct"
    planner = cost_model(cfg, SHAPES, lambda dataset, split: 100)
    gpu_bytes = planner.gpu_bytes("generate_icl", {"dataset": "tab", "method": "icl"})
    # weights 16.1 GB; 80% of the 7.9 GB left holds 9 slots of 5,001 positions (0.66 GB each)
    assert 22e9 < gpu_bytes < 23e9
    assert "9 slots" in next(iter(planner.notes.values()))


def test_auto_slots_on_the_cpu_are_the_cpu_default_and_on_a_gpu_need_its_memory():
    from plainsight.errors import InputError
    from plainsight.scheduling import CPU_AUTO_SLOTS

    cfg = config()
    cfg["generation"]["batch_size"] = "auto"
    shape = model_shape("smollm2-135m", SHAPES)
    assert (
        cost_model(cfg, SHAPES, lambda dataset, split: 1).slots(shape, 1000, "smollm2-135m", 100)
        == CPU_AUTO_SLOTS
    )
    cfg["resources"]["gpus_per_job"] = 1
    with pytest.raises(InputError, match="resources.gpu_memory_gb"):
        cost_model(cfg, SHAPES, lambda dataset, split: 1).slots(shape, 1000, "smollm2-135m", 100)


def test_the_plan_table_sums_gpu_hours_and_flags_jobs_over_the_gpu():
    cfg = config(gpus_per_job=1, gpu_memory_gb=16)
    cfg["model"]["name_or_path"] = "princeton-nlp/Sheared-LLaMA-1.3B"
    cfg["prefix_tuning"].update(max_length=2048, batch_size=8)
    planner = cost_model(cfg, SHAPES, lambda dataset, split: 2000)
    jobs = [
        DryRunJob("train_adapter", {"dataset": "tab", "method": method, "seed": "1"}, {"mem_mb": "7000"})
        for method in ("ft", "ft_mask")
    ] + [DryRunJob("ingest", {"dataset": "tab"}, {})]
    table = plan_table(jobs, planner).set_index("rule")
    one = planner.hours("train_adapter", {"dataset": "tab", "method": "ft"})
    two = planner.hours("train_adapter", {"dataset": "tab", "method": "ft_mask"})
    assert table.loc["train_adapter", "jobs"] == 2
    assert table.loc["train_adapter", "device_hours"] == pytest.approx(one + two)
    assert table.loc["train_adapter", "host_memory_gb"] == 7.0
    assert table.loc["ingest", "device_hours"] == 0
    text = plan_markdown(table.reset_index(), "results/tables/tab/table1.csv", planner, {"tab": "planned"})
    assert "**Over the GPU's memory (16 GB):** train_adapter" in text


def test_sizes_come_from_built_codes_unless_rebuilt_else_from_the_config(tmp_path):
    import pandas as pd

    (tmp_path / "tab/known/direct").mkdir(parents=True)
    pd.DataFrame({"split": ["train"] * 3 + ["test"]}).to_parquet(tmp_path / "tab/known/direct/codes.parquet")
    cfg = config(planned_segments={"tab": {"train": 50, "test": 5}})
    count, sizes = segment_counter(Settings.from_config(cfg), [], tmp_path)
    assert (count("tab", "train"), count("tab", "test")) == (3, 1)
    rebuilt = [DryRunJob("ingest", {"dataset": "tab"}, {})]
    count, sizes = segment_counter(Settings.from_config(cfg), rebuilt, tmp_path)
    assert count("tab", "train") == 50 and "planned" in sizes["tab"]
    with pytest.raises(ValueError, match="set resources.planned_segments.mimic.train"):
        count("mimic", "train")


def test_a_random_weight_model_has_the_shape_it_was_built_from():
    """The benchmarks' --model-config models: the architecture's weights, the tokenizer's vocabulary."""
    import torch

    from plainsight.models import random_weight_model

    shape = {
        "model_type": "llama",
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 1000,
        "tie_word_embeddings": False,
    }
    model = random_weight_model(shape, vocab_size=300, dtype=torch.bfloat16)
    norms = sum(p.numel() for name, p in model.named_parameters() if "norm" in name)
    assert model.config.vocab_size == 300 and next(model.parameters()).dtype == torch.bfloat16
    expected = ModelShape.from_config({**shape, "vocab_size": 300}).parameters
    assert sum(p.numel() for p in model.parameters()) - norms == expected


def test_the_downstream_encoder_jobs_are_planned_with_gpu_hours():
    cfg = config(gpus_per_job=1, gpu_memory_gb=80, training_tokens_per_second=1000)
    cfg["utility"]["downstream"].update(classifier="encoder")
    cfg["utility"]["downstream"]["encoder"].update(epochs=2, max_length=100)
    cfg["prefix_tuning"]["generations"] = None
    cfg["methods"], cfg["utility"]["seeds"] = ["icl", "ft"], [1]
    costs = cost_model(cfg, SHAPES, lambda dataset, split: {"train": 50, "test": 10}[split])
    wildcards = {"dataset": "tab", "setting": "known", "idset": "direct"}
    # 2 corpora of max(12 x 2, 50) = 50 generations; trained on 50 real + 100 synthetic texts twice,
    # predicting 3 x 10 test texts and the 100 synthetic ones: 430 texts x 100 tokens at 1000 tokens/s
    # of `model`, in the ratio of its parameters to the encoder's
    encoder = cfg["utility"]["downstream"]["encoder"]["model"]
    rate = 1000 * costs.parameters(costs.base_model) / costs.parameters(encoder)
    assert costs.work("utility_measures", wildcards, expected=True)[1] == pytest.approx(rate)
    startup = cfg["resources"]["startup_seconds"]
    assert costs.hours("utility_measures", wildcards) == pytest.approx((startup + 430 * 100 / rate) / 3600)
    assert (
        125e6 * 4 * 4 < costs.gpu_bytes("utility_measures", wildcards) < 80e9
    )  # float32 weights, grads, Adam
    table = plan_table([DryRunJob("utility_measures", wildcards, {})], costs).set_index("rule")
    assert table.loc["utility_measures", "device_hours"] == pytest.approx(
        costs.hours("utility_measures", wildcards)
    )
    # the all-methods twin adds RPSG's and Aug-PE's seed-1 corpora: 4 corpora, 200 synthetic texts,
    # trained on 250 texts twice, predicting 5 x 10 test texts and the 200 synthetic ones: 750 texts
    cfg["private_selection"].update(methods=["rpsg", "aug_pe"], seeds=[1])
    costs = cost_model(cfg, SHAPES, lambda dataset, split: {"train": 50, "test": 10}[split])
    assert costs.hours("utility_measures_all_methods", wildcards) == pytest.approx(
        (startup + 750 * 100 / rate) / 3600
    )
    cfg["utility"]["downstream"]["classifier"] = "tfidf_logreg"
    assert cost_model(cfg, SHAPES, lambda d, s: 1).gpu_bytes("utility_measures", {"dataset": "tab"}) == 0


def test_the_membership_scores_are_planned_per_model_and_text():
    cfg = config(gpus_per_job=1, gpu_memory_gb=80, training_tokens_per_second=1000)
    cfg["methods"] = ["icl", "ft", "ft_mask", "dpsgd"]
    wildcards = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    per_text = cfg["prefix_tuning"]["num_virtual_tokens"] + cfg["prefix_tuning"]["max_length"]

    def counter(sizes):
        def count(dataset, split):
            if split not in sizes:
                raise ValueError(f"no {split} split planned")
            return sizes[split]

        return count

    # min(50 members, 10 test + 6 dev held out) = 16 per class, 32 texts, under the base model and 3
    # adapters; without a dev count, the dev split is taken as large as the test split: 20 per class
    for sizes, texts in (({"train": 50, "dev": 6, "test": 10}, 32), ({"train": 50, "test": 10}, 40)):
        costs = cost_model(cfg, SHAPES, counter(sizes))
        assert costs.hours("membership_scores", wildcards) == pytest.approx(
            (cfg["resources"]["startup_seconds"] + texts * 4 * per_text / 1000) / 3600
        )
    assert costs.gpu_bytes("membership_scores", wildcards) > 0
    table = plan_table([DryRunJob("membership_scores", wildcards, {})], costs).set_index("rule")
    assert table.loc["membership_scores", "jobs"] == 1


def test_the_plan_shows_the_evidence_plan_beside_the_hours():
    from plainsight.audit.criteria import Gate
    from plainsight.audit.evidence_plan import evidence_plan
    from plainsight.report.plan import render_evidence_plan

    cfg = config()
    segments = {"train": 128, "dev": 24, "test": 24}
    gate = Gate.from_config(cfg["release"]["gate"])
    plans = evidence_plan(gate, Settings.from_config(cfg), lambda dataset, split: segments[split])
    lines = render_evidence_plan(plans).splitlines()
    assert lines[0] == "## Evidence plan"
    # 12 generations per paragraph range x 2 ranges against the 72 a 0.05 threshold needs at no control hit
    assert (
        "| leak_excess | in-context (paired) | generations per method and seed | 12 | >= 72 generations "
        "to PASS with probability 0.8 at excess 0.00 | >= 141 generations to FAIL with probability 0.8 "
        "at excess 0.15 |" in lines
    )
    assert "| text_membership | all methods | members and held-out texts, each | <= 48 " in "\n".join(lines)
    assert any(line.startswith("| epsilon |") and ">= 28 canaries (14 guesses" in line for line in lines)

    # without built codes or planned segments the texts stay unplanned instead of stopping the plan
    def unbuilt(dataset: str, split: str) -> int:
        raise ValueError(f"no control codes of {dataset} built yet")

    unplanned = evidence_plan(gate, Settings.from_config(cfg), unbuilt)
    assert {p.planned for p in unplanned if p.criterion == "text_membership"} == {"-"}


def test_the_plan_table_as_tsv_is_what_the_plan_check_reads(tmp_path):
    cfg = config(gpus_per_job=2, gpu_memory_gb=80)
    planner = cost_model(cfg, SHAPES, lambda dataset, split: 2000)
    jobs = [
        DryRunJob("train_adapter", {"dataset": "tab", "method": "ft", "seed": "1"}, {"mem_mb": "7000"}),
        DryRunJob("ingest", {"dataset": "tab"}, {}),
    ]
    table = plan_table(jobs, planner)
    path = tmp_path / "all.tsv"
    path.write_text(plan_tsv(table, planner), encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == [
        "rule",
        "jobs",
        "device_hours",
        "longest_hours",
        "host_memory_gb",
        "gpu_memory_gib",
        "gpus_per_job",
    ]
    # the hours, GPU memory and GPUs of a rule that loads no model are left empty, as "-" in the Markdown
    assert lines[2] == "ingest\t1\t\t\t\t\t"
    hours = planner.hours("train_adapter", {"dataset": "tab", "method": "ft"})
    planned = read_plan(path).set_index("rule")
    # 2 GPUs per job: twice the hours in device-hours, read back as the job's hours
    assert float(lines[1].split("\t")[2]) == pytest.approx(2 * hours, abs=1e-4)
    assert planned.loc["train_adapter", "hours"] == pytest.approx(hours, abs=1e-4)
    assert planned.loc["train_adapter", "host_memory_gb"] == 7.0
    assert pd.isna(planned.loc["ingest", "hours"]) and pd.isna(planned.loc["ingest", "host_memory_gb"])


def test_the_plan_of_all_is_rule_all_and_other_plans_are_files_under_results():
    assert plan_target("all") == "all"
    assert plan_target("tables/all") == "results/tables/all"
    assert plan_target("tables/tab/table1.csv") == "results/tables/tab/table1.csv"
