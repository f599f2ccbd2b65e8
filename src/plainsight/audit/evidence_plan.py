"""The evidence plan: for the configured gate, each criterion's planned sample beside the smallest at
which the gate PASSes it when nothing leaks and the smallest at which it FAILs it at a stated effect,
each with probability 0.8 (`sample_sizes.DECIDING_PROBABILITY`). Each criterion
plans itself (`plainsight.audit.criteria.REGISTRY`) from what the config's audited run gives it
(`planned_run`), with the samples of `plainsight.audit.sample_sizes`.

The epsilon criterion's canaries are planned at the delta the canary audit states its bounds at: DP
training's configured one, else the largest default (`training.dp.default_delta`), which asks the most
canaries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from plainsight.audit import audited_datasets
from plainsight.audit.criteria import CanaryPlan, CriterionPlan, Gate, PlannedRun, gate_criteria
from plainsight.methods.registry import METHODS, Method, audited_private_selection, method

DEFAULT_DELTA = 1e-5  # the largest delta the audit defaults to (`training.dp.default_delta`)


def _guarantees_release(m: Method) -> bool:
    """DP training's accountant and a private selection of whole texts bound the released corpus; a
    selection that rewrites private seeds bounds its seeds, not the release."""
    return m.differentially_private or (m.private_selection and not m.rewrites_seeds)


def formal_epsilons(config: Mapping[str, Any]) -> dict[str, float]:
    """The audited methods whose formal epsilon (their config block's `epsilon`) bounds the release."""
    audited = [*config["methods"], *audited_private_selection(config)]
    return {name: float(config[name]["epsilon"]) for name in audited if _guarantees_release(method(name))}


def audit_delta(config: Mapping[str, Any]) -> float:
    """The delta the canary audit states its bounds at: DP training's configured one, else the largest
    default (`training.dp.default_delta`), which asks the most canaries."""
    trained_dp = next(m.name for m in METHODS.values() if m.differentially_private)
    return config[trained_dp].get("delta") or DEFAULT_DELTA


def planned_run(config: Mapping[str, Any], segments: Callable[[str, str], int] | None = None) -> PlannedRun:
    """What `config`'s audited run gives each criterion; `segments(dataset, split)` counts a split's
    segments (the cost plan's counter), without which texts are not planned."""
    dataset = audited_datasets(config)[0]
    ranges = len(config["datasets"][dataset]["segments"])
    texts = trained = "-"
    corpus_texts = None
    train, held_out = (
        sum(_split_or_none(segments, dataset, split) for split in splits) if segments else 0
        for splits in (("train",), ("dev", "test"))
    )
    if train and held_out:
        # members are at most the training segments, each side of the balanced sets at most the smaller
        corpus_texts = min(train, held_out)
        texts, trained = f"<= {corpus_texts:,}", f"<= {train:,} training segments"
    canaries = config["audit"]["canaries"]
    return PlannedRun(
        generations=config["generation"]["generations_per_segment"] * ranges,
        texts=texts,
        trained=trained,
        corpus_texts=corpus_texts,
        canaries=CanaryPlan(
            canaries["single"],
            float(canaries["guesses"]),
            bool(canaries.get("in_verdict")),
            audit_delta(config),
        ),
        formal_epsilons=formal_epsilons(config),
    )


def evidence_plan(
    gate: Gate, config: Mapping[str, Any], segments: Callable[[str, str], int] | None = None
) -> list[CriterionPlan]:
    """Each criterion the gate judges, planned for `config`'s audited run (`planned_run`)."""
    run = planned_run(config, segments)
    return [plan for criterion in gate_criteria(gate) for plan in criterion.plan(gate, run)]


def _split_or_none(segments: Callable[[str, str], int], dataset: str, split: str) -> int:
    """A split's segments; 0 where neither the built codes nor `resources.planned_segments` have it (the
    plan then leaves the texts unplanned rather than stopping)."""
    try:
        return segments(dataset, split)
    except ValueError:
        return 0
