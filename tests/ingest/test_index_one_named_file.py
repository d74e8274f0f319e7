"""``cairn index FOLDER/FILE`` indexes that file, not every file of the same name in
the folders below it (a bare name as an include pattern matches at any depth)."""

from __future__ import annotations

from pathlib import Path

from cairn.app import Cairn


def test_a_named_file_is_the_only_file_indexed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "user").mkdir(parents=True)
    (docs / "index.md").write_text("# Top\n\nthe top index\n", encoding="utf-8")
    (docs / "user" / "index.md").write_text("# User\n\nthe user index\n", encoding="utf-8")
    (docs / "odd[1]*.md").write_text("# Odd\n\nan odd name\n", encoding="utf-8")
    (docs / "odd1x.md").write_text("# Not odd\n\nmatched by the name as a glob\n",
                                   encoding="utf-8")
    with Cairn.open(db=tmp_path / "i.db") as cairn:
        run = cairn.index([docs / "index.md"], embed=False)
        assert (run.seen, run.added) == (1, 1)
        run = cairn.index([docs / "odd[1]*.md"], embed=False)
        paths = sorted(h.path for h in cairn.search("index odd", mode="keyword").hits)
        assert paths == ["index.md", "odd[1]*.md"]


def test_a_named_file_root_is_told_from_a_glob() -> None:
    from cairn.ingest.roots import file_pattern, named_file

    assert named_file(file_pattern("odd[1]*.md")) == "odd[1]*.md"
    assert named_file("index.md") == "index.md"  # as older indexes stored it
    assert named_file("*.md") is None and named_file("notes/") is None
    assert named_file("/a/b.md") is None
