"""The synthetic-corpus table shared by every generation method."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from plainsight.codes.control import entities_to_records
from plainsight.generation.runner import Result
from plainsight.methods.planned import PlannedGeneration

CORPUS_COLUMNS = (
    "generation_id", "method", "seed", "segment", "text", "context_doc_ids", "context_segments",
    "context_codes", "fictional_code", "fictional_entities", "regenerations", "hit_max_regenerations",
    "leaked_blocked_values", "prompt_tokens", "new_tokens", "trimmed_context_tokens",
)


def corpus_frame(method: str, seed: int, planned: Sequence[PlannedGeneration], results: Sequence[Result],
                 trimmed: Sequence[int]) -> pd.DataFrame:
    """One row per generation: text, what the prompt showed, and generation statistics."""
    rows = []
    for generation, result, removed in zip(planned, results, trimmed, strict=True):
        rows.append({
            "generation_id": generation.generation_id,
            "method": method,
            "seed": seed,
            "segment": generation.segment,
            "text": result.text,
            "context_doc_ids": [doc_id for doc_id, _ in generation.context_keys],
            "context_segments": [int(segment) for _, segment in generation.context_keys],
            "context_codes": list(generation.context_codes),
            "fictional_code": generation.target_code or "",
            "fictional_entities": entities_to_records(generation.target_entities),
            "regenerations": result.regenerations,
            "hit_max_regenerations": bool(result.leaked_blocked),
            "leaked_blocked_values": list(result.leaked_blocked),
            "prompt_tokens": result.prompt_tokens,
            "new_tokens": result.new_tokens,
            "trimmed_context_tokens": removed,
        })
    return pd.DataFrame(rows, columns=list(CORPUS_COLUMNS))


def join_shards(shards: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The shards of one corpus as the full run writes it: every generation once, in generation id order."""
    # an empty shard (more shards than batches) would turn the typed columns into objects
    frame = pd.concat([shard for shard in shards if len(shard)] or list(shards[:1]), ignore_index=True)
    if frame["generation_id"].duplicated().any():
        raise ValueError("the shards repeat generation ids; were they written with different settings?")
    return frame.sort_values("generation_id", kind="stable", ignore_index=True)
