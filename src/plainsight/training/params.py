"""The `prefix_tuning` and `dpsgd` settings an adapter depends on: its rule's params. Free of torch,
as the Snakefile reads them while it parses."""

from __future__ import annotations

from collections.abc import Mapping

from plainsight.methods.registry import Method

# `prefix_tuning` keys that decide nothing about an adapter: how many documents it writes, and how
# its job runs.
NOT_TRAINING_KEYS = ("generations", "threads", "checkpoint_every_steps")
LAMBDA_KEYS = ("lambda_lm", "lambda_contrastive", "lambda_kl")
MASKED_KEYS = ("objective", *LAMBDA_KEYS)  # what only the masked objective reads
# What DP-SGD does not read: its prefix starts from the public init text, at a constant learning rate.
NOT_DP_KEYS = ("init_from", "warmup_steps", "lr_schedule")


def training_params(method: Method, prefix_tuning: Mapping, dpsgd: Mapping) -> dict:
    """The settings a trained method's adapter depends on, and only those: the rule's params, so that
    changing a setting retrains the adapters it changes (the objective and its lambdas only the masked
    objective's, the lambdas not under `reference_code`'s fixed weights; the `dpsgd` block, as `dp`,
    only DP-SGD's)."""
    fixed_weights = prefix_tuning.get("objective", "paper") == "reference_code"
    params = {
        key: value
        for key, value in prefix_tuning.items()
        if key not in NOT_TRAINING_KEYS
        and (method.masked_objective or key not in MASKED_KEYS)
        and not (fixed_weights and key in LAMBDA_KEYS)
        and not (method.differentially_private and key in NOT_DP_KEYS)
    }
    if method.differentially_private:
        params["dp"] = dict(dpsgd)
    return params
