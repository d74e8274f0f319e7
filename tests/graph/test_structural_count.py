"""The edge count a graph update reports counts the structural (outline) edges of the
documents that changed, not of every document again (that recount was a quarter of a
``remember`` at 12,000 notes); the total stays exact through edits and removals."""

from __future__ import annotations

from pathlib import Path

from cairn.app import Cairn
from cairn.config import Config
from cairn.store.sql.outline import outline_counts


def _note(i: int, headings: int) -> str:
    return f"# Note {i}\n\nIntro.\n\n" + "".join(
        f"## Part {j}\n\nText {j}.\n\n### Deeper {j}\n\nMore.\n\n" for j in range(headings))


def _exact(c: Cairn) -> int:
    db = c.store.edges.db  # type: ignore[attr-defined]
    stored = int(db.execute("SELECT count(*) FROM edges").fetchone()[0])
    return stored + sum(outline_counts(db).values())


def test_edge_total_is_exact_and_recounts_only_what_changed(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    for i in range(30):
        (vault / f"n{i:02}.md").write_text(_note(i, 2), encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        run = c.index([vault], embed=False)
        assert run.graph is not None and run.graph.edges == _exact(c) > 0
        db = c.store.edges.db  # type: ignore[attr-defined]
        outline_sql: list[str] = []
        db.set_trace_callback(lambda q: outline_sql.append(q) if "OVER (" in q else None)
        (vault / "n07.md").write_text(_note(7, 5), encoding="utf-8")  # more headings
        run = c.index([vault], embed=False)
        db.set_trace_callback(None)
        assert run.graph is not None and run.graph.edges == _exact(c)
        changed = c.store.documents_at(c.roots()[0].id, "n07.md")[0].id
        # the count read the changed note's outline only (was: every outline)
        counting = [q for q in outline_sql if "GROUP BY document_id" in q]
        assert counting and all(f"IN ('{changed}')" in q for q in counting), counting
        (vault / "n03.md").unlink()
        run = c.index([vault], embed=False)
        assert run.graph is not None and run.graph.edges == _exact(c)
        assert c.store.edges.size()[0] == _exact(c)
