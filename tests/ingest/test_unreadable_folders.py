"""A folder that cannot be listed hides its files; an index run keeps what it indexed
from them (they are not gone) and says which folder it could not read, instead of
stopping with the mass-delete guard or removing them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn import sources
from cairn.app import Cairn
from cairn.config import Config


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "top.md").write_text("# Top\nalpha\n", encoding="utf-8")
    for i in range(12):
        (root / "sub" / f"n{i}.md").write_text(f"# N{i}\nbeta {i}\n", encoding="utf-8")
    return root


@pytest.fixture
def hide(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """Folders (absolute paths) whose listing fails with EACCES, as a folder whose
    permissions were taken away does (root ignores permission bits, so the failure is
    raised where the walk lists a folder)."""
    hidden: set[str] = set()
    real = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        if os.fspath(path) in hidden:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(sources.os, "scandir", scandir)
    yield hidden


def test_files_of_an_unreadable_folder_are_kept_and_the_folder_named(
    tmp_path: Path, hide: set[str]
) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db", embed={"provider": "none"})) as c:
        c.index([str(root)], embed=False)
        assert len(c.search("beta", mode="keyword", limit=50).hits) == 12
        hide.add(str((root / "sub").resolve()))
        run = c.index([str(root)], embed=False)
        assert run.removed == 0
        assert any(
            w.path == "sub" and "not readable" in w.message and "kept" in w.message
            for w in run.warnings
        ), run.warnings
        assert len(c.search("beta", mode="keyword", limit=50).hits) == 12
        hide.clear()  # readable again: nothing to do, nothing lost
        run = c.index([str(root)], embed=False)
        assert (run.removed, run.failed) == (0, 0)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_a_folder_without_permissions_keeps_its_files(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db", embed={"provider": "none"})) as c:
        c.index([str(root)], embed=False)
        (root / "sub").chmod(0)
        try:
            run = c.index([str(root)], embed=False)
        finally:
            (root / "sub").chmod(0o755)
        assert run.removed == 0
