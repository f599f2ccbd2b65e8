"""All-or-nothing outputs: written whole or not at all, with the permissions of any new file."""

from __future__ import annotations

import os
import stat

import pytest

from plainsight.errors import InputError
from plainsight.io import atomic_directory, atomic_path, read_json, write_text


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


def test_a_directory_replaces_the_old_one_whole(tmp_path):
    target = tmp_path / "adapter"
    target.mkdir()
    (target / "old.json").write_text("old", encoding="utf-8")
    with atomic_directory(target) as staged:
        assert staged.parent == tmp_path and staged != target and list(staged.iterdir()) == []
        (staged / "new.json").write_text("new", encoding="utf-8")
        assert (target / "old.json").read_text(encoding="utf-8") == "old"  # untouched until the end
    assert [path.name for path in tmp_path.iterdir()] == ["adapter"]
    assert [path.name for path in target.iterdir()] == ["new.json"]


def test_a_new_directory_gets_the_permissions_of_a_new_directory(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_directory(tmp_path / "deep" / "site") as staged:
            (staged / "a.js").write_text("x", encoding="utf-8")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "deep" / "site").stat().st_mode) == 0o755
    assert (tmp_path / "deep" / "site" / "a.js").read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("existing", [True, False], ids=["old target", "no target"])
def test_a_failed_directory_block_leaves_the_old_target_and_no_temporary_directory(tmp_path, existing):
    target = tmp_path / "data"
    if existing:
        target.mkdir()
        (target / "old.js").write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_directory(target) as staged:
        (staged / "half.js").write_text("half", encoding="utf-8")
        raise RuntimeError("stopped")
    assert [path.name for path in tmp_path.iterdir()] == (["data"] if existing else [])
    if existing:
        assert [path.name for path in target.iterdir()] == ["old.js"]
        assert (target / "old.js").read_text(encoding="utf-8") == "old"


def test_a_failed_rename_puts_the_old_target_back(tmp_path, monkeypatch):
    target = tmp_path / "data"
    target.mkdir()
    (target / "old.js").write_text("old", encoding="utf-8")
    real_replace = os.replace

    def failing_replace(source, destination):
        if str(source).endswith(".part"):  # the staged directory's rename onto the target
            raise OSError("disk gone")
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk gone"), atomic_directory(target) as staged:
        (staged / "new.js").write_text("new", encoding="utf-8")
    assert [path.name for path in tmp_path.iterdir()] == ["data"]
    assert [path.name for path in target.iterdir()] == ["old.js"]


@pytest.mark.parametrize("text", ["", " \n\n"])
def test_an_empty_json_file_is_named_as_empty_not_malformed(tmp_path, text):
    path = tmp_path / "echr_dev.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_json(path)
    assert str(error.value) == f"{path}: the file is empty: it holds no record"
