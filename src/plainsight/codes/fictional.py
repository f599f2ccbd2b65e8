"""Fictional control codes: same entity types and counts as a real code, fake values.

Values come from the shipped pools (the paper's Figure 2). Each segment's
fictional code depends only on (seed, doc_id, segment), so it does not change
when other documents are added or removed.

A fictional value must never look like a real private value of the corpus, or a
generation that copies its fictional code would count as a leak. `RealCodeValues`
removes the pool entries in which the leak metrics would find a real value, a
real name word or a near variant of either ("Germany"; "Hayes" beside a real
"Hayek"), and rejects a drawn value (a date, an amount, a composed name) that holds
a real value as whole words ("2004" in "15 October 2004"); both compare case-,
diacritic- and punctuation-insensitively.

Fictional names follow the corpus's style: they carry a title ("Ms Alex Irwin") only when most of
its real names do (TAB's "Mr Cengiz Polat"), so that a model that learned to write "Mr" before a
code's name does not write "Mr Ms Alex Irwin".
"""

from __future__ import annotations

import calendar
import logging
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from plainsight.codes.control_code import (
    Entities,
    entities_to_records,
    format_code,
    records_to_entities,
    type_counts,
)
from plainsight.entities import ENTITY_TYPES, IDENTIFIER_SETS
from plainsight.errors import InputError
from plainsight.matching import (
    CODE_DIGITS_FOR_A_CHANGE,
    NearMatcher,
    allowed_edits,
    fold,
    folded_words,
    name_words,
    unique_values,
)
from plainsight.rng import stable_rng

log = logging.getLogger(__name__)

EXCLUDED_TYPES = frozenset({"MISC"})
_MAX_DRAWS = 50
# Makes a code's fictional entities from the real entities it stands for, with a seeded generator.
Drawer = Callable[[Entities, random.Random], Entities]


class RealCodeValues:
    """The private values of a real corpus, for keeping fictional values apart from them."""

    def __init__(self, values: Iterable[str], person_values: Iterable[str] = ()):
        self.values = unique_values(values)
        self.person_values = unique_values(person_values)
        # What the leak metrics look for: the values and the name words, exactly or as near variants.
        self._matcher = NearMatcher([*self.values, *name_words(person_values)])
        self._word_runs = {tuple(folded_words(value)) for value in self.values} - {()}
        self._longest = max((len(run) for run in self._word_runs), default=0)
        self._folded = [fold(value) for value in self.values]

    def entries_found(self, entries: Iterable[str]) -> set[str]:
        """The pool entries in which a real value or name word occurs, exactly or as a near variant."""
        return {entry for entry in entries if self._matcher.found(entry)}

    def looks_real(self, value: str) -> bool:
        """Whether `value` holds a real value as whole words, or is a near variant of one, as the leak
        metrics count them: letters within their allowed edits, and the same digits, or one changed digit of
        a number of at least five ("40593/03" beside a real "40593/02"; "94 square metres" is not near "14
        square metres").

        Whole values compared by rapidfuzz against every real value at once, not the leak metrics'
        word-window matcher: a drawn value is checked up to 50 times per code value.
        """
        if self.held_in(value):
            return True
        folded = fold(value)
        edits = allowed_edits(sum(char.isalpha() for char in folded))
        # candidates within the letter edits and one digit; then letters and digits are judged apart
        candidates = process.extract(
            folded, self._folded, scorer=Levenshtein.distance, score_cutoff=edits + 1, limit=None
        )
        return any(_near_variant(folded, candidate) for candidate, _, _ in candidates)

    def held_in(self, value: str) -> bool:
        """Whether a real value occurs in `value` as whole words ("2004" in "15 October 2004")."""
        words = folded_words(value)
        return any(
            tuple(words[start : start + size]) in self._word_runs
            for size in range(1, min(self._longest, len(words)) + 1)
            for start in range(len(words) - size + 1)
        )


def _near_variant(a: str, b: str) -> bool:
    """Two folded values: letters within the allowed edits, digits equal or one changed in five or more."""
    digits_a, digits_b = [c for c in a if c.isdigit()], [c for c in b if c.isdigit()]
    letters_a, letters_b = "".join(c for c in a if c.isalpha()), "".join(c for c in b if c.isalpha())
    digits_near = digits_a == digits_b or (
        len(digits_a) == len(digits_b) >= CODE_DIGITS_FOR_A_CHANGE
        and sum(x != y for x, y in zip(digits_a, digits_b)) <= 1
    )
    return digits_near and Levenshtein.distance(letters_a, letters_b) <= allowed_edits(len(letters_a))


@dataclass(frozen=True)
class FictionalPools:
    pools: dict[str, Any]
    real: RealCodeValues | None = None  # drawn values that hold one of these are drawn again

    @classmethod
    def from_yaml(cls, path: str | Path) -> FictionalPools:
        return cls(yaml.safe_load(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def for_corpus(cls, path: str | Path, spans: pd.DataFrame, codes: pd.DataFrame) -> FictionalPools:
        """The pools at `path`, without what looks like a private value of the corpus of `spans` and
        `codes`."""
        return cls.from_yaml(path).excluding(corpus_real_values(spans, codes), path)

    def excluding(self, real: RealCodeValues, path: str | Path = "fictional pools") -> FictionalPools:
        """These pools without the entries that look like a real value; drawn values checked as well.

        Entries keep their order, so pools that lose nothing draw exactly what they drew before.
        """
        entries = [entry for pool in self.pools.values() for entry in _string_entries(pool)]
        found = real.entries_found(entries)
        if found:
            log.info(
                "left out %d pool entries that look like real private values: %s",
                len(found),
                ", ".join(sorted(found)),
            )
        return FictionalPools(
            _titles_as_in_corpus(_without(self.pools, found, path, ""), real.person_values), real
        )

    def draw(self, entity_type: str, rng: random.Random) -> str:
        return _DRAWERS[entity_type](self.pools[entity_type], rng)

    def allows(self, value: str) -> bool:
        return self.real is None or not self.real.held_in(value)


def corpus_real_values(spans: pd.DataFrame, codes: pd.DataFrame) -> RealCodeValues:
    """Every private value of a real corpus: its gold direct and quasi identifiers, and the values of
    its codes (in the unknown setting, what Presidio found)."""
    gold = spans[spans["identifier_type"].isin(IDENTIFIER_SETS["both"])]
    found = [entity for records in codes["entities"] for entity in records_to_entities(records)]
    values = [*gold["text"], *(value for _, value in found)]
    persons = [*gold.loc[gold["entity_type"] == "PERSON", "text"], *(v for t, v in found if t == "PERSON")]
    return RealCodeValues(values, persons)


def titled_share(names: Iterable[str], titles: Iterable[str]) -> float:
    """The share of `names` whose first word is one of `titles` (with or without a full stop)."""
    known = {title.casefold() for title in titles}
    first_words = [name.split()[0].rstrip(".").casefold() for name in names if name.split()]
    return sum(word in known for word in first_words) / len(first_words) if first_words else 1.0


def _titles_as_in_corpus(pools: dict[str, Any], person_values: list[str]) -> dict[str, Any]:
    """The pools, drawing names without a title when fewer than half of the corpus's real names have one."""
    person = pools.get("PERSON")
    if not person or not person_values:
        return pools
    share = titled_share(person_values, [*person["titles"], *person.get("recognised_titles", [])])
    if share >= 0.5:
        return pools
    log.info(
        "fictional names carry no title: %.0f%% of the corpus's %d real names have one",
        100 * share,
        len(person_values),
    )
    return {**pools, "PERSON": {**person, "titles": []}}


def _string_entries(pool: Any) -> list[str]:
    if isinstance(pool, dict):
        return [entry for value in pool.values() for entry in _string_entries(value)]
    if isinstance(pool, list):
        return [entry for entry in pool if isinstance(entry, str)]
    return []


def _without(pool: Any, found: set[str], path: str | Path, record: str) -> Any:
    """`pool` with the `found` entries removed from its lists; an emptied list is an error."""
    if isinstance(pool, dict):
        return {
            key: _without(value, found, path, f"{record}.{key}".lstrip(".")) for key, value in pool.items()
        }
    if isinstance(pool, list) and any(isinstance(entry, str) for entry in pool):
        kept = [entry for entry in pool if entry not in found]
        if not kept:
            raise InputError(
                path, record, "every entry of this pool looks like a real private value of the corpus"
            )
        return kept
    return pool


def _person(pool: dict, rng: random.Random) -> str:
    title = [rng.choice(pool["titles"])] if pool["titles"] else []
    return " ".join([*title, rng.choice(pool["first_names"]), rng.choice(pool["last_names"])])


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
    forms = [
        f"{age}-year-old {job}",
        f"{rng.choice(pool['heritages'])} descent",
        job.capitalize(),
        f"{age}-year-old",
    ]
    return rng.choice(forms)


def _quantity(pool: dict, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{rng.randint(pool['min_percent'], pool['max_percent'])}%"
    dollars = rng.randint(pool["min_dollars"] // 500, pool["max_dollars"] // 500) * 500
    return f"${dollars:,}"


_DRAWERS: dict[str, Callable[[Any, random.Random], str]] = {
    "PERSON": _person,
    "CODE": _code,
    "DATETIME": _datetime,
    "LOC": _loc,
    "ORG": _org,
    "DEM": _dem,
    "QUANTITY": _quantity,
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
            if value not in values and pools.allows(value):
                values.append(value)
            if len(values) == counts[entity_type]:
                break
        if len(values) < counts[entity_type]:
            log.warning(
                "only %d distinct fictional %s values for a code with %d",
                len(values),
                entity_type,
                counts[entity_type],
            )
        entities.extend((entity_type, v) for v in values)
    return entities


def pool_drawer(pools: FictionalPools) -> Drawer:
    """The paper's draw: from the pools, as many values of each type as the real entities have."""
    return lambda real, rng: fictional_entities(type_counts(real), pools, rng)


def fictional_codes_table(codes: pd.DataFrame, draw: Drawer, seed: int) -> pd.DataFrame:
    """One fictional code per segment of `codes`, replacing its real code: `draw` makes a segment's
    fictional entities from its real ones (`pool_drawer`, or `plainsight.codes.surrogates`)."""
    rows = []
    for row in codes.itertuples(index=False):
        entities = draw(records_to_entities(row.entities), stable_rng(seed, row.doc_id, row.segment))
        rows.append(
            {
                "doc_id": row.doc_id,
                "segment": row.segment,
                "split": row.split,
                "seed": seed,
                "code": format_code(entities),
                "entities": entities_to_records(entities),
            }
        )
    return pd.DataFrame(rows, columns=["doc_id", "segment", "split", "seed", "code", "entities"])
