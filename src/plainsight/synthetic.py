"""The synthetic-corpus table shared by every generation method."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from plainsight.codes import entities_to_records
from plainsight.generation import Result
from plainsight.icl import PlannedGeneration

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
