"""The distinctive part of a code value (a case number, phone number, account or ID): its digit run, as
the surname is a person name's. "LY-2022-8363" holds the run of the real "XXX-2022-8363" under another
prefix, and "12345678" the run of "+45 12 34 56 78" written without its spacing: neither is the value,
nor a near variant of it (`plainsight.matching.NearMatcher`), yet both name the same case or line.

- A digit run is digit groups joined by a space, one punctuation mark, or a punctuation mark with a
  space on either side ("2022-8363", "12 34 56 78", "12 / 34"); its digits alone are compared, so
  spacing and punctuation inside it do not matter. A letter, a line break, more separators or "+" ends
  it.
- A code value's distinctive run is its longest digit run of at least `min_digits` digits that is not a
  year or a date ("2022", "2022-03-04", "12/03/2022", "03/2022" are not distinctive); a leading "+" and
  the group after it, a country calling code, are left out, since a number is the same without them.
- A text holds a distinctive run when one of its own digit runs contains those digits in that order:
  "+45 12345678" holds "12345678".

The leak measure `code_part` (`plainsight.evaluation.measures`), ICL-PE's blocker
(`plainsight.generation.blocking`) and the release filter read runs here, with the entity types that
count as codes and the fewest digits from `metrics.code_runs` (`CodeRuns`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plainsight.entities import ENTITY_TYPES

# Groups join over one space, one punctuation mark (not "+", which opens a number of its own), or a
# punctuation mark with a space on either side. A line break or a longer separator ("2019 --- 1234")
# parts two numbers. (The blocker sees line breaks as spaces, so it parts fewer: it blocks more.)
_SPACE = r"[^\S\n]"
_SEPARATOR = rf"(?:{_SPACE}[^\w\s+]?{_SPACE}?|[^\w\s+]{_SPACE}?)"
_RUN = re.compile(rf"\+?\d+(?:{_SEPARATOR}\d+)*")
_GROUP = re.compile(r"\d+")
# Years a text names as years: a 4-digit group in this range is a year, not a serial.
YEARS = range(1900, 2100)


@dataclass(frozen=True)
class CodeRuns:
    """`metrics.code_runs`: which entity types are codes, and the fewest digits of a distinctive run."""

    entity_types: frozenset[str] = frozenset({"CODE"})
    min_digits: int = 4

    def __post_init__(self):
        unknown = sorted(self.entity_types - set(ENTITY_TYPES))
        if unknown:
            raise ValueError(f"code_runs: unknown entity types {unknown}; known: {list(ENTITY_TYPES)}")
        if self.min_digits < 1:
            raise ValueError(f"code_runs: min_digits must be at least 1, not {self.min_digits}")

    @classmethod
    def from_config(cls, code_runs: Mapping[str, Any]) -> CodeRuns:
        return cls(frozenset(code_runs["entity_types"]), int(code_runs["min_digits"]))

    def as_written(self) -> dict[str, Any]:
        """As the config writes it (a job's param, which Snakemake compares to rerun a changed job)."""
        return {"entity_types": sorted(self.entity_types), "min_digits": self.min_digits}

    def distinctive(self, entities: Iterable[tuple[str, str]]) -> list[str]:
        """The distinctive runs of the code values among (entity type, value) pairs, without repeats."""
        runs = (
            distinctive_run(value, self.min_digits)
            for entity_type, value in entities
            if entity_type in self.entity_types
        )
        return list(dict.fromkeys(run for run in runs if run))


# The schema's default: the values of CODE spans, runs of 4 digits or more.
DEFAULT_CODE_RUNS = CodeRuns()


def _groups(run: str) -> list[str]:
    return _GROUP.findall(run)


def _is_year(group: str) -> bool:
    return len(group) == 4 and int(group) in YEARS


def _is_month(group: str) -> bool:
    return len(group) <= 2 and 1 <= int(group) <= 12


def _is_day(group: str) -> bool:
    return len(group) <= 2 and 1 <= int(group) <= 31


def _is_date_year(group: str) -> bool:
    """A year as dates write it: four digits in `YEARS`, or two."""
    return _is_year(group) or len(group) == 2


def is_date_or_year(groups: Sequence[str]) -> bool:
    """Whether the digit groups of a run are a year ("2022"), a month of a year ("03/2022", "2022-03")
    or a date: year first ("2022-03-04", "20220304") or last, day or month first ("12/03/2022",
    "03.12.22", "12032022")."""
    if len(groups) == 1 and len(groups[0]) == 8:
        digits = groups[0]
        return is_date_or_year([digits[:4], digits[4:6], digits[6:]]) or is_date_or_year(
            [digits[:2], digits[2:4], digits[4:]]
        )
    if len(groups) == 1:
        return _is_year(groups[0])
    if len(groups) == 2:
        first, second = groups
        return (_is_month(first) and _is_year(second)) or (_is_year(first) and _is_month(second))
    if len(groups) == 3:
        first, second, third = groups
        year_first = _is_year(first) and _is_month(second) and _is_day(third)
        day_first = _is_day(first) and _is_month(second) and _is_date_year(third)
        month_first = _is_month(first) and _is_day(second) and _is_date_year(third)
        return year_first or day_first or month_first
    return False


def _without_calling_code(run: str) -> list[str]:
    """The groups of a run, its first left out where "+" opens it and more follow (a country code)."""
    groups = _groups(run)
    return groups[1:] if run.startswith("+") and len(groups) > 1 else groups


def distinctive_run(value: str, min_digits: int) -> str | None:
    """The digits of a code value's longest run of `min_digits` digits or more that is not a year or a
    date, its country calling code left out; None where it has none (the earliest of equal length)."""
    candidates = [
        groups
        for groups in map(_without_calling_code, _RUN.findall(value))
        if sum(map(len, groups)) >= min_digits and not is_date_or_year(groups)
    ]
    if not candidates:
        return None
    return "".join(max(candidates, key=lambda groups: sum(map(len, groups))))


def digit_runs(text: str) -> list[str]:
    """The digits of every digit run of a text, in order."""
    return ["".join(_groups(run)) for run in _RUN.findall(text)]


def held_runs(text: str, runs: Iterable[str]) -> list[str]:
    """The distinctive runs (digits) that a digit run of `text` contains, in the order given."""
    own = digit_runs(text)
    return [run for run in dict.fromkeys(runs) if any(run in digits for digits in own)]


def open_run(text: str) -> str:
    """The end of `text` that a digit run written next could go on from: its last run with the
    separator after it, where the text ends in one; "" otherwise. What comes next joins that run
    exactly when `digit_runs(open_run(text) + next)` joins it in `text + next`."""
    found = re.search(rf"\+?\d+(?:{_SEPARATOR}\d+)*(?:{_SEPARATOR})?$", text)
    return found.group(0) if found else ""
