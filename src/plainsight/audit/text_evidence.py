"""The evidence of a text membership attack that the release gate judges, torch-free for the table jobs.

The `text_membership` criterion judges every attack of `TEXT_ATTACKS`, each declared once with the
columns that name it: the nearest synthetic document's cosine and shared n-gram of each real segment
(`plainsight.audit.released`), and the rare evidence a unit shares with its best-matching generation
(`plainsight.audit.reidentification`). A new attack is one `TextAttack` here and the job that writes its
columns.

Members and held-out segments of a given split differ by construction (splits, lengths, storylines), so a
corpus written without private data already scores an AUC away from 0.5 on them. Where the run has that
negative control (`plainsight.audit.released.versus_negative_control`), the gate judges the bias-corrected
AUC, 0.5 plus the excess of the corpus's AUC over the control's, with the bounds of that paired excess: an
approximation whose upper bound misses more often than its level (AUCs do not add). Where the dataset's
units were drawn into their splits by a coin (`split: coin`), members and held-out texts are exchangeable
by design and the gate judges the attack's own AUC against 0.5, the negative control's shown beside it;
a record without a control is judged on its raw AUC too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real
from typing import Any

REIDENTIFICATION = "reidentification"


@dataclass(frozen=True)
class TextAttack:
    """A membership attack on the released text: its AUC is `text_mia_auc_<name>` (with `_low`, `_high`
    and, beside a negative control, `_negative`), its excess over that control `text_mia_excess_<name>`."""

    name: str

    def auc_column(self, suffix: str = "") -> str:
        return f"text_mia_auc_{self.name}{suffix}"

    def excess_column(self, suffix: str = "") -> str:
        return f"text_mia_excess_{self.name}{suffix}"


TEXT_ATTACKS = (TextAttack("cosine"), TextAttack("ngram"), TextAttack(REIDENTIFICATION))
TEXT_MEMBERSHIP_ATTACKS = tuple(attack.name for attack in TEXT_ATTACKS)


def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and not math.isnan(float(value))


SPLIT_COLUMN = "text_mia_split"  # the dataset's `split` the members and held-out texts were drawn by
COIN = "coin"


def judged_beside_control(row: Mapping[str, Any], attack: str) -> bool:
    """Whether the gate judges the attack beside its negative control: the row holds the excess over it (a
    bound that is a number) and its split was not drawn by a coin."""
    if row.get(SPLIT_COLUMN) == COIN:
        return False
    return any(_number(row.get(TextAttack(attack).excess_column(f"_{side}"))) for side in ("low", "high"))


def text_membership_bounds(row: Mapping[str, Any], attack: str) -> tuple[Any, Any, str]:
    """(low, high, what) of a text attack's AUC as the gate judges it: 0.5 plus the bounds of its excess
    over the negative control where the row has one, else the raw AUC's bounds. A missing or non-numeric
    bound is passed on as it is, for the gate to take as no evidence."""
    columns = TextAttack(attack)
    if not judged_beside_control(row, attack):
        drawn = ", members and held-out drawn by a coin" if row.get(SPLIT_COLUMN) == COIN else ""
        return (
            row.get(columns.auc_column("_low")),
            row.get(columns.auc_column("_high")),
            f"text membership AUC ({attack}{drawn})",
        )
    low, high = (row.get(columns.excess_column(f"_{side}")) for side in ("low", "high"))
    return (
        0.5 + low if _number(low) else None,
        0.5 + high if _number(high) else None,
        f"text membership AUC ({attack}) beyond the negative control",
    )


def membership_size_columns(row: Mapping[str, Any], attack: str) -> tuple[str, str]:
    """The columns of the members and held-out texts that an attack's AUC compares: its own where the row
    has them (the re-identification attack ranks units: `text_mia_reidentification_members`,
    `_non_members`), else those of the nearest-document attacks' segments."""
    own = (f"text_mia_{attack}_members", f"text_mia_{attack}_non_members")
    return own if own[0] in row else ("text_mia_members", "text_mia_non_members")
