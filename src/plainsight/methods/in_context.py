"""In-context methods: which real segments each generation shows, and its prompt.

- baseline: three real training documents, no codes; the model writes a fourth.
- icl: three (real code, document) pairs, then a fictional code.
- icl_pe: as icl, with the values of the three real codes blocked while decoding
  (`Blocking`: whole values, as the paper; or also their distinctive words).

Contexts are drawn per (seed, segment range, generation) and are the same for
all three methods, so their results pair up generation by generation.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from plainsight.code_runs import DEFAULT_CODE_RUNS, CodeRuns
from plainsight.codes.control_code import Entities, format_code, records_to_entities
from plainsight.codes.fictional import EXCLUDED_TYPES, Drawer
from plainsight.entities import ENTITY_TYPES
from plainsight.matching import private_parts, public_words, unique_values
from plainsight.methods import registry
from plainsight.methods.planned import PlannedGeneration
from plainsight.methods.prompts import Example, fit_to_budget, render
from plainsight.methods.registry import Method
from plainsight.rng import stable_rng

BLOCKING_MODES = ("values", "values_and_parts")


@dataclass(frozen=True)
class Blocking:
    """What a method that blocks its context values blocks while decoding.

    `values`: each value of the context codes, whole (the paper). `values_and_parts`: also their
    distinctive words (`plainsight.matching.distinctive_words`: a person's name words; words of an
    organisation or place that the corpus does not use outside its private values, `common_words`),
    the near variants of those words (`plainsight.generation.blocking`), and the distinctive digit runs
    of their code values under any prefix, spacing or punctuation (`code_runs`, as the code-part leak
    measure reads them).
    """

    mode: str = "values"
    common_words: frozenset[str] = frozenset()
    code_runs: CodeRuns = DEFAULT_CODE_RUNS

    def __post_init__(self):
        if self.mode not in BLOCKING_MODES:
            raise ValueError(f"unknown blocking {self.mode!r}: expected one of {BLOCKING_MODES}")

    @classmethod
    def for_corpus(
        cls,
        mode: str,
        codes: pd.DataFrame,
        texts: dict[tuple[str, int], str],
        code_runs: CodeRuns,
    ) -> Blocking:
        """`mode` with the ordinary words of the corpus of `codes` and segment `texts`."""
        values = {
            key: [value for _, value in entities] for key, entities in _entities_by_segment(codes).items()
        }
        return cls(mode, public_words(texts, values), code_runs)

    def blocked(self, context_entities: list[Entities]) -> tuple[str, ...]:
        """The values and words that may not be written."""
        entities = [pair for entities in context_entities for pair in entities]
        values = [value for _, value in entities]
        if self.mode == "values_and_parts":
            values += private_parts(entities, self.common_words)
        return tuple(unique_values(values))

    def near_words(self, context_entities: list[Entities]) -> tuple[str, ...]:
        """The words whose near variants may not be written either."""
        if self.mode != "values_and_parts":
            return ()
        return tuple(
            private_parts([pair for entities in context_entities for pair in entities], self.common_words)
        )

    def digit_runs(self, context_entities: list[Entities]) -> tuple[str, ...]:
        """The digit runs that may not be written under any prefix, spacing or punctuation."""
        if self.mode != "values_and_parts":
            return ()
        return tuple(self.code_runs.distinctive(pair for entities in context_entities for pair in entities))


def context_pool(codes: pd.DataFrame, segment: int, needed: int = 3) -> list[tuple[str, int]]:
    """Training segments of one paragraph range that can serve as contexts.

    Segments with a non-empty code are preferred, so ICL prompts show codes;
    if fewer than needed have one, every training segment of the range is used.
    """
    train = codes[(codes["split"] == "train") & (codes["segment"] == segment)]
    with_code = train[train["code"] != ""]
    chosen = with_code if len(with_code) >= needed else train
    return sorted(zip(chosen["doc_id"], chosen["segment"]))


def target_template(context_entities: list[Entities]) -> Entities:
    """The real entities a target code stands for: the context codes' types (MISC left out), per type
    the mean count rounded (at least 1) of its values, taken in turn from each context that has it."""
    template: Entities = []
    for entity_type in ENTITY_TYPES:
        per_context = [
            [value for kind, value in entities if kind == entity_type] for entities in context_entities
        ]
        per_context = [values for values in per_context if values]
        if entity_type in EXCLUDED_TYPES or not per_context:
            continue
        count = max(1, round(sum(len(values) for values in per_context) / len(per_context)))
        in_turn = [
            values[i] for i in range(max(map(len, per_context))) for values in per_context if i < len(values)
        ]
        template.extend((entity_type, value) for value in in_turn[:count])
    return template


def fictional_target(context_entities: list[Entities], draw: Drawer, seed: object) -> Entities:
    """A fictional code for a prompt with these context codes: `draw` (the pools' values, or values in
    the shape of the context's) over `target_template`."""
    return draw(target_template(context_entities), stable_rng(seed))


def _in_context(name: str) -> Method:
    spec = registry.method(name)
    if not spec.in_context:
        raise ValueError(f"{name!r} is not an in-context method {registry.names('in_context')}")
    return spec


def _pools(codes: pd.DataFrame, context_documents: int) -> dict[int, list[tuple[str, int]]]:
    pools = {}
    for segment in sorted(codes["segment"].unique()):
        pool = context_pool(codes, segment, context_documents)
        if len(pool) < context_documents:
            raise ValueError(
                f"segment range {segment} has {len(pool)} training segments, "
                f"{context_documents} are needed per prompt"
            )
        pools[int(segment)] = pool
    return pools


def _planned(
    spec: Method,
    generation_id: int,
    segment: int,
    keys: tuple[tuple[str, int], ...],
    entities_of: dict[tuple[str, int], Entities],
    texts: dict[tuple[str, int], str],
    target: Entities,
    blocking: Blocking,
) -> PlannedGeneration:
    """One prompt: the context segments `keys` (with their real codes if the method shows codes), then
    `target`."""
    context_entities = [entities_of[key] for key in keys]
    real_codes = tuple(format_code(e) for e in context_entities)
    if not spec.shows_codes:
        examples = tuple(Example(texts[key]) for key in keys)
        target, target_code = [], None
    else:
        examples = tuple(Example(texts[key], code) for key, code in zip(keys, real_codes))
        target_code = format_code(target)
    if not spec.blocks_context_values:
        return PlannedGeneration(generation_id, segment, keys, examples, real_codes, target_code, target, ())
    return PlannedGeneration(
        generation_id,
        segment,
        keys,
        examples,
        real_codes,
        target_code,
        target,
        blocking.blocked(context_entities),
        blocking.near_words(context_entities),
        blocking.digit_runs(context_entities),
    )


def _entities_by_segment(codes: pd.DataFrame) -> dict[tuple[str, int], Entities]:
    return {(r.doc_id, r.segment): records_to_entities(r.entities) for r in codes.itertuples(index=False)}


def plan(
    method: str,
    codes: pd.DataFrame,
    texts: dict[tuple[str, int], str],
    draw: Drawer,
    seed: int,
    generations_per_segment: int,
    context_documents: int = 3,
    blocking: Blocking = Blocking(),
) -> list[PlannedGeneration]:
    """The generations of one method and seed, for every paragraph range, each with a fictional code."""
    spec = _in_context(method)
    entities_of = _entities_by_segment(codes)
    planned = []
    for segment, pool in _pools(codes, context_documents).items():
        for number in range(generations_per_segment):
            keys = tuple(stable_rng(seed, "contexts", segment, number).sample(pool, context_documents))
            target = fictional_target(
                [entities_of[key] for key in keys], draw, (seed, "fictional", segment, number)
            )
            planned.append(
                _planned(
                    spec,
                    segment * generations_per_segment + number,
                    segment,
                    keys,
                    entities_of,
                    texts,
                    target,
                    blocking,
                )
            )
    return planned


def plan_for_segments(
    method: str,
    codes: pd.DataFrame,
    texts: dict[tuple[str, int], str],
    targets: list[tuple[str, int]],
    seed: int,
    context_documents: int = 3,
    blocking: Blocking = Blocking(),
) -> list[PlannedGeneration]:
    """One generation per target segment, written from that segment's real code (utility: MAUVE).

    The contexts are training segments of the target's paragraph range, drawn per seed and target.
    """
    spec = _in_context(method)
    entities_of = _entities_by_segment(codes)
    pools = _pools(codes, context_documents)
    planned = []
    for number, (doc_id, segment) in enumerate(targets):
        keys = tuple(
            stable_rng(seed, "utility contexts", doc_id, segment).sample(pools[segment], context_documents)
        )
        planned.append(
            _planned(
                spec, number, segment, keys, entities_of, texts, entities_of[(doc_id, segment)], blocking
            )
        )
    return planned


def prompt_budget(max_prompt_tokens: int, max_new_tokens: int, context_size: int) -> int:
    """Tokens a prompt may take: the configured cap, leaving room for the new tokens in the model's
    context."""
    return min(max_prompt_tokens, context_size - max_new_tokens)


def fitted_prompts(planned: list[PlannedGeneration], tokenizer, budget: int) -> tuple[list[str], list[int]]:
    """The prompts, their context documents shortened to fit `budget`; and the tokens removed per prompt."""
    prompts, removed = [], []
    for generation in planned:
        examples, cut = fit_to_budget(list(generation.examples), generation.target_code, tokenizer, budget)
        prompts.append(render(examples, generation.target_code))
        removed.append(cut)
    return prompts, removed
