"""Trained methods (ft, ft_mask, dpsgd): which fictional codes a trained adapter writes from.

The prompt is a fictional control code alone. Each generation takes the fictional
code (of the run's seed) of one fine-tuning sample, so it has the same identifier
types as that sample's real code and ROUGE can be taken against the fine-tuning
documents of those types. The sample is recorded as the generation's context.
"""

from __future__ import annotations

import pandas as pd

from plainsight.codes.control_code import records_to_entities
from plainsight.methods import registry
from plainsight.methods.planned import PlannedGeneration
from plainsight.rng import stable_rng


def prompting_method() -> str:
    """The trained method whose prompts and decoding settings a corpus written from fictional codes without
    an adapter borrows (the audit's negative control): every trained method prompts alike, with a
    fictional code alone, so the first registered one."""
    return registry.names("trained")[0]


def training_keys(codes: pd.DataFrame) -> list[tuple[str, int]]:
    """The fine-tuning samples: every training segment, in a fixed order."""
    train = codes[codes["split"] == "train"]
    return sorted(zip(train["doc_id"].astype(str), train["segment"].astype(int)))


def privacy_units(docs: pd.DataFrame, codes: pd.DataFrame, privacy_unit: str) -> int:
    """The privacy units of the fine-tuning set of a run's `codes` (a DP-SGD run's N): its segments
    with `privacy_unit: sequence`, else the docs' `unit_id`s of its documents."""
    train = codes[codes["split"] == "train"]
    if privacy_unit == "sequence":
        return len(train)
    unit_of = dict(zip(docs["doc_id"].astype(str), docs["unit_id"].astype(str)))
    return len({unit_of[doc] for doc in train["doc_id"].astype(str)})


def plan(
    fictional: pd.DataFrame, codes: pd.DataFrame, seed: int, generations: int | None
) -> list[PlannedGeneration]:
    """One generation per fine-tuning sample, or `generations` samples drawn with the seed."""
    keys = training_keys(codes)
    if generations is not None and generations < len(keys):
        keys = sorted(stable_rng(seed, "ft samples").sample(keys, generations))
    fictional_of = {(str(r.doc_id), int(r.segment)): r for r in fictional.itertuples(index=False)}
    planned = []
    for number, key in enumerate(keys):
        if key not in fictional_of:
            raise ValueError(f"no fictional code for segment {key[1]} of document {key[0]}")
        row = fictional_of[key]
        planned.append(
            PlannedGeneration(number, key[1], (key,), (), (), row.code, records_to_entities(row.entities), ())
        )
    return planned


def plan_for_segments(codes: pd.DataFrame, targets: list[tuple[str, int]]) -> list[PlannedGeneration]:
    """One generation per target segment, prompted with that segment's real code (utility: MAUVE)."""
    rows = {(str(r.doc_id), int(r.segment)): r for r in codes.itertuples(index=False)}
    planned = []
    for number, key in enumerate(targets):
        row = rows[key]
        planned.append(
            PlannedGeneration(number, key[1], (), (), (), row.code, records_to_entities(row.entities), ())
        )
    return planned


def cut_unfinished_paragraphs(results, max_new_tokens: int) -> None:
    """Apply `cut_unfinished_paragraph` to generation results in place (those that hit the token limit)."""
    for result in results:
        result.text = cut_unfinished_paragraph(result.text, result.new_tokens < max_new_tokens)


def cut_unfinished_paragraph(text: str, finished: bool) -> str:
    """Drop a trailing paragraph that the token limit cut off mid-way (kept if it is the only one)."""
    text = text.rstrip()
    if finished or "\n\n" not in text:
        return text
    return text[: text.rindex("\n\n")].rstrip()
