"""What a release bundle ships, decided once per seed (rule `release_filter`): each generation's leak
flags, the drop rule applied, and the kept rows under results/{dataset}/{setting}/{idset}/release/{method}/.

`release.drop` picks what is left out: `any_identifier` (every generation in which the leak metrics
found an exact, partial or near leak, or that holds any real direct or quasi identifier of the corpus,
of any document whatever the identifier set of the run), `source_specific` (every generation holding
a real value of its source that is not known to be common: `plainsight.report.leak_classes`) or
`none`. The bundle (`plainsight.report.release`) ships the kept rows and its audit
(`plainsight.report.bundle_audit`, rule `release_audit`) judges the same rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from plainsight.codes.control_code import records_to_entities
from plainsight.entities import IDENTIFIER_SETS
from plainsight.evaluation.measures import LeakMeasure, leak_measures
from plainsight.io import write_parquet
from plainsight.matching import leaked_values, unique_values
from plainsight.report.leak_classes import HELD_VALUE_COLUMNS, holds_source_specific

# The measure a bundle matches against every document of the corpus, not only against the generation's
# source: the bundle leaves out a real identifier wherever it comes from.
CORPUS_WIDE_MEASURE = "any_identifier"


HOLDS_SOURCE_SPECIFIC = "source_specific"


DROP_RULES = ("any_identifier", "source_specific", "none")


def drop_measures() -> tuple[LeakMeasure, ...]:
    """The leak measures whose hits `release.drop: any_identifier` leaves out, in their columns' order."""
    return tuple(m for m in leak_measures() if m.drop_reason)


def drop_rule(drop: str) -> str:
    """What `release.drop` leaves out, in words."""
    return {
        "any_identifier": "every generation with " + "; ".join(m.drop_reason for m in drop_measures()),
        "source_specific": "every generation holding a real value of its source that no real segment outside "
        "its source is known to hold (exact, partial and near leaks whose value is not common included)",
        "none": "nothing",
    }[drop]


def corpus_identifiers(spans: pd.DataFrame, codes: pd.DataFrame) -> list[str]:
    """Every real direct or quasi value of the corpus: gold spans and (unknown setting) the codes' values."""
    gold = spans[spans["identifier_type"].isin(IDENTIFIER_SETS["both"])]["text"]
    found = [value for records in codes["entities"] for _, value in records_to_entities(records)]
    return unique_values([*gold, *found])


def generation_leak_flags(
    corpora: pd.DataFrame, metrics: pd.DataFrame, identifiers: Sequence[str]
) -> pd.DataFrame:
    """Per generation (row of `corpora`), which leak measures hit it (the corpus-wide one against
    `identifiers`, every real identifier of the corpus) and whether it holds a source-specific value;
    metrics joined by (seed, generation_id)."""
    from_metrics = [m for m in drop_measures() if m.name != CORPUS_WIDE_MEASURE]
    hit_columns = [m.member_column for m in from_metrics]
    wanted = [*hit_columns, *HELD_VALUE_COLUMNS, "leaked_value_classes"]
    missing = [column for column in wanted if column not in metrics]
    if missing:
        raise ValueError(f"the per-generation metrics lack {missing}: rerun rule privacy_metrics")
    keys = ["seed", "generation_id"]
    joined = corpora[keys].merge(metrics[[*keys, *wanted]], on=keys, how="left", validate="one_to_one")
    if joined[hit_columns].isna().any().any():
        raise ValueError("a generation has no row in its corpus's per-generation metrics")
    flags = pd.DataFrame({m.name: joined[m.member_column].astype(bool) for m in from_metrics})
    if any(m.name == CORPUS_WIDE_MEASURE for m in drop_measures()):
        flags[CORPUS_WIDE_MEASURE] = [bool(leaked_values(text, identifiers)) for text in corpora["text"]]
    flags[HOLDS_SOURCE_SPECIFIC] = [holds_source_specific(row) for row in joined.to_dict("records")]
    return flags[[*(m.name for m in drop_measures()), HOLDS_SOURCE_SPECIFIC]]


def dropped(flags: pd.DataFrame, drop: str) -> np.ndarray:
    """Which generations `release.drop` leaves out."""
    if drop == "any_identifier":
        return flags[[m.name for m in drop_measures()]].any(axis=1).to_numpy()
    if drop == "source_specific":
        return flags[HOLDS_SOURCE_SPECIFIC].to_numpy(dtype=bool)
    return np.zeros(len(flags), dtype=bool)


FILTER_KEYS = ("seed", "generation_id")


def release_filter(
    corpus: pd.DataFrame, metrics: pd.DataFrame, spans: pd.DataFrame, codes: pd.DataFrame, drop: str
) -> pd.DataFrame:
    """The one decision of what a bundle ships: per generation of `corpus` (seed, generation_id), the
    leak flags the card counts (`generation_leak_flags`), the drop rule applied and whether it leaves
    the generation out (`left_out`)."""
    flags = generation_leak_flags(corpus, metrics, corpus_identifiers(spans, codes))
    keys = corpus.loc[:, list(FILTER_KEYS)].reset_index(drop=True)
    return pd.concat([keys, flags], axis=1).assign(drop=drop, left_out=dropped(flags, drop))


def kept_rows(corpus: pd.DataFrame, filtered: pd.DataFrame) -> pd.DataFrame:
    """The generations of `corpus` that `filtered` (`release_filter` of it) keeps, with every column of
    the corpus: what the bundle ships and its audit reads."""
    return corpus.reset_index(drop=True)[~filtered["left_out"].to_numpy(bool)].reset_index(drop=True)


def write_kept(
    corpus: pd.DataFrame,
    metrics: pd.DataFrame,
    spans: pd.DataFrame,
    codes: pd.DataFrame,
    drop: str,
    paths: Mapping[str, str | Path],
) -> None:
    """Rule `release_filter`: one seed's kept rows (`kept`) and the filter's record of every generation
    (`filter`)."""
    filtered = release_filter(corpus, metrics, spans, codes, drop)
    write_parquet(kept_rows(corpus, filtered), paths["kept"])
    write_parquet(filtered, paths["filter"])


def read_seeds(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Per-seed files of a bundle (kept rows, filter records) as one frame, in the order given: the
    bundle and its audit read the kept rows through it alike."""
    return pd.concat([pd.read_parquet(path) for path in paths], ignore_index=True)
