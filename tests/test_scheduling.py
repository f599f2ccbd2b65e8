"""Scheduler resource estimates of the model jobs."""

from __future__ import annotations

import math

import pytest

from plainsight.scheduling import CostModel, cpu_slots, segments_upper_bound, slot_cache_positions
from plainsight.scheduling.cost_model import STARTUP_MINUTES, expected_hours, runtime_minutes
from plainsight.scheduling.memory import (
    GENERATION_ACTIVATION_FACTOR,
    MB,
    TRAINING_ACTIVATION_FACTOR,
    dp_batch_sequences,
    memory_mb,
    physical_batch_sequences,
    poisson_quantile,
)
from plainsight.scheduling.model_shape import model_parameters
from plainsight.scheduling.tokens import MAUVE_RESAMPLE_PAIRS, MAUVE_RESAMPLE_SECONDS


def test_parameters_from_a_model_folder_match_the_model(tiny_model_dir):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    actual = sum(parameter.numel() for parameter in model.parameters())
    assert model_parameters(str(tiny_model_dir)) == pytest.approx(actual, rel=0.01)  # norms left out


@pytest.mark.parametrize(
    "name, parameters",
    [
        ("smollm2-135m", 135_000_000),
        ("princeton-nlp/Sheared-LLaMA-1.3B", 1_300_000_000),
        ("meta-llama/Llama-3.1-8B", 8_000_000_000),
        ("Qwen/Qwen2.5-0.5B-Instruct", 500_000_000),
    ],
)
def test_parameters_from_the_size_in_the_name(name, parameters):
    assert model_parameters(name) == parameters


def test_a_model_without_a_size_is_one_clear_error():
    with pytest.raises(ValueError, match="set resources.model_parameters"):
        model_parameters("gpt2")


def test_memory_of_the_embedded_model_covers_its_measured_peaks():
    """With the default headroom, above the measured peaks and not far above."""
    generation = memory_mb(
        135_000_000,
        4,
        800 + 128,
        GENERATION_ACTIVATION_FACTOR,
        on_gpu=False,
        headroom=1.25,
        weight_copies=2,
    )
    training = memory_mb(135_000_000, 4, 20 + 128, TRAINING_ACTIVATION_FACTOR, on_gpu=False, headroom=1.25)
    assert 2_300 <= generation <= 3_100  # measured 1.7-2.0 GB with 800-token prompts and packed weights
    assert 3_100 <= training <= 4_500  # measured 2.6 GB (ft_mask's prefix training)


def test_memory_grows_with_the_model_and_the_batch_and_drops_activations_on_a_gpu():
    def estimate(parameters, batch, on_gpu=False):
        return memory_mb(parameters, batch, 2048, TRAINING_ACTIVATION_FACTOR, on_gpu, 1.25)

    assert estimate(135_000_000, 4) < estimate(135_000_000, 8) < estimate(1_300_000_000, 8)
    on_gpu = estimate(1_300_000_000, 8, on_gpu=True)
    assert on_gpu == estimate(1_300_000_000, 1, on_gpu=True)  # host memory: runtime and weights only
    assert on_gpu == pytest.approx(1.25 * (600 + 1.3e9 * 4 / 2**20), abs=1)
    with_optimizer = memory_mb(1_300_000_000, 8, 2048, 48, True, 1.25, weight_copies=4)
    assert with_optimizer == pytest.approx(1.25 * (600 + 4 * 1.3e9 * 4 / 2**20), abs=1)


def test_runtime_scales_with_tokens_and_has_a_start_up_floor():
    assert runtime_minutes(0, 10, 2.0) == STARTUP_MINUTES
    assert runtime_minutes(6_000, 10, 2.0) == STARTUP_MINUTES + 20


def test_segments_bound_is_above_the_demo_codes():
    demo_codes_mb, demo_segments = 17_383 / 2**20, 176
    assert demo_segments <= segments_upper_bound(demo_codes_mb) <= 2 * demo_segments


def test_slot_cache_positions_leave_a_quarter_to_run_on():
    assert slot_cache_positions(800, 400) == 1200 + 300 + 1
    assert slot_cache_positions(1, 2) == 4


# --- the cost model, shared by the scheduler and the plan ------------------------------------------


def default_config() -> dict:
    from pathlib import Path

    import yaml

    repo = Path(__file__).resolve().parents[1]
    return yaml.safe_load((repo / "config/config.yaml").read_text(encoding="utf-8"))


def cost_model(segments=lambda dataset, split: {"train": 40, "test": 10}[split], **changes):
    """The cost model of the default config with `changes`: a block's keys updated, or a list replaced."""
    from pathlib import Path

    import yaml

    from plainsight.methods import registry
    from plainsight.settings import Settings

    repo = Path(__file__).resolve().parents[1]
    config = default_config()
    shapes = yaml.safe_load((repo / "resources/model_shapes.yaml").read_text(encoding="utf-8"))
    for key, values in changes.items():
        if isinstance(values, dict):
            config[key].update(values)
        else:
            config[key] = values
    return CostModel(Settings.from_config(config), shapes, segments, registry)


def test_the_work_of_each_model_rule_by_hand():
    costs = cost_model(
        generation={"generations_per_segment": 4, "max_new_tokens": 100, "max_regenerations": 3, "shards": 2},
        prefix_tuning={"generations": None, "epochs": 2, "num_virtual_tokens": 8, "max_length": 92},
        utility={
            "perplexity": {**default_config()["utility"]["perplexity"], "epochs": 3, "max_length": 50},
            "mauve": {**default_config()["utility"]["mauve"], "samples": 0},
        },
    )
    tab = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    ranges = len(costs.settings.datasets["tab"].segments)
    # 4 per paragraph range, half of them per shard, each regenerated up to 3 times (icl_pe), 100 tokens each
    assert (
        costs.work("generate_icl", {**tab, "method": "icl_pe", "shard": "0"})[0] == 4 * ranges // 2 * 4 * 100
    )
    assert costs.work("generate_icl", {**tab, "method": "icl"})[0] == 4 * ranges * 100
    assert (
        costs.work("generate_trained", {**tab, "method": "ft", "shard": "1"})[0] == 40 // 2 * 100
    )  # one per sample
    assert costs.work("mauve_texts", {**tab, "method": "icl_pe"})[0] == 10 * 4 * 100  # every test segment
    assert costs.work("train_adapter", {**tab, "method": "ft"})[0] == 40 * 2 * (8 + 92)
    # 3 epochs over the larger of the in-context corpus (4 x ranges) and one text per sample (40), then
    # the test split
    assert costs.work("perplexity", {**tab, "method": "ft"})[0] == 3 * max(4 * ranges, 40) * 100 + 10 * 50
    assert costs.work("base_perplexity", {"dataset": "tab"})[0] == 10 * 50
    assert costs.work("mauve", {**tab, "method": "ft"})[0] == 0  # the sentence embedder: minutes on the CPU
    # MAUVE's bootstrap: each resample's clustering in seconds, as tokens of the job's throughput; 10 test
    # segments here against the 134 pairs the per-resample time was measured at
    resampled = cost_model(
        utility={"mauve": {**default_config()["utility"]["mauve"], "samples": 0, "resamples": 100}}
    )
    tokens, rate = resampled.work("mauve", {**tab, "method": "ft"})
    assert tokens / rate == pytest.approx(100 * MAUVE_RESAMPLE_SECONDS * 10 / MAUVE_RESAMPLE_PAIRS)


def test_runtime_and_hours_share_the_work_and_differ_by_the_margin():
    costs = cost_model(
        resources={
            "runtime_margin": 3.0,
            "training_tokens_per_second": 10,
            "rule_tokens_per_second": None,
            "startup_seconds": 30,
        }
    )
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "ft", "seed": "1"}
    tokens = costs.work("train_adapter", job)[0]
    assert costs.runtime_minutes("train_adapter", job) == runtime_minutes(tokens, 10, 3.0)
    # the plan: the start-up and the work at the throughput, in hours, no margin, no rounding
    assert costs.hours("train_adapter", job) == pytest.approx((30 + tokens / 10) / 3600)
    assert expected_hours(5920, 10, 30) == pytest.approx(622 / 3600)


def test_the_plan_expects_one_decoding_per_generation_and_the_scheduler_bounds_every_regeneration():
    costs = cost_model(
        generation={"max_new_tokens": 100, "max_regenerations": 3},
        resources={"generation_tokens_per_second": 10, "rule_tokens_per_second": None, "startup_seconds": 0},
    )
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "icl_pe", "seed": "1"}
    bound, expected = costs.work("generate_icl", job)[0], costs.work("generate_icl", job, expected=True)[0]
    assert bound == 4 * expected  # each generation and up to 3 regenerations
    assert costs.hours("generate_icl", job) == pytest.approx(expected / 10 / 3600)
    assert costs.runtime_minutes("generate_icl", job) == runtime_minutes(bound, 10, 2.0)


def test_a_rule_measured_at_its_own_rate_and_its_twins_with_it():
    family_rates = {"generation_tokens_per_second": 10, "training_tokens_per_second": 50}
    costs = cost_model(
        resources={
            **family_rates,
            "rule_tokens_per_second": {"generate_trained": 40, "generate_zero_learning": 80},
        }
    )
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "ft", "seed": "1"}
    assert costs.work("generate_trained", job)[1] == 40
    assert costs.work("canary_generations", job)[1] == 40  # the twin of generate_trained
    assert costs.work("generate_zero_learning", job)[1] == 80  # its own entry first
    assert costs.work("generate_icl", {**job, "method": "icl"})[1] == 10
    assert costs.work("train_adapter", job)[1] == 50
    costs = cost_model(resources={**family_rates, "rule_tokens_per_second": None})
    assert costs.work("generate_trained", job)[1] == 10


def test_an_adapter_job_is_planned_at_its_methods_rate_over_its_examples_padded_width():
    costs = cost_model(
        prefix_tuning={"epochs": 2, "num_virtual_tokens": 8, "max_length": 92},
        resources={
            "training_tokens_per_second": 50,
            "rule_tokens_per_second": None,
            "method_tokens_per_second": {"dpsgd": 20},
            "planned_example_tokens": {"tab": 30, "mimic": 500},
        },
    )
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "dpsgd", "seed": "1"}
    # the scheduler's bound: 40 training segments x 2 epochs x (92 + 8); the plan: at the planned 30 + 8
    assert costs.work("train_adapter", job) == (40 * 2 * 100, 20)
    assert costs.work("train_adapter", job, expected=True) == (40 * 2 * 38, 20)
    assert costs.work("canary_adapter", job, expected=True) == (40 * 2 * 38, 20)  # its twin
    assert costs.work("train_adapter", {**job, "method": "ft"}, expected=True) == (40 * 2 * 38, 50)
    # a planned width over max_length is cut to it; a dataset without one is planned at max_length
    assert costs.work("train_adapter", {**job, "dataset": "mimic"}, expected=True)[0] == 40 * 2 * 100
    assert (
        cost_model(prefix_tuning={"epochs": 2, "num_virtual_tokens": 8, "max_length": 92}).work(
            "train_adapter", {**job, "dataset": "mimic"}, expected=True
        )[0]
        == 40 * 2 * 100
    )
    # a rule's own measured rate comes before the method's
    measured = cost_model(
        resources={
            "rule_tokens_per_second": {"canary_adapter": 70},
            "method_tokens_per_second": {"dpsgd": 20},
        }
    )
    assert measured.work("canary_adapter", job)[1] == 70 and measured.work("train_adapter", job)[1] == 20


def test_a_job_of_another_model_runs_at_the_family_rate_in_the_ratio_of_parameters():
    costs = cost_model(
        model={"name_or_path": "smollm2-135m"},
        model_large={"name_or_path": "gemma3-270m"},
        utility={
            "downstream": {
                **default_config()["utility"]["downstream"],
                "classifier": "encoder",
                "encoder": {
                    **default_config()["utility"]["downstream"]["encoder"],
                    "model": "FacebookAI/roberta-base",
                },
            },
            "mauve": {**default_config()["utility"]["mauve"], "featurizer": "gpt2-large"},
        },
        resources={
            "generation_tokens_per_second": 10,
            "training_tokens_per_second": 50,
            "rule_tokens_per_second": None,
            "model_parameters": 100_000_000,
        },
    )
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "icl", "seed": "1"}
    shapes_parameters = {
        "gemma3-270m": 268_042_240,
        "FacebookAI/roberta-base": 123_538_176,
        "gpt2-large": 773_428_480,
        "minilm": 22_337_280,
    }
    for name, parameters in shapes_parameters.items():
        assert costs.parameters(name) == parameters
    # `model` (its parameters set to 100 M) at the family rates, whatever its jobs load with it
    assert costs.work("generate_icl", job)[1] == 10
    assert costs.work("train_adapter", {**job, "method": "ft"})[1] == 50
    assert costs.work("generate_trained", {**job, "method": "ft"})[1] == 10
    # the plan: a larger model slower, a smaller one faster, in the ratio 100 M / its parameters
    large = {**job, "method": "icl.large"}
    assert costs.work("generate_icl", large, expected=True)[1] == pytest.approx(10 * 1e8 / 268_042_240)
    assert costs.work("utility_measures", {"dataset": "tab"}, expected=True)[1] == pytest.approx(
        50 * 1e8 / 123_538_176
    )
    assert costs.work("mauve", job, expected=True)[1] == pytest.approx(50 * 1e8 / 773_428_480)
    family = "training_tokens_per_second"
    assert costs.tokens_per_second("released_text_audit", job, family, expected=True) == pytest.approx(
        50 * 1e8 / 22_337_280
    )
    # the scheduler's bound: the larger models (here all but the embedder) as slow, the smaller one at
    # `model`'s measured rate
    assert costs.work("generate_icl", large)[1] == pytest.approx(10 * 1e8 / 268_042_240)
    assert costs.work("utility_measures", {"dataset": "tab"})[1] == pytest.approx(50 * 1e8 / 123_538_176)
    assert costs.work("mauve", job)[1] == pytest.approx(50 * 1e8 / 773_428_480)
    assert costs.tokens_per_second("released_text_audit", job, family) == 50
    assert "minilm (22.3 M parameters) at 4.48 x the family rates" in costs.notes["rate minilm"]
    # a measured rule rate is the job's own: no scaling
    measured = cost_model(resources={"rule_tokens_per_second": {"released_text_audit": 2500}})
    assert measured.tokens_per_second("released_text_audit", job, family, expected=True) == 2500
    # a downstream task without an encoder loads no model: its (zero) work at the family rate
    assert cost_model(resources={"training_tokens_per_second": 50}).work(
        "utility_measures", {"dataset": "tab"}
    ) == (
        0,
        50,
    )


def test_the_audit_embedder_shape_is_the_shipped_embedders():
    from plainsight.scheduling.model_rules import AUDIT_EMBEDDER
    from plainsight.scheduling.model_shape import model_parameters
    from plainsight.sentence_embedder import EMBEDDED, embedder_folder

    costs = cost_model()
    assert AUDIT_EMBEDDER == EMBEDDED
    assert costs.parameters(AUDIT_EMBEDDER) == model_parameters(embedder_folder(EMBEDDED))


def test_host_memory_of_generation_packs_a_weight_copy_on_the_cpu_only():
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "method": "icl", "seed": "1"}
    cpu, gpu = cost_model(), cost_model(resources={"gpus_per_job": 1})
    generation = cpu.settings.generation
    positions = slot_cache_positions(generation.max_prompt_tokens, generation.max_new_tokens)
    parameters = cpu.parameters(cpu.base_model)
    assert cpu.host_mb("generate_icl", job) == memory_mb(
        parameters,
        cpu_slots(generation.batch_size),
        positions,
        GENERATION_ACTIVATION_FACTOR,
        False,
        cpu.resources.memory_headroom,
        weight_copies=2,
    )
    assert gpu.host_mb("generate_icl", job) == memory_mb(
        parameters, 1, 1, 0, True, cpu.resources.memory_headroom, weight_copies=1
    )


def test_the_work_of_the_private_selection_jobs_by_hand():
    surrogate = {**default_config()["rpsg"]["surrogate"], "epochs": 2, "max_length": 80}
    changes = {
        "generation": {"max_new_tokens": 100},
        "resources": {"generation_tokens_per_second": 10, "training_tokens_per_second": 50},
        "aug_pe": {"rounds": 3, "samples": 5, "variations": 2},
    }
    costs = cost_model(**changes, rpsg={"private_seeds": 15, "candidates": 4, "surrogate": surrogate})
    tab = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    ranges = len(costs.settings.datasets["tab"].segments)
    # RPSG: min(15 per range, 40 training segments) seeds, each 4 candidates and 2 variations of at most
    # 100 tokens; the surrogate: 2 epochs over one 80-token window per seed, at a fifth of the time a token
    seeds = min(15 * ranges, 40)
    rpsg = costs.work("generate_private_selection", {**tab, "method": "rpsg"})
    assert rpsg == (seeds * (4 + 2) * 100 + 2 * seeds * 80 * 10 / 50, 10)
    # Aug-PE: per range 5 x (2 + 1) initial texts, then 5 x 2 variations in each of the rounds but the last
    aug_pe = costs.work("generate_private_selection", {**tab, "method": "aug_pe"})
    assert aug_pe == (ranges * (5 * 3 + 2 * 5 * 2) * 100, 10)
    # the topic histogram: per range its public texts and its samples, nothing trained
    topics = cost_model(**changes, dp_topics={"public_texts": 16, "samples": 7})
    work = topics.work("generate_private_selection", {**tab, "method": "dp_topics"})
    assert work == (ranges * (16 + 7) * 100, 10)
    # every seed once when the config asks for more than there are
    costs = cost_model(**changes, rpsg={"private_seeds": None, "candidates": 4, "surrogate": surrogate})
    assert costs.generations("generate_private_selection", {**tab, "method": "rpsg"}) == 40 * (4 + 2)


def test_only_the_rewriting_job_adds_its_surrogate_to_the_memory():
    costs = cost_model()
    job = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    decoding = costs.host_mb("generate_icl", {**job, "method": "icl"})
    assert costs.host_mb("generate_private_selection", {**job, "method": "aug_pe"}) == decoding
    surrogate = costs.settings.rpsg.surrogate
    assert costs.host_mb("generate_private_selection", {**job, "method": "rpsg"}) == decoding + memory_mb(
        costs.parameters(costs.base_model),
        surrogate.batch_size,
        surrogate.max_length,
        TRAINING_ACTIVATION_FACTOR,
        False,
        costs.resources.memory_headroom,
        1,  # LoRA: the weights once
    )


def test_poisson_quantiles_by_hand():
    # Poisson(4): P(X <= 8) = 0.9786, P(X <= 9) = 0.9919; Poisson(1): P(X = 0) = 0.368, P(X <= 1) = 0.736
    assert poisson_quantile(4, 0.98) == 9
    assert poisson_quantile(4, 0.97) == 8
    assert (poisson_quantile(1, 0.3), poisson_quantile(1, 0.5)) == (0, 1)
    assert poisson_quantile(1000, 0.5) == 1000  # the median of a large integer mean; no underflow
    for mean, probability in ((0, 0.5), (4, 1.0), (4, 0.0)):
        with pytest.raises(ValueError, match="Poisson quantile"):
            poisson_quantile(mean, probability)


def test_a_dp_sgd_batch_holds_the_poisson_quantile_of_units_with_all_their_sequences():
    assert dp_batch_sequences(4, 2) == 9 * 2
    assert dp_batch_sequences(8, 2) == 14 * 2  # P(X <= 13) = 0.9658, P(X <= 14) = 0.9827 for Poisson(8)
    assert dp_batch_sequences(4, 1) == 9
    for units, per_unit in ((0, 2), (4, 0)):
        with pytest.raises(ValueError, match="DP-SGD batch"):
            dp_batch_sequences(units, per_unit)


def test_a_pass_holds_the_physical_batch_of_whole_units_at_most_the_batch():
    assert physical_batch_sequences(28, None, 2) == 28  # no physical batch: the whole batch
    assert physical_batch_sequences(28, 8, 2) == 8  # 4 documents of 2 sequences
    assert physical_batch_sequences(28, 1, 2) == 2  # a unit is never split
    assert physical_batch_sequences(4, 8) == 4  # a batch smaller than the physical one passes whole


ADAPTER_JOB = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}


def test_dpsgd_asks_more_host_memory_than_ft_by_its_poisson_batch_and_per_sample_gradients():
    """The embedded default on the CPU: SmolLM2-135M in float32 (134,479,872 parameters, 30 layers of
    576, vocabulary 49,152), a prefix of 20 tokens through a 512-wide MLP (6,012,416 trainable
    parameters), batch 4, sequences of 20 + 128 positions, headroom 1.25, two paragraph ranges."""
    costs = cost_model()
    per_position = 34 * 2 * 576 * 30 + 49_152 * (4 + 8)  # activations, float32 logits and loss rows
    ft_step = 134_479_872 * 4 + 6_012_416 * 4 * 4 + 4 * 148 * per_position  # 1,601.1 MB
    dp_term = (18 - 4) * 148 * per_position + 6_012_416 * 4 * 18  # 9 units x 2 sequences, per-sample grads
    kl_term = 4 * 148 * 49_152 * (4 + 8 + 8)  # ft_mask: the base pass's logits and loss rows, the KL rows
    host = {
        m: costs.host_mb("train_adapter", {**ADAPTER_JOB, "method": m}) for m in ("ft", "ft_mask", "dpsgd")
    }
    assert host["ft"] == math.ceil(1.25 * (600 + ft_step / MB)) == 2_752
    assert host["ft_mask"] == math.ceil(1.25 * (600 + (ft_step + kl_term) / MB)) == 3_446
    assert host["dpsgd"] == math.ceil(1.25 * (600 + (ft_step + dp_term) / MB)) == 7_627
    assert host["dpsgd"] - host["ft"] == pytest.approx(1.25 * dp_term / MB, abs=1)
    assert costs.host_mb("canary_adapter", {**ADAPTER_JOB, "method": "dpsgd"}) == host["dpsgd"]
    # measured peaks (getrusage, plainsight.scheduling.memory): ft 2,107 MB, ft_mask 2,611, a DP-SGD
    # step of 11 documents (22 sequences) 7,003; the estimate is above each and within a third of it
    for method, peak in {"ft": 2_107, "ft_mask": 2_611, "dpsgd": 7_003}.items():
        assert peak < host[method] < 1.33 * peak, method


def test_a_physical_batch_lowers_dpsgds_host_memory_to_the_sequences_of_a_pass():
    """The embedded default on the CPU as above, with `physical_batch_size` 4: DP-SGD's Poisson bound of
    18 sequences passes 4 at a time (2 documents), so its step is ft's plus the per-sample gradients of
    4 sequences; ft's batch of 4 is one pass as before."""
    costs = cost_model(prefix_tuning={"physical_batch_size": 4})
    per_position = 34 * 2 * 576 * 30 + 49_152 * (4 + 8)
    ft_step = 134_479_872 * 4 + 6_012_416 * 4 * 4 + 4 * 148 * per_position
    dpsgd = costs.host_mb("train_adapter", {**ADAPTER_JOB, "method": "dpsgd"})
    assert dpsgd == math.ceil(1.25 * (600 + (ft_step + 6_012_416 * 4 * 4) / MB)) == 2_867
    assert costs.host_mb("train_adapter", {**ADAPTER_JOB, "method": "ft"}) == 2_752  # unchanged


def test_a_dp_sgd_unit_of_one_sequence_or_a_model_of_unknown_shape_keeps_the_poisson_batch():
    per_sequence = cost_model(dpsgd={"privacy_unit": "sequence"})
    assert per_sequence.adapter_batch({**ADAPTER_JOB, "method": "dpsgd"}) == (9, 148)
    assert per_sequence.adapter_batch({**ADAPTER_JOB, "method": "ft_mask"}) == (4, 148)
    unknown = cost_model(model={"name_or_path": "acme/unlisted-135M"})
    assert unknown.host_mb("train_adapter", {**ADAPTER_JOB, "method": "dpsgd"}) == memory_mb(
        135_000_000, 18, 148, TRAINING_ACTIVATION_FACTOR, False, 1.25
    )


def test_the_negative_control_costs_one_trained_corpus_and_is_planned_as_a_model_job():
    from plainsight import scheduling

    costs = cost_model(generation={"max_new_tokens": 100}, prefix_tuning={"generations": None})
    run = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    # one text per fine-tuning sample (40), 100 tokens each, one job whatever the shards
    assert costs.work("generate_zero_learning", run)[0] == 40 * 100
    assert costs.gpu_bytes("generate_zero_learning", run) == costs.gpu_bytes(
        "generate_trained", {**run, "method": "ft"}
    )
    assert "generate_zero_learning" in scheduling.MODEL_RULES


def test_the_released_text_audits_embed_the_real_segments_and_the_corpora_they_attack():
    costs = cost_model(
        lambda dataset, split: {"train": 40, "dev": 6, "test": 10}[split],
        generation={"max_new_tokens": 100, "generations_per_segment": 4},
        prefix_tuning={"generations": 30},
        seeds=[1, 2],
        methods=["baseline", "icl_pe", "dpsgd"],
    )
    run = {"dataset": "tab", "setting": "known", "idset": "direct", "seed": "1"}
    # the corpora: max(4 x 2 ranges, 30) = 30 generations; 40 fine-tuning and 16 held-out segments;
    # three methods and the two controls
    assert costs.work("released_text_audit", run)[0] == (40 + 16 + 5 * 30) * 100
    # a bundle: the held-out segments, and per seed its kept rows (at most 30) and the negative control
    assert costs.work("release_audit", {**run, "method": "dpsgd"})[0] == (16 + 2 * 30 * 2) * 100
    assert costs.gpu_bytes("release_audit", {**run, "method": "dpsgd"}) == 0  # the small embedder
