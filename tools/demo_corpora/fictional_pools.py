"""The values of the project's fictional-code pools, which the demo corpora must never contain.

A fictional code replaces real entities with values from ``resources/fictional_pools.yaml``; a
pool value found in a generation can only be a leak if the training text never contained it.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

POOLS_YAML = Path(__file__).resolve().parents[2] / "resources" / "fictional_pools.yaml"

_HOUSE_NUMBER = re.compile(r"^\d+[A-Za-z]?\s+")


def fictional_pool_terms(path: Path = POOLS_YAML) -> tuple[str, ...]:
    """Names, places, streets and organisations of the pools.

    Titles, jobs and heritages are left out: they are ordinary words ("Mr", "nurse") that the
    corpora must use. Addresses count by their street, without the house number.
    """
    pools = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    person, loc = pools["PERSON"], pools["LOC"]
    streets = [_HOUSE_NUMBER.sub("", address) for address in loc["addresses"]]
    return (
        *person["first_names"],
        *person["last_names"],
        *loc["cities"],
        *loc["countries"],
        *streets,
        *loc["infrastructure"],
        *pools["ORG"],
    )
