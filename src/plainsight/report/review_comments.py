"""Reviewers' comments exported from the review page: checked against the corpora they were written
for, gathered into one table, and counted in the tables' notes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from plainsight.errors import InputError
from plainsight.io import read_json, write_parquet
from plainsight.report.review_data import corpus_fingerprint
from plainsight.report.review_site import COMMENTS_FORMAT, VERDICTS, ReviewSubject

COMMENT_COLUMNS: tuple[str, ...] = (
    "dataset",
    "setting",
    "idset",
    "method",
    "seed",
    "generation",
    "verdict",
    "comment",
    "updated",
    "file",
)
LEAKING_VERDICT = "leaks"


def _check_header(path: Path, exported: Any, subject: ReviewSubject, fingerprint: str) -> None:
    if (
        not isinstance(exported, dict)
        or exported.get("format") != COMMENTS_FORMAT
        or not isinstance(exported.get("comments"), list)
    ):
        raise InputError(path, None, "not a review comments file (exported by the review page)")
    theirs = "/".join(str(exported.get(key)) for key in ("dataset", "setting", "idset"))
    if theirs != subject.name or exported.get("fingerprint") != fingerprint:
        raise InputError(
            path,
            None,
            f"written for {theirs} (corpora {exported.get('fingerprint')}), "
            f"not for {subject.name} (corpora {fingerprint})",
        )


def _comment_row(
    path: Path, number: int, comment: Any, sizes: Mapping[tuple[str, int], int]
) -> dict[str, Any]:
    record = f"comment {number}"
    if not isinstance(comment, dict):
        raise InputError(path, record, "expected an object")
    method, seed, generation = comment.get("method"), comment.get("seed"), comment.get("generation")
    if not isinstance(seed, int) or not isinstance(generation, int) or (method, seed) not in sizes:
        raise InputError(path, record, f"no corpus {method!r} seed {seed!r} on this page")
    if not 0 <= generation < sizes[(method, seed)]:
        raise InputError(path, record, f"generation {generation} is not in {method} seed {seed}")
    if comment.get("verdict") not in VERDICTS:
        raise InputError(
            path, record, f"verdict {comment.get('verdict')!r} is not one of {', '.join(VERDICTS)}"
        )
    if not isinstance(comment.get("comment", ""), str):
        raise InputError(path, record, "comment text is not a string")
    return {
        "method": method,
        "seed": seed,
        "generation": generation,
        "verdict": comment["verdict"],
        "comment": comment.get("comment", ""),
        "updated": str(comment.get("updated") or ""),
        "file": path.name,
    }


def read_comment_file(
    path: str | Path, subject: ReviewSubject, fingerprint: str, sizes: Mapping[tuple[str, int], int]
) -> list[dict[str, Any]]:
    """The comments of one exported file; a file for other corpora, or a malformed one, stops here.

    `sizes`: the generations of each (method, seed) corpus on the page.
    """
    path = Path(path)
    exported = read_json(path)
    _check_header(path, exported, subject, fingerprint)
    return [_comment_row(path, n, comment, sizes) for n, comment in enumerate(exported["comments"], start=1)]


def comments_table(
    paths: Sequence[str | Path],
    subject: ReviewSubject,
    fingerprint: str,
    sizes: Mapping[tuple[str, int], int],
) -> pd.DataFrame:
    """Every file's comments; where two files comment on one generation, the later update counts."""
    rows = [
        row
        for path in sorted(map(str, paths))
        for row in read_comment_file(path, subject, fingerprint, sizes)
    ]
    table = pd.DataFrame(
        rows, columns=[c for c in COMMENT_COLUMNS if c not in ("dataset", "setting", "idset")]
    )
    table = table.sort_values("updated", kind="stable").drop_duplicates(
        ["method", "seed", "generation"], keep="last"
    )
    table.insert(0, "idset", subject.idset)
    table.insert(0, "setting", subject.setting)
    table.insert(0, "dataset", subject.dataset)
    table = table.astype({"seed": "int64", "generation": "int64"})
    return table.sort_values(["method", "seed", "generation"]).reset_index(drop=True)[list(COMMENT_COLUMNS)]


def read_comments(paths: Sequence[str | Path]) -> pd.DataFrame | None:
    """The comments tables at `paths` (rule `review_comments`) as one frame; None where none is given."""
    return pd.concat([pd.read_parquet(path) for path in paths], ignore_index=True) if paths else None


def _counts(comments: pd.DataFrame) -> str:
    leaking = int((comments["verdict"] == LEAKING_VERDICT).sum())
    return f"{len(comments)} reviewed, {leaking} marked as leaking"


def review_notes(comments: pd.DataFrame, methods: Mapping[str, str]) -> list[str]:
    """A table note with the reviewed generations, overall and per method (display names), where any."""
    if comments.empty:
        return []
    per_method = [
        f"{display} {_counts(comments[comments['method'] == key])}"
        for key, display in methods.items()
        if (comments["method"] == key).any()
    ]
    return [f"Review page: {_counts(comments)} ({'; '.join(per_method)})."]


def write_comments_table(
    paths: Sequence[str | Path],
    subject: ReviewSubject,
    corpora: Sequence[tuple[str, int, str | Path]],
    output: str | Path,
) -> pd.DataFrame:
    """The comments of `paths` for the page of `corpora` ((method, seed, corpus file), in page order),
    written to `output` (an empty table when no file is there)."""
    fingerprint = corpus_fingerprint([path for *_, path in corpora])
    sizes = {(method, int(seed)): pq.ParquetFile(path).metadata.num_rows for method, seed, path in corpora}
    table = comments_table(paths, subject, fingerprint, sizes)
    write_parquet(table, output)
    return table
