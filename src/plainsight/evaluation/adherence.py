"""Control-code adherence: whether a generation uses the fictional code it was written from.

A privacy number over text that ignores its code says less than it seems: a generation that writes
none of its fictional values cannot leak in their place either. Per generation:

- `adherence_exact`: the share of its fictional values that occur in the text as whole words
  (`plainsight.matching.leaked_values`, the leak metrics' own match);
- `adherence_near`: the share that occur exactly or as a near variant (`NearMatcher`);
- `adherence_types`: the share of its code's entity types of which at least one value occurs
  (near).

A generation without fictional values (a method that shows no code, such as the baseline) has
NaN for all three.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from plainsight.matching import NearMatcher, leaked_values, normalise_value, unique_values

ADHERENCE_COLUMNS: tuple[str, ...] = ("adherence_exact", "adherence_near", "adherence_types")


def fictional_pairs(corpus_row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (type, value) pairs of a generation's fictional code; none where the prompt showed no code."""
    if not corpus_row.get("fictional_code"):
        return []
    return [
        (str(entity["type"]), str(entity["value"])) for entity in corpus_row.get("fictional_entities", [])
    ]


def code_adherence(text: str, pairs: Iterable[tuple[str, str]]) -> dict[str, float]:
    """The adherence columns of one text to the (type, value) pairs of its code."""
    pairs = list(pairs)
    values = unique_values(value for _, value in pairs)
    if not values:
        return dict.fromkeys(ADHERENCE_COLUMNS, math.nan)
    near = set(NearMatcher(values).found(text))
    types = {entity_type for entity_type, _ in pairs}
    present_types = {entity_type for entity_type, value in pairs if normalise_value(value) in near}
    return {
        "adherence_exact": len(leaked_values(text, values)) / len(values),
        "adherence_near": len(near) / len(values),
        "adherence_types": len(present_types) / len(types),
    }


def corpus_adherence(corpus: pd.DataFrame) -> pd.DataFrame:
    """One row of adherence columns per generation of a synthetic corpus, in its row order."""
    rows = [code_adherence(row["text"], fictional_pairs(row)) for row in corpus.to_dict("records")]
    return pd.DataFrame(rows, columns=list(ADHERENCE_COLUMNS), index=corpus.index, dtype=float)


def found_types(text: str, pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The entity type of every distinct fictional value the text holds (near), once per value."""
    type_of = {normalise_value(value): entity_type for entity_type, value in pairs}
    if not type_of:
        return []
    return [type_of[value] for value in NearMatcher(list(type_of)).found(text)]
