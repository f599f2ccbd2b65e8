"""Utility metrics of a synthetic corpus: which real text they are measured on, and their records.

Per method and seed, `utility/{method}/seed{seed}.json` holds the perplexity of a model
fine-tuned on the corpus (on the real test split) and MAUVE between texts the method
writes from real test codes and those real test segments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.evaluation.privacy import AVERAGED_SEGMENT
from plainsight.io import read_json

UTILITY_METRICS: tuple[str, ...] = ("perplexity", "mauve")
BASE_MODEL_METHOD = "base_model"  # the method key of the reference row: the configured model, not fine-tuned


def summary_rows(paths: Iterable[str | Path], settings: Iterable[str]) -> pd.DataFrame:
    """Utility records as summary rows (the table builder's shape): one averaged row per run.

    A record without a setting (the base model's, measured once per dataset) gives a row for each of
    `settings`.
    """
    rows = []
    for path in paths:
        record = read_json(path)
        for setting in [record["setting"]] if "setting" in record else settings:
            rows.append(
                {
                    "method": record["method"],
                    "seed": record.get("seed", 0),
                    "setting": setting,
                    "segment": AVERAGED_SEGMENT,
                    **{metric: record.get(metric, float("nan")) for metric in UTILITY_METRICS},
                }
            )
    return pd.DataFrame(rows, columns=["method", "seed", "setting", "segment", *UTILITY_METRICS])


def utility_record(
    method: str, seed: int, setting: str, perplexity: Mapping[str, Any], mauve: Mapping[str, Any]
) -> dict[str, Any]:
    """Rule `utility`: one corpus's perplexity record (less the run's keys, given once) and MAUVE record
    (its keys prefixed `mauve_`) in one record."""
    perplexity = {key: value for key, value in perplexity.items() if key not in ("method", "seed", "setting")}
    mauve = {("mauve" if key == "mauve" else f"mauve_{key}"): value for key, value in mauve.items()}
    return {"method": method, "seed": seed, "setting": setting, **perplexity, **mauve}
