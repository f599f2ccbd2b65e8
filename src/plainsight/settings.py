"""The config, each block resolved once into a typed, frozen settings object (`Settings.from_config`),
as workflow/schemas/config.schema.yaml defines it: the workflow builds it where it reads the config, and
the jobs, the cost plan and the evidence plan read it. Building checks each value's type and allowed
values and stops with one line naming the key; the schema's bounds stay with the schema's validation.
`release.gate` stays a mapping: `plainsight.audit.gate.Gate.from_config` parses it.

Also the one rule for a DP-SGD guarantee's delta (`dp_delta`). Torch-free: the scheduler reads it."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from plainsight.code_runs import CodeRuns
from plainsight.errors import InputError

# Publishing one randomly chosen unit of N in full is (0, 1 / N)-DP, so a meaningful delta stays well
# below 1 / N: a tenth of it, and at most the customary 1e-5.
LARGEST_DEFAULT_DELTA = 1e-5


def dp_delta(configured: float | None, units: int) -> float:
    """The delta of a DP-SGD guarantee over `units` privacy units: `dpsgd.delta` where configured, else
    min(1e-5, 1 / (10 N))."""
    if configured is not None:
        return float(configured)
    return min(LARGEST_DEFAULT_DELTA, 1.0 / (10 * units))


Setting = Literal["known", "unknown"]
IdentifierSet = Literal["direct", "quasi", "both"]
Finetune = Literal["full", "lora"]


# --- datasets ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SplitSizes:
    """Documents (or segments) of each split."""

    train: int
    dev: int
    test: int


@dataclass(frozen=True, kw_only=True)
class SplitFractions:
    """Shares of the privacy units in each split."""

    train: float
    dev: float
    test: float


@dataclass(frozen=True, kw_only=True)
class SpanLabel:
    """One label of a generic corpus's annotations: its entity type and identifier kind."""

    type: Literal["PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY", "MISC"]
    identifier: Literal["direct", "quasi", "no_mask"]


@dataclass(frozen=True, kw_only=True)
class DatasetConfig:
    """One corpus of `datasets`: its source files and how its documents are cut into segments."""

    format: Literal["tab", "mimic", "generic"]
    source: Literal["demo", "github", "generated", "path"]
    segments: tuple[tuple[int, int], ...]
    path: str | None = None
    documents: SplitSizes | None = None
    split: Literal["given", "coin"] | None = None
    split_fractions: SplitFractions | None = None
    split_seed: int | None = None
    paragraph_break: Literal["blank_line", "line_break"] | None = None
    label_map: Mapping[str, SpanLabel] | None = None

    def __post_init__(self):
        if self.split == "coin" and self.split_fractions is None:
            raise ValueError("split: coin draws each unit's split against `split_fractions`: give them")

    @property
    def coin_split(self) -> bool:
        """Whether every unit's split is drawn by a seeded coin (members and held-out exchangeable)."""
        return self.split == "coin"

    def as_written(self) -> dict[str, Any]:
        """The block as a mapping of the keys set, as the ingest rule hands it to the readers."""
        return {key: value for key, value in dataclasses.asdict(self).items() if value is not None}


# --- control codes and the model ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PresidioConfig:
    """`codes.presidio`: the detector of the unknown setting."""

    extra_recognizers: tuple[str, ...]
    spacy_model: str
    entity_map: str
    score_threshold: float


@dataclass(frozen=True, kw_only=True)
class ReleasedCodesConfig:
    """`codes.released`: where a guaranteed method's control codes come from (a DP histogram of their
    patterns, or a prior)."""

    source: Literal["histogram", "prior"]
    budget_share: float
    max_count: int
    threshold: float


@dataclass(frozen=True, kw_only=True)
class CodesConfig:
    """`codes`: the fictional-value pools, the MIMIC placeholder map, Presidio's detection and the
    released codes of guaranteed methods."""

    surrogates: Literal["paper", "format_preserving"]
    surrogate_lists: str
    fictional_pools: str
    mimic_placeholder_types: str
    presidio: PresidioConfig
    released: ReleasedCodesConfig


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """`model`: the language model of every method but the `.large` variants, and where it runs."""

    name_or_path: str
    device: str
    dtype: Literal["auto", "float32", "bfloat16", "float16"]

    def placement(self) -> dict[str, str]:
        """What a model job needs to place its model: the device and dtype, resolved on its machine."""
        return {"device": self.device, "dtype": self.dtype}


@dataclass(frozen=True, kw_only=True)
class LargeModelConfig:
    """`model_large`: the larger model of the `.large` method variants."""

    name_or_path: str


# --- generation and metrics ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GenerationConfig:
    """`generation`: prompts, sampling, batching and job split of the decoding."""

    generations_per_segment: int
    context_documents: int
    max_new_tokens: int
    temperature: float
    top_p: float
    batch_size: int | Literal["auto"]
    group_size: int
    max_prompt_tokens: int
    max_regenerations: int
    blocking: Literal["values", "values_and_parts"]
    threads: int
    shards: int


@dataclass(frozen=True, kw_only=True)
class DocumentConfig:
    """`metrics.document`: when a generation counts as a document."""

    min_words: int
    max_code_copy_share: float
    max_repeated_4gram_share: float


@dataclass(frozen=True, kw_only=True)
class MetricsConfig:
    """`metrics`: the privacy metrics, and when a generation counts as a document."""

    partial_leak_min_letters: int
    document: DocumentConfig
    documents_warn_below: float
    linkage_quasi_min: int = 2
    code_runs: CodeRuns = field(default_factory=CodeRuns)


@dataclass(frozen=True, kw_only=True)
class TablesConfig:
    """`tables`: the paper's result tables the workflow writes, and the seeds of each."""

    paper: str
    seeds: Mapping[str, tuple[int, ...]]


# --- utility ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FinetuneConfig:
    """A fine-tuning of every weight or of LoRA adapters: `utility.perplexity`, `rpsg.surrogate`."""

    finetune: Finetune
    epochs: int
    learning_rate: float
    batch_size: int
    max_length: int
    lora_rank: int


@dataclass(frozen=True, kw_only=True)
class MauveConfig:
    """`utility.mauve`: MAUVE between real test segments and texts written from their codes."""

    featurizer: str
    samples: int | None
    scaling_factor: float
    max_tokens: int
    resamples: int = 0  # bootstrap resamples of the pairs for MAUVE's interval


@dataclass(frozen=True, kw_only=True)
class UtilityRun:
    """One run of `utility.runs`."""

    dataset: str
    setting: Setting
    idset: IdentifierSet


@dataclass(frozen=True, kw_only=True)
class EncoderConfig:
    """`utility.downstream.encoder`: the encoder of `classifier: encoder`."""

    model: str
    epochs: float
    batch_size: int
    learning_rate: float
    max_length: int


@dataclass(frozen=True, kw_only=True)
class DownstreamConfig:
    """`utility.downstream`: train on synthetic, test on real."""

    classifier: Literal["tfidf_logreg", "encoder"]
    top_labels: int
    min_documents: int
    on_rare_label: Literal["error", "drop"]
    synthetic_labels: Literal["silver_matched", "silver", "inherited"]
    bootstrap_resamples: int
    encoder: EncoderConfig


@dataclass(frozen=True, kw_only=True)
class UtilityConfig:
    """`utility`: perplexity, MAUVE and the downstream task of each synthetic corpus."""

    seeds: tuple[int, ...]
    threads: int
    perplexity: FinetuneConfig
    mauve: MauveConfig
    runs: tuple[UtilityRun, ...]
    downstream: DownstreamConfig


# --- release and audit -----------------------------------------------------------------------------

DropPolicy = Literal["any_identifier", "source_specific", "none"]


@dataclass(frozen=True, kw_only=True)
class ReleaseConfig:
    """`release`: the release bundles; `gate` as written (`Gate.from_config` parses it)."""

    drop: DropPolicy
    license: str
    language: tuple[str, ...]
    drop_guaranteed: DropPolicy = "none"
    in_all: bool = False
    # `release.sign_off` as written: `plainsight.report.sign_off.read_sign_offs` checks and parses it
    sign_off: tuple[Mapping[str, Any], ...] | None = None
    gate: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CanaryPersonsConfig:
    """`audit.canaries.persons`: the per-person audit's fictional persons."""

    count: int = 20
    documents: int = 3


@dataclass(frozen=True, kw_only=True)
class CanariesConfig:
    """`audit.canaries`: the canaries of the per-unit and per-person audits."""

    file: str
    single: int
    guesses: float
    per_repeat: int
    repeats: tuple[int, ...]
    ngram_order: int
    ngram_add_k: float
    persons: CanaryPersonsConfig = field(default_factory=CanaryPersonsConfig)
    in_verdict: bool = False

    def count(self) -> int:
        """Canaries of one canary run: the single insertions and each repeat count's."""
        return self.single + self.per_repeat * len(self.repeats)


@dataclass(frozen=True, kw_only=True)
class AuditConfig:
    """`audit`: the privacy audit beyond the leak counts; `datasets` None: every configured dataset
    (`plainsight.audit.audited_datasets`)."""

    datasets: tuple[str, ...] | None = None
    settings: tuple[Setting, ...]
    identifier_sets: tuple[IdentifierSet, ...]
    seeds: tuple[int, ...]
    verbatim_ngram: int
    min_k: float
    bootstrap: int
    batch_size: int
    threads: int
    canaries: CanariesConfig


@dataclass(frozen=True, kw_only=True)
class PlotsConfig:
    """`plots`: which runs the privacy-utility plots show."""

    utility_axis: Literal["mauve", "downstream_f1"]
    datasets: tuple[str, ...]
    setting: Setting
    idset: IdentifierSet


@dataclass(frozen=True, kw_only=True)
class ReviewConfig:
    """`review`: the review page."""

    seeds: tuple[int, ...] | None = (1,)
    comments_dir: str = "review"
    release_summaries: bool = False
    frontier: str | None = (
        None  # the folder of make frontier's frontier.csv and .png, shown on Table 1's page
    )


# --- the methods' blocks ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PrefixConfig:
    """`prefix_tuning`: the trained methods' prefix, its training and its generations."""

    num_virtual_tokens: int
    epochs: int
    learning_rate: float
    batch_size: int
    max_length: int
    init_text: str
    lambda_lm: float
    lambda_contrastive: float
    lambda_kl: float
    generations: int | None
    threads: int
    init_from: Literal["text", "corpus"] = "text"
    physical_batch_size: int | None = None
    projection_hidden: int | None = 512
    warmup_steps: int = 3
    lr_schedule: Literal["constant", "linear", "cosine"] = "cosine"
    objective: Literal["paper", "reference_code"] = "paper"
    checkpoint_every_steps: int = 50

    def sequence_tokens(self) -> int:
        """Tokens of one training sequence: the prefix and a segment."""
        return self.num_virtual_tokens + self.max_length


@dataclass(frozen=True, kw_only=True)
class DpsgdConfig:
    """`dpsgd`: the DP-SGD baseline's target guarantee."""

    epsilon: float
    max_grad_norm: float
    privacy_unit: Literal["document", "sequence"] = "document"
    delta: float | None = None


@dataclass(frozen=True, kw_only=True)
class PrivateSelectionConfig:
    """`private_selection`: the training-free private generators the audit adds."""

    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    embedder: str
    prompts: str


@dataclass(frozen=True, kw_only=True)
class RpsgConfig:
    """`rpsg`: RPSG's seeds, candidates, selection budget and surrogate."""

    private_seeds: int | None
    candidates: int
    abstract_tokens: int
    epsilon: float
    delta: float | None
    temperature: float
    similarity_keep: float
    nll_percentile: float
    pii_patterns: str
    surrogate: FinetuneConfig


@dataclass(frozen=True, kw_only=True)
class AugPeConfig:
    """`aug_pe`: Aug-PE's rounds, population and budget."""

    rounds: int
    samples: int
    variations: int
    variation_strength: float
    min_words: int
    epsilon: float
    delta: float | None
    temperature: float


@dataclass(frozen=True, kw_only=True)
class DpTopicsConfig:
    """`dp_topics`: the CTCL-style generator's topic model, corpus and histogram budget."""

    topics: int
    public_texts: int
    keywords: int
    samples: int
    min_words: int
    epsilon: float
    delta: float | None
    temperature: float


@dataclass(frozen=True, kw_only=True)
class ResourcesConfig:
    """`resources`: what the scheduler and the cost plan estimate the model jobs from."""

    gpus_per_job: int
    model_parameters: int | None
    memory_headroom: float
    generation_tokens_per_second: float
    training_tokens_per_second: float
    rule_tokens_per_second: Mapping[str, float] | None
    method_tokens_per_second: Mapping[str, float] | None
    planned_example_tokens: Mapping[str, int] | None
    startup_seconds: float
    runtime_margin: float
    model_shapes: str
    gpu_memory_gb: float | None
    planned_segments: Mapping[str, PlannedSegments] | None


@dataclass(frozen=True, kw_only=True)
class PlannedSegments:
    """One dataset's planned segments per split, for the cost plan."""

    train: int | None = None
    dev: int | None = None
    test: int | None = None

    def given(self) -> dict[str, int]:
        """The splits given a size."""
        return {split: size for split, size in dataclasses.asdict(self).items() if size is not None}


# --- the whole config ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The whole config, each block typed (`from_config`)."""

    datasets: Mapping[str, DatasetConfig]
    on_invalid_record: Literal["error", "drop"]
    settings: tuple[Setting, ...]
    identifier_sets: tuple[IdentifierSet, ...]
    seeds: tuple[int, ...]
    codes: CodesConfig
    model: ModelConfig
    methods: tuple[str, ...]
    generation: GenerationConfig
    metrics: MetricsConfig
    tables: TablesConfig
    release: ReleaseConfig
    prefix_tuning: PrefixConfig
    dpsgd: DpsgdConfig
    private_selection: PrivateSelectionConfig
    rpsg: RpsgConfig
    aug_pe: AugPeConfig
    dp_topics: DpTopicsConfig
    resources: ResourcesConfig
    model_large: LargeModelConfig | None = None
    utility: UtilityConfig | None = None
    audit: AuditConfig | None = None
    plots: PlotsConfig | None = None
    review: ReviewConfig = field(default_factory=ReviewConfig)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Settings:
        """The settings of a config mapping (Snakemake's `config`, or the YAML files merged): an
        `InputError` naming the key for a value of the wrong type, an unknown value or an unknown key."""
        return config_block(cls, config, "")

    def block(self, key: str) -> Any:
        """The block of a config key a method names (`model`, `model_large`, `dpsgd`, `rpsg`,
        `aug_pe`, `dp_topics`: `plainsight.methods.registry.model_config_key` and `base_method`)."""
        if key not in _FIELD_NAMES:
            raise KeyError(f"no config block {key!r}")
        return getattr(self, key)

    def audited_datasets(self) -> list[str]:
        """The datasets whose runs are audited where a target asks for their audit (a review page, a
        release bundle, an audit table): `audit.datasets`, or every configured dataset where the key is
        left out."""
        return list(self.audit.datasets or self.datasets)

    def in_context_generations(self, dataset: str) -> int:
        """An in-context method's corpus of `dataset`: `generations_per_segment` per paragraph range."""
        return self.generation.generations_per_segment * len(self.datasets[dataset].segments)


_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(Settings))


# --- building a block, its types checked -----------------------------------------------------------


Block = TypeVar("Block")


def _key(parent: str, name: object) -> str:
    return f"{parent}.{name}" if parent else str(name)


def config_block(kind: type[Block], value: Any, key: str) -> Block:
    """A frozen settings block of `kind` from the mapping of config key `key` (a job's param holds
    one as written, which Snakemake compares to rerun a job whose settings changed): every key known,
    every field without a default given."""
    if not isinstance(value, Mapping):
        raise InputError("config", key or "(top level)", f"{value!r} is not a mapping")
    fields = {f.name: f for f in dataclasses.fields(kind)}
    for name in value:
        if name not in fields:
            raise InputError("config", _key(key, name), f"unknown key (known: {', '.join(fields)})")
    hints = typing.get_type_hints(kind)
    given = {}
    for name, spec in fields.items():
        if name in value:
            given[name] = _value(hints[name], value[name], _key(key, name))
        elif spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
            raise InputError("config", _key(key, name), "missing")
    try:
        return kind(**given)
    except ValueError as error:  # a block's own check of its values (e.g. `CodeRuns`)
        raise InputError("config", key, str(error)) from None


def _value(kind: Any, value: Any, key: str) -> Any:
    """`value` as the type `kind` asks, checked; an `InputError` naming `key` otherwise."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if dataclasses.is_dataclass(kind):
        return config_block(kind, value, key)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:  # an optional block or value: its own error, naming the key inside
            return _value(options[0], value, key)
        errors = []
        for option in options:
            try:
                return _value(option, value, key)
            except InputError as error:
                errors.append(error.problem)
        raise InputError("config", key, " and ".join(dict.fromkeys(errors)))
    if origin is Literal:
        if value not in args:
            raise InputError("config", key, f"{value!r} is not one of {', '.join(map(str, args))}")
        return value
    if origin in (tuple, frozenset):
        return _sequence(origin, args, value, key)
    if origin is Mapping:
        if not isinstance(value, Mapping):
            raise InputError("config", key, f"{value!r} is not a mapping")
        return {name: _value(args[1], item, _key(key, name)) for name, item in value.items()}
    if kind is Any:
        return value
    return _scalar(kind, value, key)


def _sequence(origin: type, args: tuple, value: Any, key: str) -> Any:
    """A YAML list as the tuple (of one type, or one per position) or the frozenset `origin` asks."""
    if not isinstance(value, list | tuple):
        raise InputError("config", key, f"{value!r} is not a list")
    if origin is frozenset or args[-1] is Ellipsis:
        return origin(_value(args[0], item, f"{key}[{i}]") for i, item in enumerate(value))
    if len(value) != len(args):
        raise InputError("config", key, f"{value!r} is not a list of {len(args)}")
    return tuple(_value(a, item, f"{key}[{i}]") for i, (a, item) in enumerate(zip(args, value)))


_SCALARS = {int: (int,), float: (int, float), str: (str,), bool: (bool,)}


def _scalar(kind: type, value: Any, key: str) -> Any:
    """An int, float (an int too, as YAML writes 1 for 1.0), str or bool; never a bool for a number."""
    if isinstance(value, _SCALARS[kind]) and (kind is bool or not isinstance(value, bool)):
        return value
    raise InputError("config", key, f"{value!r} is not {'an' if kind is int else 'a'} {kind.__name__}")
