"""The class of each real value a generation holds, from its per-generation metrics
(`plainsight.evaluation.held_out`): `source_specific` when no real segment outside the generation's
source (its context segments, or the fine-tuning set) holds the value, `common` otherwise.

The metrics class every whole direct or quasi value of the source found in the text
(`leaked_identifier_values`, `leaked_value_classes`). A value the exact, partial or near leaks found
(`leaked_values`, `near_leaked_values`) takes the class of the same value; a name word is `common`
when it is a word of a common value the generation holds (the segment that holds the value holds
the word); any other (a near variant, a name word alone) is unclassed, and a release that keeps only
common values counts it as source-specific.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from plainsight.evaluation.held_out import COMMON
from plainsight.matching import fold, folded_words, normalise_value

# The real values a generation holds, by the leak measure that found them.
HELD_VALUE_COLUMNS = ("leaked_values", "near_leaked_values", "leaked_identifier_values")


def listed(value: Any) -> list[Any]:
    """A list cell of a metrics frame as a list (None or NaN where the column is missing: empty)."""
    return [] if value is None or (isinstance(value, float) and math.isnan(value)) else list(value)


def _key(value: str) -> str:
    return fold(normalise_value(value))


def classes_by_value(metrics_row: Mapping[str, Any]) -> dict[str, str]:
    """Folded value -> class, of the identifier values the metrics class."""
    return {
        _key(value): str(cls)
        for value, cls in zip(
            listed(metrics_row.get("leaked_identifier_values")),
            listed(metrics_row.get("leaked_value_classes")),
        )
    }


def value_class(value: str, classes: Mapping[str, str]) -> str | None:
    """The class of a value a leak measure found: that of the same classed value, `common` for a word
    of a common value, else None (unclassed)."""
    key = _key(value)
    if key in classes:
        return classes[key]
    common_words = {word for other, cls in classes.items() if cls == COMMON for word in folded_words(other)}
    return COMMON if key in common_words else None


def holds_source_specific(metrics_row: Mapping[str, Any]) -> bool:
    """Whether a generation holds a real value of its source that is not known to be common."""
    classes = classes_by_value(metrics_row)
    held = [value for column in HELD_VALUE_COLUMNS for value in listed(metrics_row.get(column))]
    return any(value_class(value, classes) != COMMON for value in held)
