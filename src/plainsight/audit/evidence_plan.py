"""The evidence plan: for the configured gate, each criterion's planned sample beside the smallest at
which the gate PASSes it when nothing leaks and the smallest at which it FAILs it at a stated effect,
each with probability 0.8 (`sample_sizes.DECIDING_PROBABILITY`). Each criterion
plans itself (`plainsight.audit.criteria.REGISTRY`) from what the config's audited run gives it
(`planned_run`), with the samples of `plainsight.audit.sample_sizes`.

The epsilon criterion's canaries are planned at the delta the canary audit states its bounds at: DP
training's configured one, else the largest default of `plainsight.settings.dp_delta`, which asks the
most canaries. The plan reads the config's typed settings (`plainsight.settings.Settings`).
"""

from __future__ import annotations

from collections.abc import Callable

from plainsight.audit.criteria import CanaryPlan, CriterionPlan, Gate, PlannedRun, gate_criteria
from plainsight.methods.registry import METHODS, Method, audited_private_selection, method
from plainsight.settings import LARGEST_DEFAULT_DELTA, Settings


def _guarantees_release(m: Method) -> bool:
    """DP training's accountant and a private selection of whole texts bound the released corpus; a
    selection that rewrites private seeds bounds its seeds, not the release."""
    return m.differentially_private or (m.private_selection and not m.rewrites_seeds)


def formal_epsilons(settings: Settings) -> dict[str, float]:
    """The audited methods whose formal epsilon (their config block's `epsilon`) bounds the release."""
    audited = [*settings.methods, *audited_private_selection(settings)]
    return {
        name: float(settings.block(name).epsilon) for name in audited if _guarantees_release(method(name))
    }


def audit_delta(settings: Settings) -> float:
    """The delta the canary audit states its bounds at: DP training's configured one, else the largest
    default of `dp_delta` (at most 10,000 units), which asks the most canaries."""
    trained_dp = next(m.name for m in METHODS.values() if m.differentially_private)
    configured = settings.block(trained_dp).delta
    return LARGEST_DEFAULT_DELTA if configured is None else float(configured)


def planned_run(settings: Settings, segments: Callable[[str, str], int] | None = None) -> PlannedRun:
    """What the audited run of `settings` gives each criterion; `segments(dataset, split)` counts a
    split's segments (the cost plan's counter), without which texts are not planned."""
    dataset = settings.audited_datasets()[0]
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
    canaries = settings.audit.canaries
    return PlannedRun(
        generations=settings.in_context_generations(dataset),
        texts=texts,
        trained=trained,
        corpus_texts=corpus_texts,
        canaries=CanaryPlan(
            canaries.single, float(canaries.guesses), bool(canaries.in_verdict), audit_delta(settings)
        ),
        formal_epsilons=formal_epsilons(settings),
    )


def evidence_plan(
    gate: Gate, settings: Settings, segments: Callable[[str, str], int] | None = None
) -> list[CriterionPlan]:
    """Each criterion the gate judges, planned for the audited run of `settings` (`planned_run`)."""
    run = planned_run(settings, segments)
    return [plan for criterion in gate_criteria(gate) for plan in criterion.plan(gate, run)]


def _split_or_none(segments: Callable[[str, str], int], dataset: str, split: str) -> int:
    """A split's segments; 0 where neither the built codes nor `resources.planned_segments` have it (the
    plan then leaves the texts unplanned rather than stopping)."""
    try:
        return segments(dataset, split)
    except ValueError:
        return 0
