"""The canary table: results/tables/canaries.{csv,md}, one row per run, trained method and insertion count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.io import atomic_path, write_text


def canary_table(reports: Sequence[str], runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Per run, method and insertion count: the canaries, their mean and largest exposure, and the
    generations holding a secret (`reports` parallel to `runs`)."""
    frames = [pd.read_parquet(path).assign(**run) for path, run in zip(reports, runs)]
    rows = pd.concat(frames, ignore_index=True)
    keys = ["dataset", "setting", "idset", "method", "seed", "repeats"]
    table = (
        rows.groupby(keys, sort=False)
        .agg(
            canaries=("secret", "size"),
            mean_exposure=("exposure", "mean"),
            max_exposure=("exposure", "max"),
            exposure_bound=("max_exposure", "first"),
            generations_with_secret=("generations_with_secret", "sum"),
            generations=("generations", "first"),
        )
        .reset_index()
    )
    return table


def canary_markdown(table: pd.DataFrame) -> str:
    lines = [
        "### Canary exposure",
        "",
        "| Run | Method | Seed | Inserted in | Canaries | Mean exposure | Largest "
        "| Generations with a secret |",
        "| :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in table.itertuples(index=False):
        lines.append(
            f"| {row.dataset} {row.setting} {row.idset} | {row.method} | {row.seed} | {row.repeats} docs | "
            f"{row.canaries} | {row.mean_exposure:.2f} | {row.max_exposure:.2f} | "
            f"{row.generations_with_secret} of {row.generations} |"
        )
    bound = table["exposure_bound"].max() if len(table) else float("nan")
    lines += [
        "",
        f"Exposure is log2 |R| - log2 rank of the secret among all {bound:.1f}-bit secrets, its rank "
        "estimated from uniformly drawn candidates (Carlini et al. 2019): 0 means the adapter prefers the "
        "secret no more than a random one; the largest possible value is log2 |R|. Each method's adapter "
        "is trained on the fine-tuning set with the canaries in it, with that method's own settings.",
        "",
    ]
    return "\n".join(lines)


def write_canary_table(
    reports: Sequence[str], runs: Sequence[Mapping[str, Any]], csv_path: str | Path, markdown_path: str | Path
) -> None:
    """Rule `canary_table`."""
    table = canary_table(reports, runs)
    with atomic_path(csv_path) as staged:
        table.to_csv(staged, index=False)
    write_text(canary_markdown(table), markdown_path)
