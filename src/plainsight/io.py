"""File helpers: strict reading of user files and all-or-nothing writing of outputs."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.errors import InputError


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
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            path, f"line {err.lineno} column {err.colno}", f"malformed JSON: {err.msg}"
        ) from None


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


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def write_text(text: str, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(obj: Any, path: str | Path) -> None:
    write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", path)
