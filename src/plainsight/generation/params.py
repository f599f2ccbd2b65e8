"""The `generation` settings a generate job reads: its rule's params, and the typed settings its job
builds from them once. Free of torch, as the Snakefile reads them while it parses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plainsight.methods import registry
from plainsight.settings import Settings

# The `generation` config keys every method's decoding reads; the others are read by some methods
# only (`generation_params`), and `threads` and `shards` only lay out the jobs.
SAMPLING_KEYS = ("max_new_tokens", "temperature", "top_p", "batch_size", "group_size")


def generation_params(method: registry.Method, settings: Settings, purpose: str) -> dict:
    """The `generation` settings a generate job of `method` reads, and only those: the rule's params,
    so that changing a setting reruns the jobs it changes and no others. A method that blocks its
    context values reads `metrics.code_runs` too: it blocks the digit runs the code-part leak counts.

    `purpose` is "corpus" (the method's synthetic corpus) or "mauve" (one text per sampled test
    segment, whose count is the MAUVE setting's).
    """
    generation = settings.generation
    keys = list(SAMPLING_KEYS)
    if method.private_selection:
        # each step's prompt holds a text cut to fit; the method's own block sets its temperature
        keys = [key for key in keys if key != "temperature"] + ["max_prompt_tokens"]
    if method.in_context:
        keys += ["context_documents", "max_prompt_tokens"]
        if purpose == "corpus":
            keys.append("generations_per_segment")
    params = {key: getattr(generation, key) for key in keys}
    if method.blocks_context_values:
        params |= {
            "max_regenerations": generation.max_regenerations,
            "blocking": generation.blocking,
            "code_runs": settings.metrics.code_runs.as_written(),
        }
    return params


@dataclass(frozen=True)
class GenerationSettings:
    """The rule's `generation` params (`generation_params`) as a job reads them; a setting its method
    does not read is None."""

    max_new_tokens: int
    top_p: float
    batch_size: int | str  # slots, or `auto` (plainsight.generation.memory)
    group_size: int
    temperature: float | None = None  # a private-selection method's own block sets its temperature
    max_prompt_tokens: int | None = None
    context_documents: int | None = None  # an in-context method's real (code, segment) pairs per prompt
    generations_per_segment: int | None = None  # an in-context method's corpus, per paragraph range
    max_regenerations: int | None = None  # a method that blocks its context values
    blocking: str | None = None
    code_runs: Mapping[str, Any] | None = None  # `metrics.code_runs`, for a method that blocks

    @classmethod
    def from_params(cls, generation: Mapping[str, Any]) -> GenerationSettings:
        """The rule's `generation` params; a key that names no setting is an error."""
        return cls(**generation)
