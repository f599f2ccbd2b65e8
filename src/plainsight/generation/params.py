"""The `generation` settings a generate job reads: its rule's params. Free of torch, as the
Snakefile reads them while it parses."""

from __future__ import annotations

from collections.abc import Mapping

from plainsight.methods import registry

# The `generation` config keys every method's decoding reads; the others are read by some methods
# only (`generation_params`), and `threads` and `shards` only lay out the jobs.
SAMPLING_KEYS = ("max_new_tokens", "temperature", "top_p", "batch_size", "group_size")


def generation_params(method: registry.Method, generation: Mapping, purpose: str) -> dict:
    """The `generation` settings a generate job of `method` reads, and only those: the rule's params,
    so that changing a setting reruns the jobs it changes and no others.

    `purpose` is "corpus" (the method's synthetic corpus) or "mauve" (one text per sampled test
    segment, whose count is the MAUVE setting's).
    """
    keys = list(SAMPLING_KEYS)
    if method.private_selection:
        # each step's prompt holds a text cut to fit; the method's own block sets its temperature
        keys = [key for key in keys if key != "temperature"] + ["max_prompt_tokens"]
    if method.in_context:
        keys += ["context_documents", "max_prompt_tokens"]
        if purpose == "corpus":
            keys.append("generations_per_segment")
    if method.blocks_context_values:
        keys += ["max_regenerations", "blocking"]
    return {key: generation[key] for key in keys}
