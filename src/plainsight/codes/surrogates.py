"""Format-preserving surrogates (`codes.surrogates: format_preserving`).

Each fictional value keeps the shape of the real value it stands for: a code its digit and letter
groups, separators and letter prefix ("40593/02" -> "81726/45", "SC-10442" -> "SC-58213"), a date
its format ("3 May 2001" -> "17 June 1984", "2001-05-03" -> "1984-06-17"), a name its title and
number of given names ("Mr Cengiz Polat" -> "Mr Teodor Lindqvist"), a country a country, an address
a house number and street, an organisation its kind ("Leeds City Council" -> "Bramley City
Council"). Values are drawn with the segment's seeded generator from the lists of
`resources/surrogate_lists.yaml` (plain YAML, so the draws do not change with a library's version),
after the entries that look like a real private value of the corpus are left out; a composed value
that holds or resembles a real value is drawn again. A value whose shape is not recognised is drawn
from the paper's pools.
"""

from __future__ import annotations

import calendar
import logging
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from plainsight.codes.control_code import Entities
from plainsight.codes.fictional import (
    EXCLUDED_TYPES,
    Drawer,
    FictionalPools,
    RealCodeValues,
    corpus_real_values,
    fictional_codes_table,
    pool_drawer,
)

log = logging.getLogger(__name__)
_MAX_DRAWS = 50

_MONTHS = "|".join(calendar.month_name[1:])
_DATE_SHAPES: list[tuple[re.Pattern, Callable[[re.Match, date], str]]] = [
    (
        re.compile(rf"^(\d{{1,2}}) ({_MONTHS}) (\d{{4}})$"),
        lambda m, d: f"{_day(m[1], d)} {_month(d)} {d.year}",
    ),
    (
        re.compile(rf"^({_MONTHS}) (\d{{1,2}}), (\d{{4}})$"),
        lambda m, d: f"{_month(d)} {_day(m[2], d)}, {d.year}",
    ),
    (re.compile(r"^(\d{4})-(\d{2})-(\d{2})$"), lambda m, d: d.isoformat()),
    (
        re.compile(r"^(\d{1,2})([./])(\d{1,2})\2(\d{4})$"),
        lambda m, d: f"{_day(m[1], d)}{m[2]}{d.month:0{len(m[3])}d}{m[2]}{d.year}",
    ),
    (re.compile(rf"^({_MONTHS}) (\d{{4}})$"), lambda m, d: f"{_month(d)} {d.year}"),
    (re.compile(r"^(\d{4})$"), lambda m, d: str(d.year)),
]


def _day(real_day: str, drawn: date) -> str:
    return f"{drawn.day:0{len(real_day)}d}"


def _month(drawn: date) -> str:
    return calendar.month_name[drawn.month]


@dataclass(frozen=True)
class SurrogateLists:
    lists: dict[str, Any]
    real: RealCodeValues | None = None
    countries: frozenset[str] = frozenset()  # every listed country, casefolded, for recognising one

    @classmethod
    def from_yaml(cls, path: str | Path) -> SurrogateLists:
        lists = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return cls(lists, None, frozenset(c.casefold() for c in lists["LOC"]["countries"]))

    def excluding(self, real: RealCodeValues) -> SurrogateLists:
        """These lists without entries that look like a real value; composed values checked as well."""
        return SurrogateLists(_without(self.lists, real), real, self.countries)

    def allows(self, value: str) -> bool:
        return self.real is None or not self.real.looks_real(value)


def _without(lists: Any, real: RealCodeValues) -> Any:
    if isinstance(lists, dict):
        return {key: _without(value, real) for key, value in lists.items()}
    if isinstance(lists, list) and all(isinstance(entry, str) for entry in lists):
        found = real.entries_found(lists)
        return [entry for entry in lists if entry not in found]
    return lists


def shaped_value(entity_type: str, real_value: str, lists: SurrogateLists, rng: random.Random) -> str | None:
    """A fictional value in the shape of `real_value`, or None when its shape is not recognised."""
    shaper = _SHAPERS.get(entity_type)
    return shaper(real_value, lists, rng) if shaper else None


def shaped_characters(value: str, rng: random.Random, letters: bool = False) -> str:
    """Each digit a random digit (a leading one never 0 unless it was); with `letters`, each ASCII
    letter after the leading letters of a word that holds a digit a random letter of its case
    ("AB-1234-x" -> "AB-5817-q"). Separators, spaces, currency signs and plain words stay."""
    words = re.split(r"(\s+)", value)
    return "".join(_shaped_word(word, rng, letters and any(c.isdigit() for c in word)) for word in words)


def _shaped_word(word: str, rng: random.Random, letters: bool) -> str:
    # A code's leading letters are its scheme ("SC-10442", "AB-1234-x"), shared by every code of the corpus.
    prefix = re.match(r"[A-Za-z]*", word).group(0)
    out = [prefix]
    for index, char in enumerate(word[len(prefix) :], start=len(prefix)):
        leading = index == 0 or not word[index - 1].isdigit()
        if char.isdigit():
            out.append(str(rng.randint(0 if char == "0" or not leading else 1, 9)))
        elif letters and char.isascii() and char.isalpha():
            letter = chr(rng.randint(ord("a"), ord("z")))
            out.append(letter.upper() if char.isupper() else letter)
        else:
            out.append(char)
    return "".join(out)


def _code(value: str, lists: SurrogateLists, rng: random.Random) -> str | None:
    return shaped_characters(value, rng, letters=True) if any(c.isdigit() for c in value) else None


def _date(value: str, lists: SurrogateLists, rng: random.Random) -> str | None:
    years = lists.lists["DATETIME"]
    year = rng.randint(years["first_year"], years["last_year"])
    month = rng.randint(1, 12)
    drawn = date(year, month, rng.randint(1, calendar.monthrange(year, month)[1]))
    for pattern, render in _DATE_SHAPES:
        match = pattern.match(value.strip())
        if match:
            return render(match, drawn)
    return shaped_characters(value, rng) if any(c.isdigit() for c in value) else None


def _person(value: str, lists: SurrogateLists, rng: random.Random) -> str | None:
    pool = lists.lists["PERSON"]
    words = value.split()
    titles = {title.casefold() for title in pool["titles"]}
    title = words[:1] if words and words[0].rstrip(".").casefold() in titles else []
    names = words[len(title) :]
    if not names:
        return None
    genders = {title.casefold(): gender for title, gender in pool["title_genders"].items()}
    gender = genders.get(title[0].rstrip(".").casefold()) if title else None
    given = (
        pool["given_names"][gender]
        if gender
        else [*pool["given_names"]["female"], *pool["given_names"]["male"]]
    )
    drawn = [_given(word, given, rng) for word in names[:-1]]
    surname = "-".join(rng.choice(pool["surnames"]) for _ in names[-1].split("-"))
    out = [*title, *drawn, surname]
    return " ".join(w.upper() for w in out) if value.isupper() and len(value) > 3 else " ".join(out)


def _given(word: str, names: list[str], rng: random.Random) -> str:
    if len(word.rstrip(".")) == 1:  # an initial stays an initial
        return f"{rng.choice(names)[0]}{word[1:]}"
    return rng.choice(names)


def _loc(value: str, lists: SurrogateLists, rng: random.Random) -> str | None:
    pool = lists.lists["LOC"]
    if value.casefold() in lists.countries or value.casefold().removeprefix("the ") in lists.countries:
        return rng.choice(pool["countries"])
    if value[:1].isdigit():
        number = shaped_characters(value.split()[0], rng)
        return f"{number} {rng.choice(pool['streets'])} {rng.choice(pool['street_kinds'])}"
    if value.split()[-1] in pool["street_kinds"]:
        return f"{rng.choice(pool['streets'])} {value.split()[-1]}"
    return rng.choice(pool["cities"])


def _org(value: str, lists: SurrogateLists, rng: random.Random) -> str | None:
    pool = lists.lists["ORG"]
    words = value.split()
    if len(words) >= 2 and words[-1] in pool["kinds"]:
        return " ".join([rng.choice(pool["stems"]), *words[1:]])
    return rng.choice(pool["fallback"])


def _digits_only(value: str, lists: SurrogateLists, rng: random.Random) -> str | None:
    """DEM and QUANTITY: the numbers change ("45-year-old", "EUR 12,500"), the words stay."""
    return shaped_characters(value, rng) if any(c.isdigit() for c in value) else None


_SHAPERS: dict[str, Callable[[str, SurrogateLists, random.Random], str | None]] = {
    "PERSON": _person,
    "CODE": _code,
    "DATETIME": _date,
    "LOC": _loc,
    "ORG": _org,
    "DEM": _digits_only,
    "QUANTITY": _digits_only,
}


def shaped_entities(
    real: Entities, pools: FictionalPools, lists: SurrogateLists, rng: random.Random
) -> Entities:
    """One distinct fictional value per real value (MISC left out), each in its real value's shape."""
    entities: Entities = []
    for entity_type, value in real:
        if entity_type in EXCLUDED_TYPES:
            continue
        for _ in range(_MAX_DRAWS):
            drawn = shaped_value(entity_type, value, lists, rng) or pools.draw(entity_type, rng)
            if (entity_type, drawn) not in entities and lists.allows(drawn) and pools.allows(drawn):
                entities.append((entity_type, drawn))
                break
        else:
            log.warning(
                "no fictional %s value in the shape of a real one after %d draws", entity_type, _MAX_DRAWS
            )
    return entities


def surrogate_drawer(pools: FictionalPools, lists: SurrogateLists) -> Drawer:
    """The draw for format-preserving surrogates: each real value's shape."""
    return lambda real, rng: shaped_entities(real, pools, lists, rng)


def fictional_drawer(
    codes: pd.DataFrame,
    spans: pd.DataFrame,
    pools_path: str | Path,
    surrogates: str = "paper",
    lists_path: str | Path | None = None,
) -> Drawer:
    """How the corpus's fictional values are drawn (`codes.surrogates`): from the paper's pools, or
    (`format_preserving`) in the shape of each real value; either way nothing that looks like a
    real private value of the corpus."""
    real = corpus_real_values(spans, codes)
    pools = FictionalPools.from_yaml(pools_path).excluding(real, pools_path)
    if surrogates == "paper":
        return pool_drawer(pools)
    if surrogates != "format_preserving" or lists_path is None:
        raise ValueError(f"surrogates {surrogates!r} needs to be paper, or format_preserving with its lists")
    return surrogate_drawer(pools, SurrogateLists.from_yaml(lists_path).excluding(real))


def fictional_codes(
    codes: pd.DataFrame,
    spans: pd.DataFrame,
    pools_path: str | Path,
    seed: int,
    surrogates: str = "paper",
    lists_path: str | Path | None = None,
) -> pd.DataFrame:
    """The fictional codes of one seed, drawn as `fictional_drawer` says."""
    draw = fictional_drawer(codes, spans, pools_path, surrogates, lists_path)
    return fictional_codes_table(codes, draw, seed)
