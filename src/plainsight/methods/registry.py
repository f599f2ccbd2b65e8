"""Every generation method, declared once: its family, what it blocks, how it trains and generates.

The config's `methods`, the `{method}` wildcard of every path, the rules' wildcard constraints,
the scheduler estimates, the workflow scripts and the metrics all read this registry; nothing
else spells a method name.

A method name may carry a model variant: `icl.large` is the `icl` method run with the model of
the `model_large` config key (the paper's larger-model table). The variant travels in the name,
so paths, metrics and tables need nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from plainsight.settings import Settings

# The family also says how leaks are counted: against a prompt's real contexts (in_context), or
# against the whole fine-tuning data (trained, private_selection; plainsight.evaluation.privacy).
Family = Literal["in_context", "trained", "private_selection"]
Training = Literal["prefix", "masked_prefix", "dp_prefix"]
# How a training-free private generator uses the private text (plainsight.methods.private_selection):
# `seed_rewrite` (RPSG) rewrites private seeds, a DP choice among the candidates of each;
# `private_evolution` (Aug-PE) evolves texts written without private data by DP votes of the records;
# `topic_histogram` (CTCL-style) writes from the topics of a DP histogram of the records' topics.
Selection = Literal["seed_rewrite", "private_evolution", "topic_histogram"]
# What a method's formal guarantee protects, the records that its neighbouring corpora differ in
# (`Method.protects`): `unit`, one privacy unit, the docs' `unit_id` (a TAB document, a MIMIC patient, a
# generic record's `unit_id`, else the record itself) with all its documents; `segment`, one training
# segment. A person whose documents make k of them has k times the epsilon (group privacy:
# `plainsight.audit.guarantee`).
Protection = Literal["unit", "segment"]
PROTECTED: dict[Protection, str] = {
    "unit": "privacy unit (the docs' `unit_id`, with all its documents)",
    "segment": "training segment",
}

VARIANT_SEPARATOR = "."
VARIANTS: tuple[str, ...] = ("large",)


@dataclass(frozen=True)
class Method:
    name: str
    family: Family
    shows_codes: bool  # in-context prompts pair each real document with its control code
    blocks_context_values: (
        bool  # the real codes' values are blocked while decoding, and regenerated on a leak
    )
    training: Training | None = None  # how the adapter is trained (trained family only)
    selection: Selection | None = None  # how the private text chooses (private_selection family only)

    @property
    def in_context(self) -> bool:
        """Prompted with real training documents; no adapter."""
        return self.family == "in_context"

    @property
    def trained(self) -> bool:
        """An adapter trained on (code, document) pairs, prompted with a fictional code alone."""
        return self.family == "trained"

    @property
    def private_selection(self) -> bool:
        """Training-free: the model writes, and the private text only chooses among its texts through a
        DP mechanism; settings in the config block of the method's name."""
        return self.family == "private_selection"

    @property
    def rewrites_seeds(self) -> bool:
        """Each released text is a rewrite of one private seed (RPSG)."""
        return self.selection == "seed_rewrite"

    @property
    def evolves(self) -> bool:
        """The model's texts evolve over rounds of DP votes of the private records (Aug-PE)."""
        return self.selection == "private_evolution"

    @property
    def writes_from_topics(self) -> bool:
        """Its texts are written from the topics a DP histogram of the private records' topics draws
        (CTCL-style)."""
        return self.selection == "topic_histogram"

    @property
    def masked_objective(self) -> bool:
        """Prefix tuning with the privacy mask's contrastive and KL terms."""
        return self.training == "masked_prefix"

    @property
    def differentially_private(self) -> bool:
        return self.training == "dp_prefix"

    @property
    def protects(self) -> Protection | None:
        """What its formal guarantee protects; None: it has none (in-context and plain fine-tuning).
        DP-SGD Poisson-samples whole units and clips each unit's summed gradient (`plainsight.training.dp`;
        `dpsgd.privacy_unit: sequence` makes every training segment its own unit, which its guarantee
        record says); Aug-PE and the topic histogram scale each unit's votes to norm 1; RPSG's selection
        protects its seed, one training segment, per selection (`plainsight.methods.private_selection`)."""
        if self.rewrites_seeds:
            return "segment"
        if self.differentially_private or self.evolves or self.writes_from_topics:
            return "unit"
        return None

    def regenerations(self, max_regenerations: int) -> int:
        """How many times a generation may be written again under `generation.max_regenerations`:
        that many for a method that blocks values, else none."""
        return max_regenerations if self.blocks_context_values else 0


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("baseline", "in_context", shows_codes=False, blocks_context_values=False),
        Method("icl", "in_context", shows_codes=True, blocks_context_values=False),
        Method("icl_pe", "in_context", shows_codes=True, blocks_context_values=True),
        Method("ft", "trained", shows_codes=True, blocks_context_values=False, training="prefix"),
        Method("ft_mask", "trained", shows_codes=True, blocks_context_values=False, training="masked_prefix"),
        Method("dpsgd", "trained", shows_codes=True, blocks_context_values=False, training="dp_prefix"),
        Method(
            "rpsg",
            "private_selection",
            shows_codes=False,
            blocks_context_values=False,
            selection="seed_rewrite",
        ),
        Method(
            "aug_pe",
            "private_selection",
            shows_codes=False,
            blocks_context_values=False,
            selection="private_evolution",
        ),
        Method(
            "dp_topics",
            "private_selection",
            shows_codes=False,
            blocks_context_values=False,
            selection="topic_histogram",
        ),
    )
}


def base_method(name: str) -> str:
    """The method of a name, without its model variant: `icl.large` -> `icl`."""
    return name.split(VARIANT_SEPARATOR, 1)[0]


def method(name: str) -> Method:
    """The registered method of `name` (a model variant allowed); an unknown name is a one-line error."""
    base, _, variant = name.partition(VARIANT_SEPARATOR)
    if base not in METHODS or (variant and variant not in VARIANTS):
        known = ", ".join(METHODS)
        raise ValueError(
            f"unknown method {name!r}: known methods are {known}, optionally with a model variant "
            f"({', '.join(VARIANT_SEPARATOR + v for v in VARIANTS)})"
        )
    return METHODS[base]


def names(family: Family | None = None) -> tuple[str, ...]:
    return tuple(name for name, m in METHODS.items() if family is None or m.family == family)


def check_family(listed: Sequence[str], family: Family, key: str) -> None:
    """Each name of a config list (`key`) is a registered method of `family`: else one line naming it."""
    for name in listed:
        if method(name).family != family:
            raise ValueError(
                f"{key}: {name!r} is not a {family} method (those are: {', '.join(names(family))})"
            )


def audited_private_selection(settings: Settings) -> list[str]:
    """The private-selection methods the audit adds to the config's `methods`: those of
    `private_selection.methods` not among them, audited (and measured for utility) by jobs of
    their own."""
    return [name for name in settings.private_selection.methods if name not in settings.methods]


def model_config_key(name: str) -> str:
    """The config key of the model a method runs with: `model`, or `model_<variant>`."""
    _, _, variant = name.partition(VARIANT_SEPARATOR)
    return f"model_{variant}" if variant else "model"


def with_variant(name: str, variant: str | None) -> str:
    return f"{name}{VARIANT_SEPARATOR}{variant}" if variant else name


def wildcard_pattern(family: Family | None = None, variants: bool = True) -> str:
    """A regular expression for the `{method}` wildcard of a rule that serves `family`."""
    alternatives = "|".join(re.escape(name) for name in names(family))
    if not variants:
        return f"(?:{alternatives})"
    suffixes = "|".join(re.escape(VARIANT_SEPARATOR + v) for v in VARIANTS)
    return f"(?:{alternatives})(?:{suffixes})?"
