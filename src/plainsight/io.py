"""File helpers: strict reading of user files and all-or-nothing writing of outputs."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.errors import InputError, empty_file


def read_text_utf8(path: str | Path) -> str:
    """Read a text file (a leading byte-order mark is skipped), failing with the byte offset when it is
    not UTF-8."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(path, f"byte {err.start}", "file is not valid UTF-8") from None


def read_json(path: str | Path) -> Any:
    text = read_text_utf8(path)
    if not text.strip():
        raise empty_file(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            path, f"line {err.lineno} column {err.colno}", f"malformed JSON: {err.msg}"
        ) from None


def read_benchmark(path: str | Path, columns: Sequence[str]) -> pd.DataFrame:
    """A Snakemake benchmark file (one row per repeat; "NA" or "-" where a value could not be measured),
    failing with one line when it lacks any of `columns` or a row."""
    try:
        frame = pd.read_csv(path, sep="\t", na_values=["NA", "-"])
    except pd.errors.EmptyDataError:
        raise empty_file(path) from None
    missing = sorted(set(columns) - set(frame.columns))
    if missing or frame.empty:
        raise InputError(path, None, f"not a Snakemake benchmark file (no {', '.join(missing) or 'row'})")
    return frame


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` only if the block succeeds."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp makes the file private (0600); an output gets the permissions any new file would
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary directory beside `path`; it replaces `path` (whatever was there) only
    if the block succeeds. On failure it is removed and `path` stays as it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent))
    # mkdtemp makes the directory private (0700); an output gets the permissions any new one would
    os.chmod(staging, 0o777 & ~_umask())
    try:
        yield staging
        _replace_directory(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _replace_directory(staging: Path, target: Path) -> None:
    """Rename `staging` to `target`; an existing target (which a rename cannot replace when it is a
    non-empty directory) is moved aside first and put back if the rename fails."""
    if not target.exists() and not target.is_symlink():
        os.replace(staging, target)
        return
    old = staging.with_name(staging.name + ".old")  # unique as `staging` is
    os.replace(target, old)
    try:
        os.replace(staging, target)
    except BaseException:
        os.replace(old, target)
        raise
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old, ignore_errors=True)
    else:
        old.unlink()


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def write_text(text: str, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(obj: Any, path: str | Path) -> None:
    write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", path)
