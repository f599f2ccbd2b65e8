"""Canaries built to be found in released synthetic text (Meeus et al. 2025, "The Canary's Echo"),
audited in one training run (Steinke, Nasr and Jagielski 2023).

A canary is a sentence of the corpus itself (the prefix: in-distribution, so a model writing
in-distribution text reaches it) followed by a suffix of random word tokens whose perplexity under
the base model, given the prefix, is a configured target (high: the suffix is what an n-gram model
of the released corpus can single out). The suffix is drawn token by token: each next token is drawn
among the `nearest_tokens` allowed tokens whose surprisal under the base model is nearest the one
that brings the running mean to log(target), so the suffix ends at the target perplexity.

Every candidate canary is included in training by a fair coin of its own (seeded, recorded as
`member`); the others are the non-members. The one-run analysis needs exactly that: independent coins,
not a fixed-size shuffle. Two kinds:

- single-insertion canaries (`single`), the per-unit audit: an included one becomes a short training
  document of its own, a privacy unit of its own, so its coin adds or removes one unit, the change a
  per-unit guarantee bounds. Its prefix names a value of its source segment's code, and the values it
  names are its document's code: in-context prompts draw their contexts among the coded segments.
- multi-insertion canaries (`per_repeat` for each count of `repeats`): an included one goes into that
  many training segments of distinct documents, at the start of the segment, where training's
  truncation and the in-context prompts' shortening never cut it; evidence of memorisation, bounding
  a group of that many units. The segments are those of the in-context context pools, which every
  trained method fine-tunes on too. A segment takes at most one canary.

Rule `canary_docs` also adds the canary persons (`plainsight.audit.canary_persons`): fictional persons
whose details are spread over several documents of one privacy unit, each person in or out by a coin.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from plainsight.audit.canary_persons import (
    PersonPlan,
    check_person_plan,
    drawn_persons,
    person_code_rows,
    person_document_rows,
    placed_persons,
    read_person_design,
)
from plainsight.codes.control_code import Entities, entities_to_records, format_code, records_to_entities
from plainsight.entities import SegmentKey
from plainsight.errors import InputError
from plainsight.methods.trained import privacy_units
from plainsight.rng import stable_rng
from plainsight.settings import dp_delta

# A sentence ends at . ! or ? before white space and a capital, a quote or an opening bracket.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])")
SUFFIX_ATTEMPTS = 4  # draws of a suffix before its miss of the target stops the build
OWN_DOCUMENT = "canary-"  # the doc_id (and unit_id) of a single-insertion canary's document: this + its id


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
    """How many candidate canaries of each kind (`audit.canaries`)."""

    single: int  # candidates inserted once, each as a training document of its own
    per_repeat: int  # candidates per count of `repeats`
    repeats: tuple[int, ...]  # insertion counts of the multi-insertion candidates, e.g. 4, 16
    seed: int

    @property
    def kinds(self) -> list[int]:
        """The insertion count of each candidate, in order: the single ones first."""
        return [1] * self.single + [count for count in self.repeats for _ in range(self.per_repeat)]

    def coins(self) -> list[bool]:
        """Each candidate's fair coin (True: included in training), drawn on its own, seeded."""
        return [
            stable_rng(self.seed, "canary coin", number).random() < 0.5 for number in range(len(self.kinds))
        ]


@dataclass(frozen=True)
class Canary:
    canary_id: str
    member: bool  # its coin: included in training
    repeats: int  # the insertion count of its kind (1: a document of its own), included or not
    prefix: str
    suffix: str  # starts with a space
    perplexity: float  # of the suffix given the prefix, under the base model
    segments: tuple[SegmentKey, ...] = ()  # where it went into training (none for a non-member)
    source: SegmentKey | None = None  # the training segment its prefix was taken from

    @property
    def text(self) -> str:
        return self.prefix + self.suffix

    @property
    def own_document(self) -> str:
        return OWN_DOCUMENT + self.canary_id

    def record(self) -> dict:
        return {
            "canary_id": self.canary_id,
            "member": self.member,
            "repeats": self.repeats,
            "prefix": self.prefix,
            "suffix": self.suffix,
            "perplexity": self.perplexity,
            "segments": [[doc_id, segment] for doc_id, segment in self.segments],
            "source": None if self.source is None else list(self.source),
        }

    @classmethod
    def from_record(cls, record: Mapping) -> Canary:
        segments = tuple((str(doc_id), int(segment)) for doc_id, segment in record["segments"])
        source = record.get("source")
        return cls(
            str(record["canary_id"]),
            bool(record["member"]),
            int(record["repeats"]),
            str(record["prefix"]),
            str(record["suffix"]),
            float(record["perplexity"]),
            segments,
            None if source is None else (str(source[0]), int(source[1])),
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
    if plan.single < 2:
        raise ValueError(
            f"audit.canaries.single {plan.single}: the per-unit audit needs at least 2 candidates"
        )
    if plan.repeats and (plan.per_repeat < 1 or min(plan.repeats) < 2):
        raise ValueError(
            f"audit.canaries: per_repeat {plan.per_repeat} must be >= 1 and repeats {list(plan.repeats)} "
            ">= 2 (the single-insertion candidates are `single`)"
        )
    if len(set(plan.repeats)) != len(plan.repeats):
        raise ValueError(f"audit.canaries.repeats holds a count twice: {list(plan.repeats)}")


def check_room(plan: CanaryPlan, hosts: Sequence[SegmentKey]) -> None:
    """The multi-insertion candidates fit the host segments even if every coin includes them, so that
    whether a plan fits never depends on its coins."""
    documents = len({doc for doc, _ in hosts})
    needed = plan.per_repeat * sum(plan.repeats)
    if needed > len(hosts) or max(plan.repeats, default=0) > documents:
        raise ValueError(
            f"the multi-insertion canaries need up to {needed} segments, up to {max(plan.repeats)} of them "
            f"in distinct documents, and the context pools hold {len(hosts)} segments of {documents} "
            "documents: lower audit.canaries.per_repeat or its largest repeats"
        )


# --- prefixes ------------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """The sentences of a text: its lines split after . ! or ? (a heading line is one sentence)."""
    return [part.strip() for line in text.splitlines() for part in _SENTENCE_END.split(line) if part.strip()]


@dataclass(frozen=True)
class PrefixSource:
    """A sentence that may start a canary, the first training segment (in key order) that holds it,
    and the values of that segment's code the sentence names."""

    sentence: str
    source: SegmentKey
    entities: Entities


def named_values(sentence: str, entities: Entities) -> Entities:
    """The (type, value) pairs whose value the sentence holds as whole words, in the code's order."""
    return [
        (kind, value) for kind, value in entities if re.search(rf"(?<!\w){re.escape(value)}(?!\w)", sentence)
    ]


def prefix_sources(
    texts: Mapping[SegmentKey, str], entities_of: Mapping[SegmentKey, Entities], design: CanaryDesign
) -> list[PrefixSource]:
    """The distinct sentences of the segments `texts` that may start a canary: ending in . ! or ?,
    with the designed number of words; sorted, so a seeded draw does not depend on the texts' order."""
    found: dict[str, SegmentKey] = {}
    for key in sorted(texts):
        for sentence in sentences(texts[key]):
            if (
                sentence[-1] in ".!?"
                and design.prefix_min_words <= len(sentence.split()) <= design.prefix_max_words
            ):
                found.setdefault(sentence, key)
    return [
        PrefixSource(sentence, key, named_values(sentence, entities_of.get(key, [])))
        for sentence, key in sorted(found.items())
    ]


def draw_prefixes(sources: Sequence[PrefixSource], plan: CanaryPlan) -> list[PrefixSource]:
    """A prefix per candidate, seeded: the single-insertion ones among the sentences that name a value
    of their segment's code (their document's code), the multi-insertion ones among the rest."""
    coded = [source for source in sources if source.entities]
    if plan.single > len(coded):
        raise ValueError(
            f"{plan.single} single-insertion canaries need as many distinct prefix sentences naming a value "
            f"of their segment's code; the training segments hold {len(coded)} of the designed length"
        )
    rng = stable_rng(plan.seed, "canary prefixes")
    single = rng.sample(coded, plan.single)
    taken = {source.sentence for source in single}
    rest = [source for source in sources if source.sentence not in taken]
    multi = len(plan.kinds) - plan.single
    if multi > len(rest):
        raise ValueError(
            f"{len(plan.kinds)} canaries need as many distinct prefix sentences; the training segments hold "
            f"{len(sources)} of the designed length"
        )
    return single + rng.sample(rest, multi)


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
    """One canary per prefix, of the plan's kinds in order and included by the plan's coins; every
    suffix is checked against the target."""
    if len(prefixes) != len(plan.kinds):
        raise ValueError(f"{len(plan.kinds)} canaries planned, {len(prefixes)} prefixes given")
    allowed = allowed_tokens(tokenizer, design.token_pattern)
    drawn = [
        suffix_on_target(model, tokenizer, prefix, design, allowed, (plan.seed, "canary suffix", number))
        for number, prefix in enumerate(prefixes)
    ]
    for number, (_, perplexity) in enumerate(drawn):
        if not design.within_tolerance(perplexity):
            raise InputError(
                design_file,
                "target_perplexity",
                f"canary {number}'s suffix reaches perplexity {perplexity:.1f}, not "
                f"{design.target_perplexity:g} +- {design.tolerance:.0%}: the base model cannot reach it "
                "with the allowed tokens",
            )
    return [
        Canary(f"c{number:03d}", included, kind, prefix, suffix, perplexity)
        for number, (prefix, (suffix, perplexity), kind, included) in enumerate(
            zip(prefixes, drawn, plan.kinds, plan.coins())
        )
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
    """Each included multi-insertion canary with `repeats` host segments of distinct documents, one
    canary per segment; the most repeated canaries are placed first (seeded draws)."""
    rng = stable_rng(seed, "canary segments")
    free: dict[str, list[SegmentKey]] = {}
    for key in hosts:
        free.setdefault(key[0], []).append(key)
    placed = {}
    inserted = (c for c in canaries if c.member and c.repeats > 1)
    for canary in sorted(inserted, key=lambda c: (-c.repeats, c.canary_id)):
        documents = sorted(doc for doc, keys in free.items() if keys)
        if canary.repeats > len(documents):
            raise ValueError(
                f"canary {canary.canary_id} needs {canary.repeats} segments of distinct documents and "
                f"{len(documents)} documents have a free one: lower audit.canaries.per_repeat or its "
                "largest repeats"
            )
        chosen = [
            free[doc].pop(rng.randrange(len(free[doc]))) for doc in rng.sample(documents, canary.repeats)
        ]
        placed[canary.canary_id] = tuple(sorted(chosen))
    return [replace(c, segments=placed.get(c.canary_id, c.segments)) for c in canaries]


def own_documents(canaries: Sequence[Canary]) -> list[Canary]:
    """Each included single-insertion canary placed in a document of its own, in its source segment's
    paragraph range (so it joins that range's context pool)."""
    return [
        replace(c, segments=((c.own_document, c.source[1]),))
        if c.member and c.repeats == 1 and c.source is not None
        else c
        for c in canaries
    ]


def _own(canaries: Sequence[Canary]) -> list[Canary]:
    """The single-insertion canaries `own_documents` placed."""
    return [c for c in canaries if c.repeats == 1 and c.segments]


def canaried_docs(docs: pd.DataFrame, canaries: Sequence[Canary]) -> pd.DataFrame:
    """docs.parquet with each included multi-insertion canary as the first paragraph of its segments,
    and a row per single-insertion document: the canary alone, its own unit, with the rest of its
    source segment's row (split, paragraph range, metadata)."""
    text_of = {key: c.text for c in canaries if c.repeats > 1 for key in c.segments}
    keys = zip(docs["doc_id"].astype(str), docs["segment"].astype(int))
    out = docs.copy()
    out["text"] = [
        f"{text_of[key]}\n\n{text}" if key in text_of else text for key, text in zip(keys, docs["text"])
    ]
    return with_rows_of(
        out,
        [
            (c.source, {"doc_id": c.own_document, "unit_id": c.own_document, "text": c.text})
            for c in _own(canaries)
        ],
    )


def canaried_codes(codes: pd.DataFrame, canaries: Sequence[Canary]) -> pd.DataFrame:
    """codes.parquet with a row per single-insertion document: the values of its source segment's code
    that its prefix names."""
    entities_of = {
        (str(doc_id), int(segment)): records_to_entities(records)
        for doc_id, segment, records in zip(codes["doc_id"], codes["segment"], codes["entities"])
    }
    added = []
    for c in _own(canaries):
        entities = named_values(c.prefix, entities_of[c.source])
        added.append(
            (
                c.source,
                {
                    "doc_id": c.own_document,
                    "code": format_code(entities),
                    "entities": entities_to_records(entities),
                },
            )
        )
    return with_rows_of(codes, added)


def with_rows_of(table: pd.DataFrame, added: Sequence[tuple[SegmentKey, Mapping]]) -> pd.DataFrame:
    """`table` (docs or codes) with a row per (source segment, changes): the source's row with the
    changes applied; `table` itself where nothing is added."""
    if not added:
        return table
    row_of = {(str(r["doc_id"]), int(r["segment"])): r for r in table.to_dict("records")}
    rows = [{**row_of[source], **changes} for source, changes in added]
    return pd.concat([table, pd.DataFrame(rows, columns=table.columns)], ignore_index=True)


# --- rule canary_docs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CanaryDocsJob:
    """Rule `canary_docs`: its inputs, settings and outputs."""

    docs: str
    codes: str
    design: str
    model: str
    placement: Mapping
    plan: CanaryPlan
    persons: PersonPlan
    identifier_set: str  # the run's: which of a canary person's details its documents' codes hold
    context_documents: int  # generation.context_documents: the context pools' need
    delta: float | None  # dpsgd.delta
    privacy_unit: str  # dpsgd.privacy_unit
    docs_out: str
    codes_out: str
    canaries_out: str
    threads: int = 1

    @classmethod
    def from_snakemake(cls, job) -> CanaryDocsJob:
        """The job of a `plainsight.snakemake_job.RuleJob` of rule `canary_docs`."""
        params = job.params
        return cls(
            docs=job.input.docs,
            codes=job.input.codes,
            design=job.input.design,
            model=params.model,
            placement=params.placement,
            plan=CanaryPlan(
                int(params.plan["single"]),
                int(params.plan["per_repeat"]),
                tuple(params.plan["repeats"]),
                job.seed,
            ),
            persons=PersonPlan(int(params.persons["count"]), int(params.persons["documents"]), job.seed),
            identifier_set=job.wildcards.idset,
            context_documents=int(params.context_documents),
            delta=params.delta,
            privacy_unit=params.privacy_unit,
            docs_out=job.output.docs,
            codes_out=job.output.codes,
            canaries_out=job.output.canaries,
            threads=job.threads,
        )


def write_canaries(job: CanaryDocsJob) -> None:
    """The canaries and canary persons (with the delta their epsilon bounds are stated at) and the set
    they went into: its documents and its codes (the single-insertion canaries' and the included
    persons' documents added)."""
    import torch

    from plainsight.data.segments import segment_texts
    from plainsight.io import write_json, write_parquet
    from plainsight.methods.trained import training_keys
    from plainsight.models import load_model, resolve_placement

    check_plan(job.plan)
    check_person_plan(job.persons)
    design = read_canary_design(job.design)
    person_design = read_person_design(job.design)
    docs, codes = pd.read_parquet(job.docs), pd.read_parquet(job.codes)
    hosts = host_segments(codes, job.context_documents)
    check_room(job.plan, hosts)
    texts = segment_texts(docs)
    entities_of = {
        (str(r.doc_id), int(r.segment)): records_to_entities(r.entities)
        for r in codes.itertuples(index=False)
    }
    training = {key: texts[key] for key in training_keys(codes)}
    prefixes = draw_prefixes(prefix_sources(training, entities_of, design), job.plan)
    torch.set_num_threads(job.threads)
    model, tokenizer = load_model(job.model, *resolve_placement(job.placement))
    built = built_canaries(
        model.eval(), tokenizer, [p.sentence for p in prefixes], design, job.plan, job.design
    )
    canaries = [replace(c, source=p.source) for c, p in zip(built, prefixes)]
    canaries = own_documents(assign_segments(canaries, hosts, job.plan.seed))
    persons = placed_persons(drawn_persons(person_design, job.persons), list(training), job.persons.seed)
    docs_out = with_rows_of(canaried_docs(docs, canaries), person_document_rows(persons))
    codes_out = with_rows_of(canaried_codes(codes, canaries), person_code_rows(persons, job.identifier_set))
    write_parquet(docs_out, job.docs_out)
    write_parquet(codes_out, job.codes_out)
    record = {
        # every empirical epsilon is stated at the DP-SGD run's delta, over the canaried set's units
        "delta": dp_delta(job.delta, privacy_units(docs_out, codes_out, job.privacy_unit)),
        "target_perplexity": design.target_perplexity,
        "canaries": [canary.record() for canary in canaries],
        "persons": [person.record() for person in persons],
    }
    write_json(record, job.canaries_out)


def read_canaries(path: str) -> tuple[list[Canary], float]:
    """The canaries of a `canary_docs` record, and its delta."""
    from plainsight.io import read_json

    record = read_json(path)
    return [Canary.from_record(c) for c in record["canaries"]], float(record["delta"])
