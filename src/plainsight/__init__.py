"""Privacy-preserving synthetic text with entity-aware control codes.

One sub-package per pipeline stage, in the order the workflow runs them (workflow/rules/):
`data` -> `codes` -> `methods` -> `training` -> `generation` -> `evaluation` -> `report`.
A module imports only its own stage, earlier stages, or the shared modules beside this file
(`errors`, `io`, `logs`, `rng`, `entities`, `matching`, `models`, `model_settings`, `scheduling`,
`snakemake_job`).
"""

__version__ = "0.1.0"
