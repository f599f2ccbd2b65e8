"""One planned generation of any method: what its prompt shows and what it must not write."""

from __future__ import annotations

from dataclasses import dataclass

from plainsight.codes.control_code import Entities
from plainsight.methods.prompts import Example


@dataclass(frozen=True)
class PlannedGeneration:
    generation_id: int
    segment: int
    context_keys: tuple[tuple[str, int], ...]
    examples: tuple[Example, ...]
    context_codes: tuple[str, ...]
    target_code: str | None
    target_entities: Entities
    blocked_values: tuple[str, ...]
    near_words: tuple[str, ...] = ()  # blocked with their near variants
    digit_runs: tuple[str, ...] = ()  # distinctive digit runs of code values, blocked under any prefix
