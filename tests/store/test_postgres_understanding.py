"""Query understanding on PostgreSQL: the same values are recognised and the same units
raised as on SQLite (the vocabulary's SQL and the heading probe run on both backends),
and ``created:`` (which a date named in words uses) runs there."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.store import open_store, open_url

LONG = "A desert planet, a spice, a duke and his son, sand and worms and water. " * 12


def _vault(root: Path) -> Path:
    root.mkdir()
    (root / "tagged.md").write_text(f"---\ntags: [books]\ngenre: Sci-fi\n---\n# Dune\n\n{LONG}\n",
                                    encoding="utf-8")
    for i in range(4):
        (root / f"m{i}.md").write_text(f"# Books and sci-fi {i}\n\nbooks, sci-fi, shelves\n",
                                       encoding="utf-8")
    (root / "tasks.org").write_text(
        "#+TODO: TODO INPROGRESS | DONE\n* INPROGRESS Paint the fence\n* Waiting rooms\n"
        "waiting rooms and tasks in progress\n* Journal\n[2023-09-20 Wed] a visit\n",
        encoding="utf-8")
    return root


def _top(c: Cairn, q: str) -> list[tuple[str, list[str]]]:
    hits = c.search(q, mode="keyword", explain=True, limit=5).hits
    return [(h.title, sorted(k for k in dict(h.explain)["summands"] if k.startswith("matched")))
            for h in hits]


def test_same_values_recognised_on_both_backends(tmp_path: Path, pg_url: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_TODAY", "2024-06-01")
    root = _vault(tmp_path / "vault")
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    lite = Cairn(cfg, store=open_store(tmp_path / "index.db"))
    pg = Cairn(cfg, store=open_url(pg_url))
    try:
        lite.index([str(root)])
        pg.index([str(root)])
        for q in ("books", "sci-fi", "tasks in progress", "waiting rooms", "visit September"):
            got = _top(pg, q)
            assert got == _top(lite, q), q
            assert any(m for _, m in got), q
        assert _top(pg, "books")[0][0] == "Dune"
        # a date in words asks created: too, which falls back to the file's day: the
        # four-argument strftime that needs exists on PostgreSQL
        assert pg.search("created:2020..2030 books", mode="keyword").hits
    finally:
        lite.close()
        pg.close()


def test_a_changed_file_is_refiled_on_postgres(tmp_path: Path, pg_url: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The vocabulary is written and replaced with a file's rows on PostgreSQL too: a
    tag added by a one-file change is named, the one it replaced no longer is."""
    monkeypatch.setenv("CAIRN_TODAY", "2024-06-01")
    root = _vault(tmp_path / "vault")
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    with Cairn(cfg, store=open_url(pg_url)) as pg:
        pg.index([str(root)])
        assert _top(pg, "books")[0] == ("Dune", ["matched tag books"])
        (root / "tagged.md").write_text(f"---\ntags: [novels]\n---\n# Dune\n\n{LONG}\n",
                                        encoding="utf-8")
        pg.index([str(root)])
        assert _top(pg, "novels")[0] == ("Dune", ["matched tag novels"])
        assert not any(m for _, m in _top(pg, "books"))
