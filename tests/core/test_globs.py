"""Unusable ``--include``/``--exclude`` globs are refused before anything changes, and
never cost indexed files: not at registration, not when a root registered with one
(by an older cairn) is indexed again, not when the mass-delete guard stops a run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import ConfigError
from cairn.globs import glob_match, glob_problem
from cairn.ingest.limits import MassDelete
from cairn.model import SourceRoot


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("[", "never closed"),
        ("notes/[draft", "position 7"),
        ("[]", "never closed"),
        ("[!]", "never closed"),
        ("[z-a]", "bad character range z-a"),
        ("", "empty"),
        ("  ", "empty"),
        ("/", "empty"),
        ("../elsewhere/*.md", "'..'"),
    ],
)
def test_unusable_globs_say_why(pattern: str, reason: str) -> None:
    why = glob_problem(pattern)
    assert why is not None and reason in why


@pytest.mark.parametrize("pattern", ["*.md", "[]]x", "[[]x", "[!a]*", "[^a]*", "/drafts",
                                     "**/", "a[&&]b", "notes/archive/"])
def test_usable_globs_pass(pattern: str) -> None:
    assert glob_problem(pattern) is None


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("]x", "[]]x", True),  # a ']' first in a class is literal (POSIX, fnmatch)
        ("[x", "[[]x", True),
        ("a&b", "a[&&]b", True),  # regex set syntax is literal in a glob
        ("^.md", "[x^].md", True),
        ("b.md", "[^a].md", True),  # '^' negates, as in .gitignore
        ("a.md", "[^a].md", False),
        ("drafts/a.md", "/drafts", True),  # a leading '/' anchors to the root
        ("x/drafts", "/drafts", False),
        ("x/drafts", "drafts", True),  # (a folder, as discovery asks)
        ("a.md", "[z-a].md", False),  # refused at registration; never raises here
    ],
)
def test_glob_match_classes_and_anchors(path: str, pattern: str, expected: bool) -> None:
    assert glob_match(path, pattern) is expected


def _notes(tmp_path: Path, n: int = 3) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(n):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nbody {i}\n")
    return folder


def _indexed(c: Cairn) -> set[str]:
    return {d.path for r in c.store.roots() for d in c.store.documents_of_root(r.id)}


def test_a_bad_include_on_the_cli_is_an_error_and_changes_nothing(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    folder, db = _notes(tmp_path), tmp_path / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([folder], embed=False)
    res = cli("--db", str(db), "index", str(folder), "--include", "[", "--no-embed", "--json",
              check=False)
    assert res.code == 2, res.stdout + res.stderr
    data = json.loads(res.stdout)
    assert data["type"] == "ConfigError"
    assert "--include '['" in data["error"] and "never closed" in data["error"]
    with Cairn(load_config(db=db)) as c:
        assert _indexed(c) == {"n0.md", "n1.md", "n2.md"}
        assert [(r.include, r.exclude) for r in c.store.roots()] == [((), ())]


def test_a_root_stored_with_a_bad_glob_fails_and_keeps_its_files(tmp_path: Path) -> None:
    folder = _notes(tmp_path)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([folder], embed=False)
        (root,) = c.store.roots()
        # as an older cairn registered it
        c.store.upsert_root(SourceRoot(root.id, root.path, ("[",), ()))
        run = c.index(embed=False)
        assert run.removed == 0 and _indexed(c) == {"n0.md", "n1.md", "n2.md"}
        assert any("--include '['" in f.reason for f in run.failures), run.failures
        # the watcher's path (one file) is refused the same way
        (folder / "n0.md").write_text("# Note 0\n\nchanged\n")
        run = c.index_paths([folder / "n0.md"])
        assert run.removed == 0 and "n0.md" in _indexed(c)
        with pytest.raises(ConfigError):
            c.index([folder], exclude=["[z-a]"], embed=False)
        c.index([folder], embed=False)  # usable globs (none) make it whole again
        assert [(r.include, r.exclude) for r in c.store.roots()] == [((), ())]


def test_a_refused_run_keeps_the_globs_the_root_had(tmp_path: Path) -> None:
    """``--include '*.mdx'`` (usable, matching nothing) on a large root: the mass-delete
    guard stops the run, and the root is not left registered with the new glob (a plain
    ``cairn index`` would otherwise be refused forever)."""
    folder = _notes(tmp_path, 12)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([folder], embed=False)
        with pytest.raises(MassDelete):
            c.index([folder], include=["*.mdx"], embed=False)
        assert [(r.include, r.exclude) for r in c.store.roots()] == [((), ())]
        run = c.index(embed=False)
        assert run.removed == 0 and len(_indexed(c)) == 12
