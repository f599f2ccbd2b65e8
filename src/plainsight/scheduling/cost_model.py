"""The estimates of a model job: its run time, host memory and GPU memory, from its work in tokens
(`JobTokens`) and the model's shape.

Run time: tokens to produce or train on, divided by a measured throughput, times a margin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from plainsight.errors import InputError
from plainsight.scheduling.decoding_slots import (
    AUTO,
    cpu_slots,
    kv_cache_bytes,
    slot_cache_positions,
    slots_that_fit,
)
from plainsight.scheduling.memory import (
    DTYPE_BYTES,
    GENERATION_ACTIVATION_FACTOR,
    GIB,
    LORA_WIDTHS_PER_LAYER,
    TRAINABLE_COPIES,
    TRAINING_ACTIVATION_FACTOR,
    TrainingStep,
    cpu_training_mb,
    dp_batch_sequences,
    gpu_generation_bytes,
    memory_mb,
    physical_batch_sequences,
    prefix_parameters,
    training_step_bytes,
)
from plainsight.scheduling.model_rules import (
    CANARY_SCORING_RULES,
    EMBEDDING_RULES,
    GENERATION_RULES,
    TRAINING_RULES,
    twin_of,
)
from plainsight.scheduling.model_shape import ModelShape, model_shape
from plainsight.scheduling.tokens import JobTokens
from plainsight.settings import FinetuneConfig

STARTUP_MINUTES = 2  # imports, loading the model, reading the inputs


def runtime_minutes(tokens: float, tokens_per_second: float, margin: float) -> int:
    """The scheduler's run time: a bound, in whole minutes."""
    return math.ceil(STARTUP_MINUTES + margin * tokens / tokens_per_second / 60)


def expected_hours(tokens: float, tokens_per_second: float, startup_seconds: float) -> float:
    """The plan's hours of a job: its start-up and its expected work at the measured throughput."""
    return (startup_seconds + tokens / tokens_per_second) / 3600


class CostModel(JobTokens):
    """Estimates of the model jobs of one config's `settings`, by rule and wildcards: the work (tokens
    at the configured throughput), the host memory request and the GPU memory. `shapes` are the known
    model shapes (resources.model_shapes); `notes` collects what the plan tells about its choices."""

    @property
    def on_gpu(self) -> bool:
        return self.resources.gpus_per_job > 0

    @property
    def dtype_bytes(self) -> int:
        """Bytes of a weight in the job's dtype (`auto`: 16-bit on a GPU, 32-bit on the CPU)."""
        return DTYPE_BYTES.get(self.settings.model.dtype, 2 if self.on_gpu else 4)

    # --- shared pieces ---

    def shape(self, name_or_path: str) -> ModelShape:
        shape = model_shape(name_or_path, self.shapes)
        if shape is None:
            raise ValueError(
                f"no shape for model {name_or_path!r}: add it to resources.model_shapes "
                f"({self.resources.model_shapes}) or give a folder with its config.json"
            )
        return shape

    def slots(self, shape: ModelShape, positions: int, model: str, prompts: int) -> int:
        """Decoding slots: the configured number, or what `batch_size: auto` takes (on a GPU: as many
        as fit the memory the weights leave, at most the job's `prompts`: a freed slot takes the next
        prompt of any group)."""
        batch_size = self.settings.generation.batch_size
        if batch_size != AUTO or not self.on_gpu:
            return cpu_slots(batch_size)
        gpu_gb = self.resources.gpu_memory_gb
        if not gpu_gb:
            raise InputError(
                "config",
                "resources.gpu_memory_gb",
                "generation.batch_size: auto on a GPU needs the GPU's memory to plan the slots",
            )
        per_slot = kv_cache_bytes(shape.layers, shape.kv_heads, shape.head_dim, self.dtype_bytes, positions)
        free = gpu_gb * 1e9 - shape.parameters * self.dtype_bytes
        slots = max(1, min(slots_that_fit(free, per_slot), prompts))
        self.notes[f"slots {model}"] = (
            f"`batch_size: auto` takes {slots} slots for {model} on a "
            f"{gpu_gb} GB GPU ({per_slot / GIB:.2f} GiB of KV cache each)"
        )
        return slots

    def generation_job(self, rule: str, w: Mapping[str, str]) -> tuple[str, int]:
        """(model, longest prompt in tokens) of a generate job; a trained method's prompt is its prefix
        and code."""
        model = self.job_model(rule, w)
        if rule == "generate_trained":
            return model, self.settings.prefix_tuning.sequence_tokens()
        return model, self.settings.generation.max_prompt_tokens

    # --- the estimates ---

    def runtime_minutes(self, rule: str, w: Mapping[str, str], margin: float | None = None) -> int:
        """The scheduler's run time: the work at the throughput, times `resources.runtime_margin`."""
        tokens, tokens_per_second = self.work(rule, w)
        return runtime_minutes(
            tokens, tokens_per_second, self.resources.runtime_margin if margin is None else margin
        )

    def hours(self, rule: str, w: Mapping[str, str]) -> float:
        """The plan's hours: the expected work at the throughput, with no margin, after
        `resources.startup_seconds`."""
        tokens, tokens_per_second = self.work(rule, w, expected=True)
        return expected_hours(tokens, tokens_per_second, self.resources.startup_seconds)

    def host_mb(self, rule: str, w: Mapping[str, str]) -> int:
        """Host memory of a job (`memory_mb`): the batch slots of a generate job (with the packed
        weights on a CPU), or a training step (full fine-tuning also holds gradients and Adam moments;
        prefix training on the CPU: `adapter_host_mb`)."""
        headroom = self.resources.memory_headroom
        rule = twin_of(rule)
        if rule == "train_adapter" and not self.on_gpu:
            return self.adapter_host_mb(w, headroom)
        if rule in GENERATION_RULES:
            model, prompt = self.generation_job(rule, w)
            positions = slot_cache_positions(prompt, self.settings.generation.max_new_tokens)
            return memory_mb(
                self.parameters(model),
                cpu_slots(self.settings.generation.batch_size),
                positions,
                GENERATION_ACTIVATION_FACTOR,
                self.on_gpu,
                headroom,
                1 if self.on_gpu else 2,
            ) + self.surrogate_host_mb(rule, w)
        if rule in ("membership_scores", *CANARY_SCORING_RULES):
            (sequences, tokens), copies = self.membership_batch(), 1
        elif rule in TRAINING_RULES:
            full = rule != "train_adapter" and self.settings.utility.perplexity.finetune == "full"
            (sequences, tokens), copies = self.training_batch(rule), TRAINABLE_COPIES if full else 1
        else:
            raise ValueError(f"rule {rule} requests no host memory of its own")
        return memory_mb(
            self.parameters(self.base_model),
            sequences,
            tokens,
            TRAINING_ACTIVATION_FACTOR,
            self.on_gpu,
            headroom,
            copies,
        )

    def gpu_bytes(self, rule: str, w: Mapping[str, str]) -> int:
        """GPU memory of a job in the job's dtype; 0 for MAUVE's sentence embedder (small, on the CPU)."""
        rule = twin_of(rule)
        if rule in GENERATION_RULES:
            model, prompt = self.generation_job(rule, w)
            shape = self.shape(model)
            positions = slot_cache_positions(prompt, self.settings.generation.max_new_tokens)
            slots = self.slots(shape, positions, model, self.generations(rule, w))
            generating = gpu_generation_bytes(shape, self.dtype_bytes, slots, positions, prompt)
            # RPSG's surrogate trains after the last text is written, when the slots' cache is freed:
            # its step joins the writing model's weights, not its slots
            return max(generating, shape.parameters * self.dtype_bytes + self.surrogate_gpu_bytes(rule, w))
        if rule in TRAINING_RULES:
            return self.training_gpu_bytes(rule, w)
        if rule in ("membership_scores", *CANARY_SCORING_RULES):
            sequences, tokens = self.membership_batch()
            return training_step_bytes(
                self.shape(self.base_model), self.dtype_bytes, TrainingStep(sequences, tokens)
            )
        if rule == "utility_measures":
            downstream = self.settings.utility.downstream
            if downstream.classifier != "encoder":
                return 0
            encoder = downstream.encoder
            return training_step_bytes(
                self.shape(encoder.model),
                self.dtype_bytes,
                TrainingStep(encoder.batch_size, encoder.max_length, logits_passes=0, frozen_weights=False),
            )
        mauve = self.settings.utility.mauve
        if rule in EMBEDDING_RULES or mauve.featurizer == "minilm":  # the sentence embedder: small
            return 0
        shape = self.shape(mauve.featurizer)
        return shape.parameters * self.dtype_bytes + mauve.max_tokens * shape.hidden * 16 * self.dtype_bytes

    def training_gpu_bytes(self, rule: str, w: Mapping[str, str]) -> int:
        if rule == "train_adapter":
            return self.adapter_step_bytes(w)
        shape = self.shape(self.base_model)
        if rule == "base_perplexity":
            return training_step_bytes(shape, self.dtype_bytes, TrainingStep(*self.training_batch(rule)))
        return self.finetune_gpu_bytes(shape, self.settings.utility.perplexity)

    # --- prefix training (train_adapter and its canary twin) ---

    def adapter_batch(self, w: Mapping[str, str]) -> tuple[int, int]:
        """(sequences, tokens per sequence) one forward and backward pass of a prefix-training step of
        `w["method"]` holds: `batch_size` sequences, or DP-SGD's Poisson batch of `batch_size` units
        expected (`dp_batch_sequences`), split under `physical_batch_size` (`physical_batch_sequences`)."""
        sequences, tokens = self.training_batch("train_adapter")
        per_unit = 1
        if self.methods.method(w["method"]).differentially_private:
            per_unit = self.sequences_per_unit(w["method"], w["dataset"])
            sequences = dp_batch_sequences(sequences, per_unit)
        physical = self.settings.prefix_tuning.physical_batch_size
        return physical_batch_sequences(sequences, physical, per_unit), tokens

    def sequences_per_unit(self, method: str, dataset: str) -> int:
        """Training sequences of one privacy unit of a DP method (its config block's `privacy_unit`): with
        `document`, one per paragraph range of its document (a unit of several documents, a MIMIC
        patient's or a canary person's, can bring more); one with `sequence`."""
        if self.settings.block(self.methods.base_method(method)).privacy_unit == "sequence":
            return 1
        return len(self.settings.datasets[dataset].segments)

    def adapter_step_bytes(self, w: Mapping[str, str]) -> int:
        """One prefix-training step of `w["method"]` (`training_step_bytes`) in the job's dtype: ft_mask
        adds the base pass and the KL rows; DP-SGD holds its Poisson batch and their per-sample gradients."""
        shape = self.shape(self.base_model)
        prefix = self.settings.prefix_tuning
        method = self.methods.method(w["method"])
        step = TrainingStep(
            *self.adapter_batch(w),
            prefix_parameters(shape, prefix.num_virtual_tokens, prefix.projection_hidden),
            logits_passes=2 if method.masked_objective else 1,
            masked_objective=method.masked_objective,
            per_sample_gradients=method.differentially_private,
        )
        return training_step_bytes(shape, self.dtype_bytes, step)

    def adapter_host_mb(self, w: Mapping[str, str], headroom: float) -> int:
        """Host memory of a prefix-training job on the CPU: the runtime and one step
        (`adapter_step_bytes`); for a model of unknown shape, the size-based estimate of its batch."""
        if model_shape(self.base_model, self.shapes) is None:
            sequences, tokens = self.adapter_batch(w)
            parameters = self.parameters(self.base_model)
            return memory_mb(parameters, sequences, tokens, TRAINING_ACTIVATION_FACTOR, False, headroom)
        return cpu_training_mb(self.adapter_step_bytes(w), headroom)

    # --- RPSG's surrogate, fine-tuned within its generate job ---

    def surrogate_host_mb(self, rule: str, w: Mapping[str, str]) -> int:
        surrogate = self.surrogate(rule, w)
        if surrogate is None:
            return 0
        return memory_mb(
            self.parameters(self.model_of(w["method"])),
            surrogate.batch_size,
            surrogate.max_length,
            TRAINING_ACTIVATION_FACTOR,
            self.on_gpu,
            self.resources.memory_headroom,
            TRAINABLE_COPIES if surrogate.finetune == "full" else 1,
        )

    def surrogate_gpu_bytes(self, rule: str, w: Mapping[str, str]) -> int:
        surrogate = self.surrogate(rule, w)
        if surrogate is None:
            return 0
        return self.finetune_gpu_bytes(self.shape(self.model_of(w["method"])), surrogate)

    def finetune_gpu_bytes(self, shape: ModelShape, finetune: FinetuneConfig) -> int:
        """A fine-tuning step (`utility.perplexity`, `rpsg.surrogate`): every weight, or LoRA adapters."""
        full = finetune.finetune == "full"
        lora = 0 if full else finetune.lora_rank * shape.layers * LORA_WIDTHS_PER_LAYER * shape.hidden
        step = TrainingStep(finetune.batch_size, finetune.max_length, lora, frozen_weights=not full)
        return training_step_bytes(shape, self.dtype_bytes, step)
