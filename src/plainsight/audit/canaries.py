"""Canaries built to be found in released synthetic text (Meeus et al. 2025, "The Canary's Echo").

A canary is a sentence of the corpus itself (the prefix: in-distribution, so a model writing
in-distribution text reaches it) followed by a suffix of random word tokens whose perplexity under
the base model, given the prefix, is a configured target (high: the suffix is what an n-gram model
of the released corpus can single out). The suffix is drawn token by token: each next token is drawn
among the `nearest_tokens` allowed tokens whose surprisal under the base model is nearest the one
that brings the running mean to log(target), so the suffix ends at the target perplexity.

Half the canaries are members: each goes into `repeats` training segments of distinct documents (so
into as many privacy units), at the start of the segment, where training's truncation and the
in-context prompts' shortening never cut it. The segments are those of the in-context context pools,
which every trained method fine-tunes on too, so in-context prompts show a member at a rate that
grows with its repeats. The other half, built the same way, are never inserted: the non-members.
A segment takes at most one canary.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from plainsight.entities import SegmentKey
from plainsight.errors import InputError
from plainsight.rng import stable_rng

# A sentence ends at . ! or ? before white space and a capital, a quote or an opening bracket.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])")
SUFFIX_ATTEMPTS = 4  # draws of a suffix before its miss of the target stops the build


@dataclass(frozen=True)
class CanaryDesign:
    """The form of every canary (resources/canaries.yaml)."""

    prefix_min_words: int
    prefix_max_words: int
    suffix_tokens: int
    target_perplexity: float
    tolerance: float  # the suffix's perplexity lies within target x (1 +- tolerance)
    nearest_tokens: int
    token_pattern: str  # a suffix token's text must match it

    def within_tolerance(self, perplexity: float) -> bool:
        return abs(perplexity / self.target_perplexity - 1) <= self.tolerance


@dataclass(frozen=True)
class CanaryPlan:
    """How many canaries, inserted how often (`audit.canaries`)."""

    per_repeat: int  # member canaries per insertion count, and as many non-members per count
    repeats: tuple[int, ...]  # insertion counts, e.g. 1, 4, 16
    seed: int

    @property
    def members(self) -> list[int]:
        """The insertion count of each member canary, in order."""
        return [repeats for repeats in self.repeats for _ in range(self.per_repeat)]


@dataclass(frozen=True)
class Canary:
    canary_id: str
    member: bool
    repeats: int  # segments it was inserted into (0 for a non-member)
    prefix: str
    suffix: str  # starts with a space
    perplexity: float  # of the suffix given the prefix, under the base model
    segments: tuple[SegmentKey, ...] = ()  # where it was inserted

    @property
    def text(self) -> str:
        return self.prefix + self.suffix

    def record(self) -> dict:
        return {
            "canary_id": self.canary_id,
            "member": self.member,
            "repeats": self.repeats,
            "prefix": self.prefix,
            "suffix": self.suffix,
            "perplexity": self.perplexity,
            "segments": [[doc_id, segment] for doc_id, segment in self.segments],
        }

    @classmethod
    def from_record(cls, record: Mapping) -> Canary:
        segments = tuple((str(doc_id), int(segment)) for doc_id, segment in record["segments"])
        return cls(
            str(record["canary_id"]),
            bool(record["member"]),
            int(record["repeats"]),
            str(record["prefix"]),
            str(record["suffix"]),
            float(record["perplexity"]),
            segments,
        )


def read_canary_design(path: str) -> CanaryDesign:
    """The canary design of a YAML file; a missing or out-of-range setting is a one-line error."""
    import yaml

    from plainsight.io import read_text_utf8

    spec = yaml.safe_load(read_text_utf8(path)) or {}
    try:
        design = CanaryDesign(
            int(spec["prefix_words"]["min"]),
            int(spec["prefix_words"]["max"]),
            int(spec["suffix_tokens"]),
            float(spec["target_perplexity"]),
            float(spec["tolerance"]),
            int(spec["nearest_tokens"]),
            str(spec["token_pattern"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(path, None, f"canary design incomplete or not a number: {error}") from None
    for key, valid in [
        ("prefix_words", 1 <= design.prefix_min_words <= design.prefix_max_words),
        ("suffix_tokens", design.suffix_tokens >= 1),
        ("target_perplexity", design.target_perplexity > 1),
        ("tolerance", 0 < design.tolerance < 1),
        ("nearest_tokens", design.nearest_tokens >= 1),
    ]:
        if not valid:
            raise InputError(path, key, "out of range (see the comments of resources/canaries.yaml)")
    re.compile(design.token_pattern)
    return design


def check_plan(plan: CanaryPlan) -> None:
    if plan.per_repeat < 1 or not plan.repeats or min(plan.repeats) < 1:
        raise ValueError(
            f"audit.canaries: per_repeat {plan.per_repeat} and repeats {list(plan.repeats)} must be >= 1"
        )
    if len(set(plan.repeats)) != len(plan.repeats):
        raise ValueError(f"audit.canaries.repeats holds a count twice: {list(plan.repeats)}")


# --- prefixes ------------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """The sentences of a text: its lines split after . ! or ? (a heading line is one sentence)."""
    return [part.strip() for line in text.splitlines() for part in _SENTENCE_END.split(line) if part.strip()]


def prefix_sentences(texts: Sequence[str], design: CanaryDesign) -> list[str]:
    """The distinct sentences of `texts` that may start a canary: ending in . ! or ?, with the
    designed number of words; sorted, so a seeded draw does not depend on the texts' order."""
    found = {
        sentence
        for text in texts
        for sentence in sentences(text)
        if sentence[-1] in ".!?"
        and design.prefix_min_words <= len(sentence.split()) <= design.prefix_max_words
    }
    return sorted(found)


def draw_prefixes(candidates: Sequence[str], count: int, seed: int) -> list[str]:
    if count > len(candidates):
        raise ValueError(
            f"{count} canaries need as many distinct prefix sentences; the training segments hold "
            f"{len(candidates)} of the designed length"
        )
    return stable_rng(seed, "canary prefixes").sample(list(candidates), count)


# --- suffixes ------------------------------------------------------------------------------------


def allowed_tokens(tokenizer, pattern: str):
    """A boolean mask over the vocabulary: the tokens whose text matches `pattern` (by default a space
    and letters: whole words, which keep their tokens when the suffix is tokenised again)."""
    import torch

    compiled = re.compile(pattern)
    special = set(tokenizer.all_special_ids)
    mask = torch.tensor(
        [
            token not in special and bool(compiled.fullmatch(tokenizer.decode([token])))
            for token in range(len(tokenizer))
        ]
    )
    if not mask.any():
        raise ValueError(f"no token of the vocabulary matches the suffix pattern {pattern!r}")
    return mask


def steered_suffix(model, tokenizer, prefix: str, design: CanaryDesign, allowed, seed: object) -> str:
    """A suffix of `design.suffix_tokens` allowed tokens after `prefix`, each drawn (seeded) among the
    `nearest_tokens` whose surprisal is nearest the one that brings the mean to log(target), those
    within log(1 + tolerance) of it where there are several (else the nearest alone)."""
    import torch

    generator = torch.Generator().manual_seed(stable_rng(seed).getrandbits(63))
    device = next(model.parameters()).device
    ids = tokenizer(prefix, add_special_tokens=False).input_ids
    target, total, chosen = math.log(design.target_perplexity), 0.0, []
    window = math.log1p(design.tolerance)
    with torch.inference_mode():
        for step in range(design.suffix_tokens):
            logits = model(input_ids=torch.tensor([ids + chosen], device=device)).logits[0, -1]
            surprisal = -logits.float().log_softmax(-1).cpu()[: len(allowed)]
            needed = (step + 1) * target - total
            distance = (surprisal - needed).abs().masked_fill(~allowed, math.inf)
            nearest = distance.topk(min(design.nearest_tokens, int(allowed.sum())), largest=False)
            close = nearest.indices[nearest.values <= max(float(nearest.values[0]), window)]
            token = int(close[torch.randint(len(close), (1,), generator=generator)])
            total += float(surprisal[token])
            chosen.append(token)
    return tokenizer.decode(chosen)


def suffix_on_target(
    model, tokenizer, prefix: str, design: CanaryDesign, allowed, seed: object
) -> tuple[str, float]:
    """A steered suffix and its perplexity given the prefix; drawn again (up to SUFFIX_ATTEMPTS times,
    each seeded) while it misses the target, as when a token leaves no word likely after it."""
    for attempt in range(SUFFIX_ATTEMPTS):
        suffix = steered_suffix(model, tokenizer, prefix, design, allowed, (seed, attempt))
        perplexity = suffix_perplexities(model, tokenizer, [prefix], [suffix])[0]
        if design.within_tolerance(perplexity):
            break
    return suffix, perplexity


def suffix_log_probs(model, tokenizer, contexts: Sequence[str], suffixes: Sequence[str], batch_size: int = 8):
    """Log-probability of each suffix's tokens after its context (each tokenised on its own), as
    arrays: the attacks' and the design check's one scoring pass."""
    from plainsight.audit.membership import document_log_probs
    from plainsight.training.examples import TrainingExample
    from plainsight.training.objectives import IGNORE_INDEX

    examples = []
    for number, (context, suffix) in enumerate(zip(contexts, suffixes)):
        context_ids = tokenizer(context, add_special_tokens=False).input_ids
        suffix_ids = tokenizer(suffix, add_special_tokens=False).input_ids
        examples.append(
            TrainingExample(
                ("canary", number),
                context_ids + suffix_ids,
                [IGNORE_INDEX] * len(context_ids) + suffix_ids,
                [False] * (len(context_ids) + len(suffix_ids)),
            )
        )
    return document_log_probs(model, examples, tokenizer.pad_token_id, batch_size)


def suffix_perplexities(model, tokenizer, prefixes: Sequence[str], suffixes: Sequence[str]) -> list[float]:
    """exp(mean surprisal) of each suffix given its prefix, under `model`."""
    return [
        math.exp(-float(values.mean())) for values in suffix_log_probs(model, tokenizer, prefixes, suffixes)
    ]


def built_canaries(
    model, tokenizer, prefixes: Sequence[str], design: CanaryDesign, plan: CanaryPlan, design_file: str
) -> list[Canary]:
    """One canary per prefix: the first len(plan.members) of a seeded shuffle are the members (with
    their insertion counts), the rest non-members; every suffix is checked against the target."""
    allowed = allowed_tokens(tokenizer, design.token_pattern)
    drawn = [
        suffix_on_target(model, tokenizer, prefix, design, allowed, (plan.seed, "canary suffix", number))
        for number, prefix in enumerate(prefixes)
    ]
    suffixes, perplexities = [suffix for suffix, _ in drawn], [perplexity for _, perplexity in drawn]
    for number, perplexity in enumerate(perplexities):
        if not design.within_tolerance(perplexity):
            raise InputError(
                design_file,
                "target_perplexity",
                f"canary {number}'s suffix reaches perplexity {perplexity:.1f}, not "
                f"{design.target_perplexity:g} +- {design.tolerance:.0%}: the base model cannot reach it "
                "with the allowed tokens",
            )
    order = list(range(len(prefixes)))
    stable_rng(plan.seed, "canary members").shuffle(order)
    repeats_of = dict(zip(order, plan.members))
    return [
        Canary(f"c{number:03d}", number in repeats_of, repeats_of.get(number, 0), prefix, suffix, perplexity)
        for number, (prefix, suffix, perplexity) in enumerate(zip(prefixes, suffixes, perplexities))
    ]


# --- insertion -----------------------------------------------------------------------------------


def host_segments(codes: pd.DataFrame, context_documents: int) -> list[SegmentKey]:
    """The segments canaries may go into: those of the in-context context pools, all fine-tuning
    segments too."""
    from plainsight.methods.in_context import context_pool

    return [
        (str(doc_id), int(segment))
        for range_ in sorted(codes["segment"].unique())
        for doc_id, segment in context_pool(codes, range_, context_documents)
    ]


def assign_segments(canaries: Sequence[Canary], hosts: Sequence[SegmentKey], seed: int) -> list[Canary]:
    """Each member canary with `repeats` host segments of distinct documents, one canary per segment;
    the most repeated canaries are placed first (seeded draws)."""
    rng = stable_rng(seed, "canary segments")
    free: dict[str, list[SegmentKey]] = {}
    for key in hosts:
        free.setdefault(key[0], []).append(key)
    placed = {}
    for canary in sorted((c for c in canaries if c.member), key=lambda c: (-c.repeats, c.canary_id)):
        documents = sorted(doc for doc, keys in free.items() if keys)
        if canary.repeats > len(documents):
            needed = sum(c.repeats for c in canaries)
            raise ValueError(
                f"the canaries need {needed} segments, {canary.repeats} of them in distinct documents, and "
                f"the context pools hold {len(hosts)} segments of {len(free)} documents: lower "
                "audit.canaries.per_repeat or its largest repeats"
            )
        chosen = [
            free[doc].pop(rng.randrange(len(free[doc]))) for doc in rng.sample(documents, canary.repeats)
        ]
        placed[canary.canary_id] = tuple(sorted(chosen))
    return [replace(c, segments=placed.get(c.canary_id, ())) for c in canaries]


def canaried_docs(docs: pd.DataFrame, canaries: Sequence[Canary]) -> pd.DataFrame:
    """docs.parquet with each member canary as the first paragraph of its segments."""
    text_of = {key: canary.text for canary in canaries for key in canary.segments}
    keys = zip(docs["doc_id"].astype(str), docs["segment"].astype(int))
    out = docs.copy()
    out["text"] = [
        f"{text_of[key]}\n\n{text}" if key in text_of else text for key, text in zip(keys, docs["text"])
    ]
    return out


# --- rule canary_docs ----------------------------------------------------------------------------


def audit_delta(docs: pd.DataFrame, codes: pd.DataFrame, dp: Mapping) -> float:
    """The delta every empirical epsilon is stated at: the DP-SGD run's (`dpsgd.delta`, else its
    default for the fine-tuning set's privacy units)."""
    from plainsight.training.dp import default_delta

    if dp["delta"] is not None:
        return float(dp["delta"])
    train = codes[codes["split"] == "train"]
    if dp["privacy_unit"] == "sequence":
        return default_delta(len(train))
    unit_of = dict(zip(docs["doc_id"].astype(str), docs["unit_id"].astype(str)))
    return default_delta(len({unit_of[doc] for doc in train["doc_id"].astype(str)}))


@dataclass(frozen=True)
class CanaryDocsJob:
    """Rule `canary_docs`: its inputs, settings and outputs."""

    docs: str
    codes: str
    design: str
    model: str
    placement: Mapping
    plan: CanaryPlan
    context_documents: int  # generation.context_documents: the context pools' need
    dp: Mapping  # the `dpsgd` config block (delta, privacy_unit)
    docs_out: str
    canaries_out: str
    threads: int = 1

    @classmethod
    def from_snakemake(cls, job) -> CanaryDocsJob:
        """The job of a `plainsight.snakemake_job.RuleJob` of rule `canary_docs`."""
        params = job.params
        return cls(
            job.input.docs,
            job.input.codes,
            job.input.design,
            params.model,
            params.placement,
            CanaryPlan(int(params.plan["per_repeat"]), tuple(params.plan["repeats"]), job.seed),
            int(params.context_documents),
            params.dp,
            job.output.docs,
            job.output.canaries,
            job.threads,
        )


def write_canaries(job: CanaryDocsJob) -> None:
    """The canaries (with the delta their epsilon bounds are stated at) and the set they went into."""
    import torch

    from plainsight.data.segments import segment_texts
    from plainsight.io import write_json, write_parquet
    from plainsight.methods.trained import training_keys
    from plainsight.models import load_model, resolve_placement

    check_plan(job.plan)
    design = read_canary_design(job.design)
    docs, codes = pd.read_parquet(job.docs), pd.read_parquet(job.codes)
    texts = segment_texts(docs)
    training = [texts[key] for key in training_keys(codes)]
    prefixes = draw_prefixes(prefix_sentences(training, design), 2 * len(job.plan.members), job.plan.seed)
    torch.set_num_threads(job.threads)
    model, tokenizer = load_model(job.model, *resolve_placement(job.placement))
    canaries = built_canaries(model.eval(), tokenizer, prefixes, design, job.plan, job.design)
    canaries = assign_segments(canaries, host_segments(codes, job.context_documents), job.plan.seed)
    write_parquet(canaried_docs(docs, canaries), job.docs_out)
    record = {
        "delta": audit_delta(docs, codes, job.dp),
        "target_perplexity": design.target_perplexity,
        "canaries": [canary.record() for canary in canaries],
    }
    write_json(record, job.canaries_out)


def read_canaries(path: str) -> tuple[list[Canary], float]:
    """The canaries of a `canary_docs` record, and its delta."""
    from plainsight.io import read_json

    record = read_json(path)
    return [Canary.from_record(c) for c in record["canaries"]], float(record["delta"])
