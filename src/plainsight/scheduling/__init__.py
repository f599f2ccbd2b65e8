"""The cost model of the model jobs: one estimate per rule of the work (tokens), the host memory,
the run time and the GPU memory, read by the scheduler (the rules' `resources`,
workflow/rules/scheduling.smk) and by the cost plan (`plainsight.report.plan`); and the decoding
slots' arithmetic, which the generate jobs share with it (`plainsight.generation.memory`). Free of
torch and transformers, so that the Snakefile parses on a login node without them.

`model_shape` reads a model's shape, `decoding_slots` counts the KV cache of the slots, `memory`
holds the host- and GPU-memory formulas, `model_rules` names the rules that load a model,
`tokens` counts each job's work and `cost_model` turns it into run time and memory.
"""

from plainsight.scheduling.cost_model import CostModel
from plainsight.scheduling.decoding_slots import (
    AUTO,
    CPU_AUTO_SLOTS,
    FREE_MEMORY_MARGIN,
    cpu_slots,
    kv_cache_bytes,
    slot_cache_positions,
    slots_that_fit,
)
from plainsight.scheduling.memory import GIB, MB
from plainsight.scheduling.model_rules import MODEL_RULES
from plainsight.scheduling.tokens import ASSUMED_SEGMENTS, CANARY_TOKENS, segments_upper_bound

__all__ = [
    "ASSUMED_SEGMENTS",
    "AUTO",
    "CANARY_TOKENS",
    "CPU_AUTO_SLOTS",
    "FREE_MEMORY_MARGIN",
    "GIB",
    "MB",
    "MODEL_RULES",
    "CostModel",
    "cpu_slots",
    "kv_cache_bytes",
    "segments_upper_bound",
    "slot_cache_positions",
    "slots_that_fit",
]
