"""Method names with a model variant: `icl.large` is the `icl` method run with the `model_large` model.

Tables that compare models (the paper's larger-model table) list the same methods on
another model; the variant travels in the method's name, so paths, metrics and tables
need nothing new.
"""

from __future__ import annotations

SEPARATOR = "."


def base_method(method: str) -> str:
    return method.split(SEPARATOR, 1)[0]


def model_config_key(method: str) -> str:
    """The config key of the model a method runs with: `model`, or `model_<variant>`."""
    _, _, variant = method.partition(SEPARATOR)
    return f"model_{variant}" if variant else "model"


def with_variant(method: str, variant: str | None) -> str:
    return f"{method}{SEPARATOR}{variant}" if variant else method
