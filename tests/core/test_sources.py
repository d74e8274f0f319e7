"""Discovery, ignore rules and safe reading on real files in a temp folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cairn.globs import glob_match
from cairn.model import Failure
from cairn.sources import SourceFile, decode, discover, is_within, read_bytes


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def test_default_ignores_and_editor_temp_files(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "a.md": "a",
            "sub/b.org": "b",
            ".git/config.md": "x",
            "node_modules/pkg/readme.md": "x",
            ".obsidian/workspace.md": "x",
            ".trash/old.md": "x",
            ".hidden/note.md": "x",
            "note.md~": "x",
            ".note.md.swp": "x",
            "#autosave.org#": "x",
            "4913": "x",
            "Test.tmp": "x",
            ".~lock.note.md#": "x",
            "image.png": "x",
        },
    )
    found = discover(tmp_path, is_note=lambda rel: rel.endswith((".md", ".org")))
    assert [f.relpath for f in found.files] == ["a.md", "sub/b.org"]
    assert found.attachments == ["image.png"]


def test_include_and_exclude_globs(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.md": "", "archive/old.md": "", "x/archive/y.md": "", "b.org": ""})
    got = discover(tmp_path, exclude=("archive/",))
    assert [f.relpath for f in got.files] == ["a.md", "b.org"]
    got = discover(tmp_path, exclude=("x/archive/",))
    assert [f.relpath for f in got.files] == ["a.md", "archive/old.md", "b.org"]
    got = discover(tmp_path, exclude=("**/archive/**",))
    assert [f.relpath for f in got.files] == ["a.md", "b.org"]
    got = discover(tmp_path, include=("*.org",))
    assert [f.relpath for f in got.files] == ["b.org"]


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("a/b/c.md", "*.md", True),
        ("a/b/c.md", "a/*.md", False),
        ("a/b/c.md", "a/**/*.md", True),
        ("a/b/c.md", "**/c.md", True),
        ("a/b/c.md", "a/", True),
        ("a/b/c.md", "b/", True),  # a folder name matches at any depth, as in .gitignore
        ("a/b/c.md", "c.md/", False),
        ("a/b/c.md", "a/b/", True),
        ("a/b/c.md", "b/c/", False),
        ("x/a/b/c.md", "a/b/", False),  # a pattern with an inner slash is anchored
        ("c.md", "c.m?", True),
        ("c.md", "[ab].md", False),
    ],
)
def test_glob_match(path: str, pattern: str, expected: bool) -> None:
    assert glob_match(path, pattern) is expected


def test_symlinks_outside_are_reported_and_never_followed(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    _tree(vault, {"note.md": "in"})
    _tree(outside, {"secret.md": "out"})
    os.symlink(outside / "secret.md", vault / "leak.md")
    os.symlink(outside, vault / "private-link")
    os.symlink(vault / "note.md", vault / "alias.md")
    os.symlink(vault, vault / "loop")
    found = discover(vault)
    assert [f.relpath for f in found.files] == ["note.md"]
    reasons = {w.path: w.message for w in found.warnings}
    assert "outside the source root" in reasons["leak.md"]
    assert "outside the source root" in reasons["private-link"]
    assert "inside the root" in reasons["alias.md"]
    assert not is_within(vault, vault / "leak.md")
    assert is_within(vault, vault / "alias.md")


def test_decode_normalises_bom_crlf_and_reports_bad_utf8() -> None:
    assert decode(b"\xef\xbb\xbf# T\r\nline\rmore").text == "# T\nline\nmore"
    bad = decode(b"ok\nbad \xff byte\n")
    assert bad.text == "ok\nbad \ufffd byte\n"
    assert bad.warnings and "line 2" in bad.warnings[0]
    assert decode("héllo".encode("utf-16")).text == "héllo"
    with pytest.raises(ValueError, match="NUL"):
        decode(b"PNG\x00\x00\x01")


def test_read_bytes_of_vanished_and_unreadable_files(tmp_path: Path) -> None:
    gone = SourceFile(tmp_path / "gone.md", "gone.md", 1, 0.0)
    res = read_bytes(gone)
    assert isinstance(res, Failure) and "vanished" in res.reason
    folder = tmp_path / "dir.md"
    folder.mkdir()
    res = read_bytes(SourceFile(folder, "dir.md", 0, 0.0))
    assert isinstance(res, Failure)


def test_a_refused_symlink_names_the_root_that_holds_it(tmp_path: Path) -> None:
    from cairn.app import Cairn
    from cairn.config import load_config

    a, b, out = tmp_path / "A", tmp_path / "B", tmp_path / "out"
    for d in (a, b, out):
        d.mkdir()
    (a / "a.md").write_text("# a\n", encoding="utf-8")
    (b / "b.md").write_text("# b\n", encoding="utf-8")
    (out / "secret.md").write_text("# s\n", encoding="utf-8")
    (b / "esc").symlink_to(out, target_is_directory=True)
    (a / "dead").symlink_to(tmp_path / "missing")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        run = c.index([a, b])
    messages = {w.path: w.message for w in run.warnings}
    assert "outside the source root" in messages["esc"]
    assert messages["esc"].endswith(f"root {b.resolve()}; skipped")
    assert f"in {a.resolve()};" in messages["dead"]
