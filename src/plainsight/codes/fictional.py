"""Fictional control codes: same entity types and counts as a real code, fake values.

Values come from the shipped pools (the paper's Figure 2). Each segment's
fictional code depends only on (seed, doc_id, segment), so it does not change
when other documents are added or removed.
"""

from __future__ import annotations

import calendar
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import yaml

from plainsight.codes.control import Entities, entities_to_records, format_code, records_to_entities, type_counts
from plainsight.entities import ENTITY_TYPES
from plainsight.rng import stable_rng

log = logging.getLogger(__name__)

EXCLUDED_TYPES = frozenset({"MISC"})
_MAX_DRAWS = 50


@dataclass(frozen=True)
class FictionalPools:
    pools: dict[str, Any]

    @classmethod
    def from_yaml(cls, path: str | Path) -> "FictionalPools":
        return cls(yaml.safe_load(Path(path).read_text(encoding="utf-8")))

    def draw(self, entity_type: str, rng: random.Random) -> str:
        return _DRAWERS[entity_type](self.pools[entity_type], rng)


def _person(pool: dict, rng: random.Random) -> str:
    return f"{rng.choice(pool['titles'])} {rng.choice(pool['first_names'])} {rng.choice(pool['last_names'])}"


def _code(pool: dict, rng: random.Random) -> str:
    letters = pool["alphabet"]
    first = "".join(rng.choice(letters) for _ in range(pool["first_length"]))
    second = "".join(rng.choice(letters) for _ in range(pool["second_length"]))
    return f"{first}/{second}"


def _datetime(pool: dict, rng: random.Random) -> str:
    year = rng.randint(pool["first_year"], pool["last_year"])
    month = rng.randint(1, 12)
    day = rng.randint(1, calendar.monthrange(year, month)[1])
    return f"{day:02d} {calendar.month_name[month]} {year}"


def _loc(pool: dict, rng: random.Random) -> str:
    return rng.choice(pool[rng.choice(["cities", "countries", "addresses", "infrastructure"])])


def _org(pool: list, rng: random.Random) -> str:
    return rng.choice(pool)


def _dem(pool: dict, rng: random.Random) -> str:
    age = rng.randint(pool["min_age"], pool["max_age"])
    job = rng.choice(pool["jobs"])
    forms = [f"{age}-year-old {job}", f"{rng.choice(pool['heritages'])} descent", job.capitalize(), f"{age}-year-old"]
    return rng.choice(forms)


def _quantity(pool: dict, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{rng.randint(pool['min_percent'], pool['max_percent'])}%"
    dollars = rng.randint(pool["min_dollars"] // 500, pool["max_dollars"] // 500) * 500
    return f"${dollars:,}"


_DRAWERS: dict[str, Callable[[Any, random.Random], str]] = {
    "PERSON": _person, "CODE": _code, "DATETIME": _datetime, "LOC": _loc,
    "ORG": _org, "DEM": _dem, "QUANTITY": _quantity,
}


def fictional_entities(counts: dict[str, int], pools: FictionalPools, rng: random.Random) -> Entities:
    """Distinct fake values, `counts[type]` of each type (MISC excluded), in type order."""
    entities: Entities = []
    for entity_type in ENTITY_TYPES:
        if entity_type in EXCLUDED_TYPES or not counts.get(entity_type):
            continue
        values: list[str] = []
        for _ in range(_MAX_DRAWS * counts[entity_type]):
            value = pools.draw(entity_type, rng)
            if value not in values:
                values.append(value)
            if len(values) == counts[entity_type]:
                break
        if len(values) < counts[entity_type]:
            log.warning("only %d distinct fictional %s values for a code with %d", len(values), entity_type,
                        counts[entity_type])
        entities.extend((entity_type, v) for v in values)
    return entities


def fictional_codes_table(codes: pd.DataFrame, pools: FictionalPools, seed: int) -> pd.DataFrame:
    """One fictional code per segment of `codes`, replacing its real code."""
    rows = []
    for row in codes.itertuples(index=False):
        counts = type_counts(records_to_entities(row.entities))
        entities = fictional_entities(counts, pools, stable_rng(seed, row.doc_id, row.segment))
        rows.append({"doc_id": row.doc_id, "segment": row.segment, "split": row.split, "seed": seed,
                     "code": format_code(entities), "entities": entities_to_records(entities)})
    return pd.DataFrame(rows, columns=["doc_id", "segment", "split", "seed", "code", "entities"])
