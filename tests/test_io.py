"""All-or-nothing outputs: written whole or not at all, with the permissions of any new file."""

from __future__ import annotations

import os
import stat

import pytest

from plainsight.io import atomic_path, write_text


def test_an_output_gets_the_permissions_of_a_new_file(tmp_path):
    old = os.umask(0o022)
    try:
        write_text("x", tmp_path / "out.txt")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == 0o644


def test_a_failed_block_leaves_no_output_and_no_temporary_file(tmp_path):
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "out.txt") as staged:
        staged.write_text("half", encoding="utf-8")
        raise RuntimeError("stopped")
    assert list(tmp_path.iterdir()) == []
