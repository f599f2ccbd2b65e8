"""The work of each model job, in tokens: what it generates, trains on or scores, by rule and wildcards,
from the config and the segments of each split."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import ModuleType

from plainsight.scheduling.memory import MB
from plainsight.scheduling.model_rules import (
    ALL_METHODS_TWINS,
    AUDIT_EMBEDDER,
    CANARY_SCORING_RULES,
    EMBEDDING_RULES,
    GENERATION_RULES,
    TRAINING_RULES,
    twin_of,
)
from plainsight.scheduling.model_shape import model_parameters
from plainsight.settings import AugPeConfig, DpTopicsConfig, FinetuneConfig, RpsgConfig, Settings

# Parquet bytes of one control-code row are at least this many (96-100 on the demo data),
# so a codes file's size bounds its number of segments from above.
MIN_CODE_PARQUET_BYTES_PER_SEGMENT = 64
# The scheduler's count of a split's segments before any control codes of the dataset exist and
# without resources.planned_segments (the cost plan asks for planned_segments instead).
ASSUMED_SEGMENTS = 100
# forward passes per canary while its suffix is drawn, one per suffix token (resources/canaries.yaml:
# suffix_tokens, 12) and the check; and a canary's tokens with the code prompt it is scored after: bounds
CANARY_SUFFIX_PASSES = 16
CANARY_TOKENS = 80
# one MAUVE resample (utility.mauve.resamples): mauve-text's clustering of this many pairs took about this
# long on one thread of the 2-core machine (0.14 s wall, 0.03 s CPU, with a decisive run beside it;
# k-means grows about linearly in the points at these sizes)
MAUVE_RESAMPLE_SECONDS, MAUVE_RESAMPLE_PAIRS = 0.15, 134


def segments_upper_bound(codes_mb: float) -> int:
    """At most this many segments in a control-code Parquet file of this size."""
    return max(1, math.ceil(codes_mb * MB / MIN_CODE_PARQUET_BYTES_PER_SEGMENT))


class JobTokens:
    """The tokens of the model jobs of one config's `settings`, by rule and wildcards, and the rate each
    job works at. `shapes` are the known model shapes (resources.model_shapes); `segments(dataset, split)`
    counts (or bounds) the segments of a split; `methods` is the method registry,
    `plainsight.methods.registry`, which the callers hand in: a shared module imports no stage."""

    def __init__(
        self,
        settings: Settings,
        shapes: Mapping[str, Mapping],
        segments: Callable[[str, str], int],
        methods: ModuleType,
    ):
        self.settings = settings
        self.shapes = shapes
        self.segments = segments
        self.methods = methods
        self.resources = settings.resources
        self.base_model = settings.model.name_or_path
        self.notes: dict[str, str] = {}

    def parameters(self, name_or_path: str) -> int:
        """`resources.model_parameters` for `model` when set, else `model_parameters`."""
        if name_or_path == self.base_model and self.resources.model_parameters:
            return self.resources.model_parameters
        return model_parameters(name_or_path, self.shapes)

    def model_of(self, method: str) -> str:
        return self.settings.block(self.methods.model_config_key(method)).name_or_path

    def job_model(self, rule: str, w: Mapping[str, str]) -> str | None:
        """The model whose weights a job's work passes through: an in-context or private-selection
        method's own (`model`, or `model_large` for a `.large` variant), the downstream encoder, MAUVE's
        featurizer, the released-text audits' sentence embedder, else `model` (with a trained method's
        adapter); None for a downstream task without an encoder (TF-IDF, no model)."""
        twin = twin_of(rule)
        if twin in GENERATION_RULES and twin != "generate_trained":
            return self.model_of(w["method"])
        if twin == "utility_measures":
            downstream = self.settings.utility.downstream
            return downstream.encoder.model if downstream.classifier == "encoder" else None
        if twin == "mauve":
            return self.settings.utility.mauve.featurizer
        if twin in EMBEDDING_RULES:
            return AUDIT_EMBEDDER
        return self.base_model

    def work(self, rule: str, w: Mapping[str, str], expected: bool = False) -> tuple[float, float]:
        """(tokens, tokens per second) of a model job: a bound on its work for the scheduler, or with
        `expected` the work it is expected to do (each generation decoded once) for the cost plan."""
        twin = twin_of(rule)
        if twin in GENERATION_RULES:
            tokens = self.generations(twin, w, expected) * self.settings.generation.max_new_tokens
            return tokens + self.surrogate_seconds_as_tokens(twin, w), self.tokens_per_second(
                rule, w, "generation_tokens_per_second", expected
            )
        if twin in TRAINING_RULES:
            tokens = self.training_tokens(twin, w, expected)
        elif twin == "utility_measures":
            tokens = self.downstream_tokens(w, rule in ALL_METHODS_TWINS)
        elif twin == "membership_scores":
            tokens = self.membership_tokens(w)
        elif twin in CANARY_SCORING_RULES:
            tokens = self.canary_tokens(twin, w)
        elif twin in EMBEDDING_RULES:
            tokens = self.audited_texts(twin, w) * self.settings.generation.max_new_tokens
        else:  # mauve: the featurizer's forward passes over the generated and the real texts
            mauve = self.settings.utility.mauve
            texts = 2 * (mauve.samples or self.segments(w["dataset"], "test"))
            tokens = 0 if mauve.featurizer == "minilm" else texts * mauve.max_tokens
            # each bootstrap resample's clustering, in tokens of the job's throughput
            resampling = mauve.resamples * MAUVE_RESAMPLE_SECONDS * texts / 2 / MAUVE_RESAMPLE_PAIRS
            rate = self.tokens_per_second(rule, w, "training_tokens_per_second", expected)
            return tokens + resampling * rate, rate
        return tokens, self.tokens_per_second(rule, w, "training_tokens_per_second", expected)

    def tokens_per_second(
        self, rule: str, w: Mapping[str, str], family_key: str, expected: bool = False
    ) -> float:
        """A rule's measured throughput (`resources.rule_tokens_per_second`, by its name, then by the rule
        whose work it does), else an adapter job's method's (`method_tokens_per_second`), else its
        family's (`family_key`), measured on `model`, times `size_ratio` for a job of another model. The
        plan's `expected` rate takes the ratio either way; the scheduler's bound never a speed-up no run
        has measured (a smaller model's job is bounded at `model`'s rate, a larger one's at its ratio)."""
        measured = self.resources.rule_tokens_per_second or {}
        by_method = self.resources.method_tokens_per_second or {}
        rate = (
            measured.get(rule)
            or measured.get(twin_of(rule))
            or (by_method.get(w.get("method")) if twin_of(rule) == "train_adapter" else None)
        )
        if rate:
            return rate
        ratio = self.size_ratio(rule, w)
        return getattr(self.resources, family_key) * (ratio if expected else min(ratio, 1.0))

    def size_ratio(self, rule: str, w: Mapping[str, str]) -> float:
        """`model`'s parameters over those of the model the job loads (`job_model`): a forward or backward
        pass costs work in proportion to the weights it passes through, so a family rate measured on
        `model` carries over to another model in that ratio (faster for a smaller one, slower for a larger
        one); 1 for `model` itself and for a job without a model."""
        model = self.job_model(rule, w)
        if model is None or model == self.base_model:
            return 1.0
        base, other = self.parameters(self.base_model), self.parameters(model)
        self.notes[f"rate {model}"] = (
            f"{model} ({other / 1e6:,.1f} M parameters) at {base / other:.3g} x the family rates, which are "
            f"measured on `model` ({base / 1e6:,.1f} M): work per token in proportion to the parameters"
        )
        return base / other

    def example_tokens(self, dataset: str, expected: bool) -> int:
        """Tokens of one adapter training example, the prefix included: `max_length`, a bound, or with
        `expected` the padded width `resources.planned_example_tokens` gives the dataset (batches are
        padded to their longest example, not to `max_length`), where it gives one."""
        prefix = self.settings.prefix_tuning
        planned = (self.resources.planned_example_tokens or {}).get(dataset) if expected else None
        if planned is None:
            return prefix.sequence_tokens()
        return prefix.num_virtual_tokens + min(planned, prefix.max_length)

    def attempts(self, method: str, expected: bool = False) -> int:
        """Decodings per generation: at most one and its regenerations; one expected (a regeneration
        follows a blocked value only, rare: no ICL-PE generation of the demo's runs needed one)."""
        if expected:
            return 1
        return 1 + self.methods.method(method).regenerations(self.settings.generation.max_regenerations)

    def shards(self, wildcards: Mapping[str, str]) -> int:
        return self.settings.generation.shards if "shard" in wildcards else 1

    # --- generation ---

    def generations(self, rule: str, w: Mapping[str, str], expected: bool = False) -> int:
        """Texts a generate job writes, regenerations included (a bound: each may be regenerated), or with
        `expected` each once."""
        if rule == "generate_icl":
            per_corpus = self.settings.in_context_generations(w["dataset"])
            return math.ceil(per_corpus / self.shards(w)) * self.attempts(w["method"], expected)
        if rule == "generate_trained":
            per_corpus = self.trained_generations(w["dataset"])
            return math.ceil(per_corpus / self.shards(w))
        if rule == "generate_private_selection":
            return self.selection_texts(w)
        samples = self.settings.utility.mauve.samples or self.segments(w["dataset"], "test")
        return samples * self.attempts(w["method"], expected)

    def corpus_generations(self, dataset: str) -> int:
        """Generations of the larger corpus kind: an in-context method's, or a trained method's."""
        return max(self.settings.in_context_generations(dataset), self.trained_generations(dataset))

    def trained_generations(self, dataset: str) -> int:
        """A trained method's corpus: `prefix_tuning.generations`, else one per fine-tuning segment."""
        return self.settings.prefix_tuning.generations or self.segments(dataset, "train")

    # --- training and scoring ---

    def training_batch(self, rule: str) -> tuple[int, int]:
        """(sequences, tokens per sequence) of a training or scoring step."""
        if rule == "train_adapter":
            prefix = self.settings.prefix_tuning
            return prefix.batch_size, prefix.sequence_tokens()
        perplexity = self.settings.utility.perplexity
        return perplexity.batch_size, perplexity.max_length

    def training_tokens(self, rule: str, w: Mapping[str, str], expected: bool = False) -> float:
        """Tokens a training job trains on or scores: the adapter's epochs over the fine-tuning segments
        (`example_tokens` each); perplexity's fine-tuning on one corpus (bounded by its generations'
        tokens), then the test split."""
        dataset = w["dataset"]
        if rule == "train_adapter":
            epochs = self.settings.prefix_tuning.epochs
            return self.segments(dataset, "train") * epochs * self.example_tokens(dataset, expected)
        sequences_tokens = self.training_batch(rule)[1]
        scoring = self.segments(dataset, "test") * sequences_tokens
        if rule == "base_perplexity":
            return scoring
        return (
            self.settings.utility.perplexity.epochs
            * self.corpus_generations(dataset)
            * self.settings.generation.max_new_tokens
            + scoring
        )

    def membership_batch(self) -> tuple[int, int]:
        """(sequences, tokens per sequence) of a membership-scoring pass: a training example's length."""
        return self.settings.audit.batch_size, self.settings.prefix_tuning.sequence_tokens()

    def membership_tokens(self, w: Mapping[str, str]) -> float:
        """Tokens the membership attacks score: balanced members and held-out segments (dev and test),
        under the base model and each trained method's adapter; forward passes only, a third of a training
        step's work, counted as one."""
        held_out = self.held_out_segments(w["dataset"])
        texts = 2 * min(self.segments(w["dataset"], "train"), held_out)
        models = 1 + sum(self.methods.method(m).trained for m in self.settings.methods)
        return texts * models * self.membership_batch()[1]

    def held_out_segments(self, dataset: str) -> int:
        """Segments of the dev and test splits; a split not counted (no codes built, no planned size)
        is taken as large as the test split."""
        test = self.segments(dataset, "test")
        try:
            return test + self.segments(dataset, "dev")
        except ValueError:
            return 2 * test

    def audited_texts(self, rule: str, w: Mapping[str, str]) -> int:
        """Texts a released-text audit embeds and attacks, each counted as long as a generation:
        `released_text_audit` the fine-tuning and held-out segments and the corpora of every method and
        both controls; `release_audit` the held-out segments and, per seed, a bundle's kept rows (at most
        its corpus) and the negative control."""
        dataset = w["dataset"]
        corpus = self.corpus_generations(dataset)
        if rule == "released_text_audit":
            corpora = len(self.settings.methods) + 2
            return self.segments(dataset, "train") + self.held_out_segments(dataset) + corpora * corpus
        return self.held_out_segments(dataset) + 2 * corpus * len(self.settings.seeds)

    def canary_tokens(self, rule: str, w: Mapping[str, str]) -> float:
        """Tokens the canary jobs pass through a model: `canary_docs` draws every suffix under the base
        model; `canary_attacks` scores every canary under the base model and a trained method's adapter
        (an in-context method's loads no model)."""
        count = self.settings.audit.canaries.count()
        if rule == "canary_docs":
            passes = CANARY_SUFFIX_PASSES
        else:
            passes = 2 if self.methods.method(w["method"]).trained else 0
        return count * passes * CANARY_TOKENS

    def downstream_tokens(self, w: Mapping[str, str], with_private_selection: bool = False) -> float:
        """The downstream encoder's tokens (0 for TF-IDF + logistic regression, seconds on the CPU):
        fine-tuned on the real training split and on each corpus (methods x utility seeds, and the
        private-selection methods the audit adds x their seeds where asked), predicting the test split
        after each (and, for silver labels, every corpus); at `model`'s training throughput, an upper
        bound for a smaller encoder."""
        downstream = self.settings.utility.downstream
        if downstream.classifier != "encoder":
            return 0
        encoder = downstream.encoder
        corpora = len(self.settings.methods) * len(self.settings.utility.seeds)
        if with_private_selection:
            added = self.methods.audited_private_selection(self.settings)
            corpora += len(added) * len(self.settings.private_selection.seeds)
        generations = corpora * self.corpus_generations(w["dataset"])
        trained = self.segments(w["dataset"], "train") + generations
        predicted = (1 + corpora) * self.segments(w["dataset"], "test") + generations
        return (encoder.epochs * trained + predicted) * encoder.max_length

    # --- the private-selection jobs: the model's texts, and (RPSG) a surrogate fine-tuned on some ---

    def selection_settings(self, w: Mapping[str, str]) -> RpsgConfig | AugPeConfig | DpTopicsConfig:
        """A private-selection method's config block: the block of its name."""
        return self.settings.block(self.methods.base_method(w["method"]))

    def selection_texts(self, w: Mapping[str, str]) -> int:
        """Texts a private-selection job writes (abstractions counted as long as a text: a bound).
        RPSG: m candidates and two rounds of variations per seed. Aug-PE: per paragraph range, the initial
        samples x (variations + 1), then samples x variations in each round but the last. The topic
        histogram: per paragraph range, its public texts and its samples."""
        settings = self.selection_settings(w)
        ranges = len(self.settings.datasets[w["dataset"]].segments)
        method = self.methods.method(w["method"])
        if method.writes_from_topics:
            return ranges * (settings.public_texts + settings.samples)
        if method.rewrites_seeds:
            train = self.segments(w["dataset"], "train")
            per_range = settings.private_seeds
            seeds = train if per_range is None else min(train, per_range * ranges)
            return seeds * (settings.candidates + 2)
        samples, variations = settings.samples, settings.variations
        return ranges * samples * (variations + 1 + (settings.rounds - 1) * variations)

    def surrogate(self, rule: str, w: Mapping[str, str]) -> FinetuneConfig | None:
        """RPSG's surrogate fine-tuning settings for its job; None for every other job."""
        if rule != "generate_private_selection" or not self.methods.method(w["method"]).rewrites_seeds:
            return None
        return self.selection_settings(w).surrogate

    def surrogate_seconds_as_tokens(self, rule: str, w: Mapping[str, str]) -> float:
        """The surrogate's training (epochs over one variant per seed), in new tokens of the job's time."""
        surrogate = self.surrogate(rule, w)
        if surrogate is None:
            return 0.0
        seeds = self.selection_texts(w) / (self.selection_settings(w).candidates + 2)
        trained = (
            surrogate.epochs * seeds * min(surrogate.max_length, self.settings.generation.max_new_tokens)
        )
        return (
            trained * self.resources.generation_tokens_per_second / self.resources.training_tokens_per_second
        )
